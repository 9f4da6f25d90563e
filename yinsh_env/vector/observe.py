"""Observation planes for a batch: :func:`yinsh_env.observation.encode` over many games.

The planes and their meaning are the scalar encoder's (its module docstring
has the table); here they are written for every game at once: the four piece
planes by one lookup from the cell codes, the constant planes by broadcasting
one row of values per game, the candidate-row plane from the row segments of
games in the ``row`` phase.
"""

from __future__ import annotations

import numpy as np

from ..observation import BOARD_PLANE, GRID, N_PLANES
from ..vocabulary import TOTAL_MARKERS, Phase
from .legal import rows_of
from .state import BatchState
from .tables import MARKER_CODE, POINT_CELL, SEGMENT_POINTS

__all__ = ["encode", "masks_for"]

_BOARD = BOARD_PLANE.reshape(-1)
#: _PIECES[observer, code]: the four piece planes (own ring, opp ring, own marker,
#: opp marker) a cell code lights for that observer.
_PIECES = np.zeros((2, 6, 4), dtype=np.float32)
for _me in (0, 1):
    _PIECES[_me, 1 + _me, 0] = _PIECES[_me, 2 - _me, 1] = 1.0
    _PIECES[_me, 3 + _me, 2] = _PIECES[_me, 4 - _me, 3] = 1.0
_PIECES.flags.writeable = False
#: _PHASE_PLANES[phase]: planes 5-8 (one-hot; all zero once over).
_PHASE_PLANES = np.eye(5, 4, dtype=np.float32)


def encode(state: BatchState, games: np.ndarray, player: np.ndarray | None = None) -> np.ndarray:
    """(n, 11, 11, 17) float32 planes of ``games`` from ``player``'s side (default: to act)."""
    n = games.size
    me = state.to_act[games] if player is None else player
    opp = 1 - me
    phase = state.phase[games]
    removed = state.removed[games]
    arange = np.arange(n)
    consts = np.empty((n, N_PLANES - 5), dtype=np.float32)  # planes 5..16
    consts[:, 0:4] = _PHASE_PLANES[phase]
    consts[:, 4] = 0.0  # plane 9 varies over the board: written below
    resolving = (phase == Phase.ROW) | (phase == Phase.RING)
    consts[:, 5] = resolving & (state.mover[games] == me)
    consts[:, 6] = removed[arange, me] / 5.0
    consts[:, 7] = removed[arange, opp] / 5.0
    consts[:, 8] = state.rings_to_win / 5.0
    consts[:, 9] = state.pool[games] / TOTAL_MARKERS
    consts[:, 10] = state.passes[games] > 0
    consts[:, 11] = opp  # the observer is White (0)
    planes = np.zeros((n, GRID * GRID, N_PLANES), dtype=np.float32)
    planes[:, :, 5:] = consts[:, None, :]
    planes[:, :, 4] = _BOARD
    cells = state.cells[games]
    planes[:, POINT_CELL, :4] = _PIECES[me[:, None], cells[:, : POINT_CELL.size]]
    in_row = np.flatnonzero(phase == Phase.ROW)
    if in_row.size:
        to_act = state.to_act[games[in_row]]
        rows = rows_of(cells[in_row], MARKER_CODE[to_act])
        g, s = np.nonzero(rows)
        cell = POINT_CELL[SEGMENT_POINTS[s]]  # (k, 5)
        planes[in_row[g][:, None], cell, 9] = 1.0
    return planes.reshape(n, GRID, GRID, N_PLANES)


def masks_for(state: BatchState, games: np.ndarray, player: np.ndarray) -> np.ndarray:
    """(n, 2142) int8 masks as the scalar environment gives ``player``: the legal
    actions when they are to act, all zeros otherwise (and once the game is over)."""
    mask = state.mask[games].astype(np.int8)
    mask[state.to_act[games] != player] = 0
    return mask
