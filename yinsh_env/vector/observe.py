"""Observation planes for a batch: :func:`yinsh_env.envs.observation.encode` over many games.

The planes and their meaning are the scalar encoder's (its module docstring
has the table); here they are written for every game at once: the four piece
planes by one lookup from the cell codes, the constant planes by broadcasting
one row of values per game, the candidate-row plane from the row segments of
games in the ``row`` phase.
"""

from __future__ import annotations

import functools

import numpy as np

from yinsh_env.engine.vocabulary import TOTAL_MARKERS
from yinsh_env.envs.observation import GRID, N_PLANES
from yinsh_env.vector.batch_state import BatchState, count_rays, new_batch
from yinsh_env.vector.legal import rows_of
from yinsh_env.vector.tables import (
    BLOCK,
    GRID_POINT,
    MARKER_CODE,
    N_CELLS,
    OFF,
    OVER,
    POINT_CELL,
    RING,
    RING_CODE,
    RINGS_PER_SIDE,
    ROW,
    SEGMENT_POINTS,
)

__all__ = ["decode", "encode", "masks_for"]

#: _CELL_PLANES[observer * 6 + code]: planes 0-4 at a grid cell holding ``code`` (own
#: ring, opp ring, own marker, opp marker, on the board) for that observer.
_CODES = BLOCK + 1
_CELL_PLANES = np.zeros((2 * _CODES, 5), dtype=np.float32)
for _me in (0, 1):
    _rows = _CELL_PLANES[_CODES * _me : _CODES * (_me + 1)]
    _rows[1 + _me, 0] = _rows[2 - _me, 1] = _rows[3 + _me, 2] = _rows[4 - _me, 3] = 1.0
    _rows[:BLOCK, 4] = 1.0  # every code but the padding point's is on the board
_CELL_PLANES.flags.writeable = False
_CELL_PLANES_BY_OBSERVER = _CELL_PLANES.reshape(2, _CODES, 5)
#: _PHASE_PLANES[phase]: planes 5-8 (one-hot; all zero once over).
_PHASE_PLANES = np.eye(5, 4, dtype=np.float32)


@functools.lru_cache(maxsize=8)
def _grid_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    """For n games: (n, 121) the flat index, in an (n, 86) array, of each game's point at
    each grid cell; and (n, 121) each game's first row of plane values (game * 6)."""
    index = (np.arange(n) * N_CELLS)[:, None] + GRID_POINT
    first = np.repeat(np.arange(n) * _CODES, GRID * GRID).reshape(n, GRID * GRID)
    index.flags.writeable = first.flags.writeable = False
    return index, first


def _of(array: np.ndarray, games: np.ndarray | None) -> np.ndarray:
    """The rows ``games`` of ``array``; None: the array itself (every game, no copy)."""
    return array if games is None else array[games]


def encode(
    state: BatchState, games: np.ndarray | None = None, player: np.ndarray | None = None
) -> np.ndarray:
    """(n, 11, 11, 17) float32 planes of ``games`` (None: every game, in order) from
    ``player``'s side (default: the player to act)."""
    n = state.num_games if games is None else games.size
    cells = _of(state.cells, games)
    to_act = _of(state.to_act, games)
    me = to_act if player is None else player
    opp = 1 - me
    phase = _of(state.phase, games)
    # The game's constant planes (5-16), then one row of 17 plane values per game and
    # cell code: the piece and board planes of that code for this observer, the constants.
    consts = np.empty((n, N_PLANES - 5), dtype=np.float32)
    consts[:, :4] = _PHASE_PLANES.take(phase, axis=0)
    consts[:, 4] = 0.0  # candidate rows: written below
    mover = _of(state.mover, games)
    consts[:, 5] = ((phase == ROW) | (phase == RING)) & (mover == me)
    removed = _of(state.removed, games)
    own, other = np.where(me == 0, removed.T, removed[:, ::-1].T)  # rings removed
    consts[:, 6] = own / 5.0
    consts[:, 7] = other / 5.0
    consts[:, 8] = state.rings_to_win / 5.0
    consts[:, 9] = _of(state.pool, games) / TOTAL_MARKERS
    consts[:, 10] = _of(state.passes, games) > 0
    consts[:, 11] = opp  # the observer is White (0)
    values = np.empty((n, _CODES, N_PLANES), dtype=np.float32)
    values[:, :, :5] = _CELL_PLANES_BY_OBSERVER.take(me, axis=0)
    values[:, :, 5:] = consts[:, None, :]
    # Each game's cell codes at the grid's points, offset to its own rows of ``values``.
    grid, first = _grid_index(n)
    rows = cells.take(grid, mode="clip").astype(np.intp)
    rows += first
    planes = values.reshape(-1, N_PLANES).take(rows, axis=0, mode="clip")  # (n, 121, 17)
    in_row = np.flatnonzero(phase == ROW)
    if in_row.size:
        rows_made = rows_of(cells[in_row], MARKER_CODE[to_act[in_row]])
        g, s = np.nonzero(rows_made)
        planes[in_row[g][:, None], POINT_CELL[SEGMENT_POINTS[s]], 9] = 1.0
    return planes.reshape(n, GRID, GRID, N_PLANES)


