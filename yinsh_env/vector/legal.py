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
    CELL_KIND,
    EMPTY,
    MARKER_CODE,
    MAX_RAY,
    OFF,
    RAY_ACTIONS,
    RAY_LEGAL_STEPS,
    RAY_POINTS_T,
    SEGMENT_POINTS_T,
)

__all__ = ["has_row", "move_destinations", "refresh_mask", "rows_of"]


def rows_of(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n, 123) bool: which segments hold five markers of ``code`` (one code per game)."""
    own = cells[:, SEGMENT_POINTS_T] == code[:, None, None]  # (n, 5, 123)
    return np.asarray(np.logical_and.reduce(own, axis=1))


def has_row(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n,) bool: whether each game has five markers of its ``code`` in a row."""
    return np.asarray(rows_of(cells, code).any(axis=1))


def move_destinations(cells: np.ndarray, rings: np.ndarray) -> np.ndarray:
    """(n, 5, 6, 9) bool: the legal ring moves from ``rings`` (n, 5) points, by ray step.

    Each ray's cells are read as one base-3 number (empty, marker, stop; the
    nearest step lowest) and looked up in :data:`~.tables.RAY_LEGAL_STEPS`;
    ``RAY_ACTIONS[rings]`` names the action of each entry.
    """
    n, width = cells.shape
    rows = (np.arange(n) * width)[:, None, None, None]
    kinds = CELL_KIND[cells.reshape(-1)[RAY_POINTS_T[rings] + rows]]  # (n, 5, 9 steps, 6)
    codes = kinds[:, :, 0]
    for step in range(1, MAX_RAY):
        codes = codes + kinds[:, :, step] * 3**step
    return np.asarray(RAY_LEGAL_STEPS[codes])


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
        # Every (ring, ray, step) names a different move, or action 0 (no move: never
        # legal in this phase), so the whole table is written, illegal entries as False.
        mask[moving[:, None, None, None], RAY_ACTIONS[rings]] = legal
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
