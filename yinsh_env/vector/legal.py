"""Legal actions of a batch, as the mask of :class:`~.state.BatchState`.

Each phase's actions come from table gathers over the games in that phase:
ring placements from the empty points; ring moves by walking the six rays of
the player's five rings at once (cumulative sums along each ray say where a
ring is stopped, where it has jumped markers, and where it must land); rows
from the 123 five-point segments; ring removals from the ring points.
"""

from __future__ import annotations

import numpy as np

from ..actions import N_ACTIONS, PASS_ACTION, RING_OFFSET, ROW_OFFSET
from ..geometry import N_POINTS
from .state import BatchState
from .tables import (
    CELL_KIND,
    EMPTY,
    MARKER_B,
    MARKER_CODE,
    MARKER_W,
    MAX_RAY,
    MOVE,
    N_PHASES,
    OFF,
    PLACE,
    RAY_ACTIONS,
    RAY_LEGAL_STEPS,
    RAY_POINTS_T,
    RING,
    ROW,
    SEGMENT_POINTS_T,
)

__all__ = ["has_row", "move_destinations", "refresh_mask", "rows_by_colour", "rows_of"]


def _full(own: np.ndarray) -> np.ndarray:
    """(123, n) bool: the segments whose five points are all set in ``own`` (86, n).

    Point-major: each of the 615 segment points gathers a whole row of games.
    """
    seg = np.take(own, SEGMENT_POINTS_T, axis=0)  # (5, 123, n)
    return np.asarray(seg[0] & seg[1] & seg[2] & seg[3] & seg[4])


def rows_of(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n, 123) bool: which segments hold five markers of ``code`` (one code per game)."""
    return np.ascontiguousarray(_full(code == cells.T).T)


def rows_by_colour(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) bool twice: whether each game has five white markers in a row, and black."""
    points = np.ascontiguousarray(cells.T)
    white, black = _full(points == MARKER_W), _full(points == MARKER_B)
    return np.asarray(white.any(axis=0)), np.asarray(black.any(axis=0))


def has_row(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n,) bool: whether each game has five markers of its ``code`` in a row."""
    return np.asarray(_full(code == cells.T).any(axis=0))


def move_destinations(cells: np.ndarray, rings: np.ndarray) -> np.ndarray:
    """(n, 5, 6, 9) bool: the legal ring moves from ``rings`` (n, 5) points, by ray step.

    Each ray's cells are read as one base-3 number (empty, marker, stop; the
    nearest step lowest) and looked up in :data:`~.tables.RAY_LEGAL_STEPS`;
    ``RAY_ACTIONS[rings]`` names the action of each entry.
    """
    n, width = cells.shape
    rows = (np.arange(n) * width)[:, None, None, None]
    kinds = np.take(CELL_KIND, cells).reshape(-1)
    kinds = np.take(kinds, np.take(RAY_POINTS_T, rings, axis=0) + rows)  # (n, 5, 9 steps, 6)
    codes = kinds[:, :, 0]
    for step in range(1, MAX_RAY):
        codes = codes + kinds[:, :, step] * 3**step
    return np.asarray(np.take(RAY_LEGAL_STEPS, codes, axis=0))


def refresh_mask(state: BatchState, games: np.ndarray) -> None:
    """Recompute the legal-action mask of ``games`` (an index array) from their positions."""
    mask = state.mask
    if games.size == mask.shape[0]:  # every game (a slice is cheaper than an index)
        mask[:] = False
    else:
        mask[games] = False
    phase = state.phase[games]
    me = state.to_act[games]
    cells = state.cells
    present = np.bincount(phase, minlength=N_PHASES)
    only = len(present.nonzero()[0]) == 1  # one phase: its group is every game

    def group(which: int) -> tuple[np.ndarray, np.ndarray]:
        if only:
            return games, me
        chosen = phase == which
        return games[chosen], me[chosen]

    if present[PLACE]:
        placing, _ = group(PLACE)
        mask[placing, :N_POINTS] = cells[placing, :N_POINTS] == EMPTY
    if present[MOVE]:
        moving, players = group(MOVE)
        rings = state.ring_pos[moving, players]
        legal = move_destinations(cells[moving], rings)
        found = np.flatnonzero(legal)  # (game, ring, ray, step), flattened
        actions = np.take(RAY_ACTIONS, rings, axis=0).reshape(-1)[found]
        game = moving[found // legal[0].size]
        np.put(mask.reshape(-1), game * N_ACTIONS + actions, True)
        stuck = ~legal.reshape(moving.size, -1).any(axis=1)
        mask[moving[stuck], PASS_ACTION] = True
    if present[ROW]:
        rowing, players = group(ROW)
        mask[rowing, ROW_OFFSET:RING_OFFSET] = rows_of(cells[rowing], MARKER_CODE[players])
    if present[RING]:
        removing, players = group(RING)
        rings = state.ring_pos[removing, players]
        g, r = np.nonzero(rings != OFF)
        mask[removing[g], RING_OFFSET + rings[g, r]] = True