def masks_for(state: BatchState, games: np.ndarray, player: np.ndarray) -> np.ndarray:
    """(n, 2142) int8 masks as the scalar environment gives ``player``: the legal
    actions when they are to act, all zeros otherwise and once the game is over (whose
    mask the vector env may not have refreshed yet)."""
    mask = state.mask[games].astype(np.int8)
    mask[(state.to_act[games] != player) | (state.phase[games] == OVER)] = 0
    return mask


def decode(planes: np.ndarray, masks: np.ndarray) -> BatchState:
    """The batch of positions that observations of the player to act were made from.

    The inverse of :func:`encode` for games someone is to act in (as
    :func:`yinsh_env.envs.observation.decode` is for one); ``masks`` become the
    state's legal masks.  All observations must share one ``rings_to_win``.
    """
    n = planes.shape[0]
    flat = planes.reshape(n, GRID * GRID, N_PLANES)
    constants = flat[:, 0, :]
    me = np.where(constants[:, 16] > 0.5, 0, 1)
    opp = 1 - me
    targets = np.unique(np.rint(constants[:, 13] * 5).astype(np.int64))
    if targets.size != 1:
        raise ValueError(f"observations of one batch share rings_to_win, got {targets.tolist()}")
    state = new_batch(n, int(targets[0]))
    pieces = flat[:, POINT_CELL, :4] > 0.5  # (n, 85, 4)
    codes = np.stack([RING_CODE[me], RING_CODE[opp], MARKER_CODE[me], MARKER_CODE[opp]], axis=1)
    for k in range(4):
        state.cells[:, : POINT_CELL.size] += np.where(pieces[:, :, k], codes[:, k : k + 1], 0)
    for player in (0, 1):
        ringed = state.cells[:, : POINT_CELL.size] == RING_CODE[player]
        order = np.argsort(~ringed, axis=1, kind="stable")[:, :RINGS_PER_SIDE]
        held = np.take_along_axis(ringed, order, axis=1)
        state.ring_pos[:, player] = np.where(held, order, OFF)
    arange = np.arange(n)
    state.removed[arange, me] = np.rint(constants[:, 11] * 5).astype(np.int64)
    state.removed[arange, opp] = np.rint(constants[:, 12] * 5).astype(np.int64)
    state.pool[:] = np.rint(constants[:, 14] * TOTAL_MARKERS).astype(np.int64)
    state.passes[:] = constants[:, 15] > 0.5
    state.to_act[:] = me
    state.phase[:] = np.argmax(constants[:, 5:9], axis=1)
    resolving = (state.phase == ROW) | (state.phase == RING)
    state.mover[:] = np.where(resolving, np.where(constants[:, 10] > 0.5, me, opp), -1)
    state.mask[:] = masks.astype(np.bool_)
    state.ray_codes[:] = count_rays(state.cells)
    return state
