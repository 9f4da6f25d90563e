"""Legal actions of a batch, as the mask of :class:`~.state.BatchState`.

Each phase's actions come from table gathers over the games in that phase:
ring placements from the empty points; ring moves by walking the six rays of
the player's five rings at once (cumulative sums along each ray say where a
ring is stopped, where it has jumped markers, and where it must land); rows
from the 123 five-point segments; ring removals from the ring points.
"""

from __future__ import annotations

import numpy as np

from ..actions import PASS_ACTION, RING_OFFSET, ROW_OFFSET
from ..geometry import N_POINTS
from ..vocabulary import Phase
from .state import BatchState
from .tables import (
    BLOCK,
    EMPTY,
    MARKER_B,
    MARKER_CODE,
    MARKER_W,
    OFF,
    RAY_ACTIONS,
    RAY_POINTS,
    SEGMENT_POINTS,
)

__all__ = ["has_row", "move_destinations", "refresh_mask", "rows_of"]


def rows_of(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n, 123) bool: which segments hold five markers of ``code`` (one code per game)."""
    segments = cells[:, SEGMENT_POINTS]  # (n, 123, 5)
    return np.asarray((segments == code[:, None, None]).all(axis=2))


def has_row(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n,) bool: whether each game has five markers of its ``code`` in a row."""
    return np.asarray(rows_of(cells, code).any(axis=1))


def move_destinations(cells: np.ndarray, rings: np.ndarray) -> np.ndarray:
    """(n, 5, 6, 9) bool: the legal ring moves from ``rings`` (n, 5) points, by ray step.

    A destination is legal when it is empty, nothing blocks the way (a ring or
    the board's edge), and no earlier point of the ray was already a landing
    after a run of markers (a ring jumps one run and stops right after it).
    ``RAY_ACTIONS[rings]`` names the action of each entry.
    """
    n = cells.shape[0]
    rays = RAY_POINTS[rings].reshape(n, -1)
    seen = np.take_along_axis(cells, rays, axis=1).reshape(*rings.shape, *RAY_POINTS.shape[1:])
    empty = seen == EMPTY
    blocked = (seen <= 2) & ~empty | (seen == BLOCK)
    marker = (seen == MARKER_W) | (seen == MARKER_B)
    stopped = np.cumsum(blocked, axis=-1, dtype=np.int8) > 0
    jumped = np.cumsum(marker, axis=-1, dtype=np.int8) > 0
    landing = empty & jumped
    earlier = np.cumsum(landing, axis=-1, dtype=np.int8) - landing
    return empty & ~stopped & (earlier == 0)


def refresh_mask(state: BatchState, games: np.ndarray) -> None:
    """Recompute the legal-action mask of ``games`` (an index array) from their positions."""
    mask = state.mask
    mask[games] = False
    phase = state.phase[games]
    me = state.to_act[games]
    cells = state.cells
    placing = games[phase == Phase.PLACE]
    if placing.size:
        mask[placing, :N_POINTS] = cells[placing, :N_POINTS] == EMPTY
    in_move = phase == Phase.MOVE
    moving = games[in_move]
    if moving.size:
        rings = state.ring_pos[moving, me[in_move]]
        legal = move_destinations(cells[moving], rings)
        g, r, d, k = np.nonzero(legal)
        mask[moving[g], RAY_ACTIONS[rings[g, r], d, k]] = True
        stuck = ~legal.reshape(moving.size, -1).any(axis=1)
        mask[moving[stuck], PASS_ACTION] = True
    in_row = phase == Phase.ROW
    rowing = games[in_row]
    if rowing.size:
        mask[rowing, ROW_OFFSET:RING_OFFSET] = rows_of(cells[rowing], MARKER_CODE[me[in_row]])
    in_ring = phase == Phase.RING
    removing = games[in_ring]
    if removing.size:
        rings = state.ring_pos[removing, me[in_ring]]
        g, r = np.nonzero(rings != OFF)
        mask[removing[g], RING_OFFSET + rings[g, r]] = True
