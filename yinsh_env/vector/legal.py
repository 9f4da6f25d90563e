"""Legal actions of a batch, as the mask of :class:`~.batch_state.BatchState`.

Each phase's actions come from table gathers over the games in that phase:
ring placements from the empty points; ring moves from the ray codes the
state keeps (each of the player's five rings' six rays is one lookup in
:data:`~.tables.RAY_LEGAL_STEPS`, its legal steps); rows from the 123
five-point segments; ring removals from the ring points.  Gathers whose
indices are valid by construction use ``mode="clip"``, which spares numpy a
bounds-checking pass.
"""

from __future__ import annotations

import numpy as np

from yinsh_env.engine.actions import N_ACTIONS, PASS_ACTION, RING_OFFSET, ROW_OFFSET
from yinsh_env.engine.geometry import N_POINTS
from yinsh_env.vector.batch_state import BatchState
from yinsh_env.vector.tables import (
    BLOCK,
    CELL_KIND,
    EMPTY,
    MARKER_B,
    MARKER_CODE,
    MARKER_W,
    MAX_RAY,
    MOVE,
    N_CELLS,
    N_PHASES,
    OFF,
    PLACE,
    RAY_ACTIONS,
    RAY_COUNT,
    RAY_LEGAL_STEPS,
    RAY_NTH_STEP,
    RAY_POINTS,
    RING,
    RINGS_PER_SIDE,
    ROW,
    SEGMENT_POINTS_T,
)

__all__ = [
    "move_destinations",
    "random_draws",
    "refresh_mask",
    "ring_ray_codes",
    "row_bits",
    "rows_of",
]

#: _ROW_BIT[code]: a cell's bit in :func:`row_bits` (1 a White marker, 2 a Black one).
_ROW_BIT = np.zeros(BLOCK + 1, dtype=np.uint8)
_ROW_BIT[MARKER_W], _ROW_BIT[MARKER_B] = 1, 2
_KIND = CELL_KIND.astype(np.int16)
_POW3 = (3 ** np.arange(MAX_RAY)).astype(np.int16)
#: The ray tables with the per-game offsets small enough for int32 (half the bytes to gather).
_RAY_POINTS = RAY_POINTS.astype(np.int32)
_RAY_ACTIONS = RAY_ACTIONS.reshape(-1)
_RAY_STEPS = 6 * MAX_RAY  # the ray steps of one ring


def _full(own: np.ndarray) -> np.ndarray:
    """(123, n): the bitwise and of each segment's five points in ``own`` (86, n).

    Point-major: each of the 615 segment points gathers a whole row of games.
    """
    return np.asarray(
        np.bitwise_and.reduce(own.take(SEGMENT_POINTS_T, axis=0, mode="clip"), axis=0)
    )


def rows_of(cells: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(n, 123) bool: which segments hold five markers of ``code`` (one code per game)."""
    return np.ascontiguousarray(_full(code == cells.T).T)


def row_bits(cells: np.ndarray) -> np.ndarray:
    """(n,) uint8: bit 0 set where White has five markers in a row, bit 1 where Black has.

    One pass for both colours: each point holds its colour's bit, and a
    segment's five bits and-ed together keep the colour all five share.
    """
    return np.asarray(np.bitwise_or.reduce(_full(_ROW_BIT.take(cells.T, mode="clip")), axis=0))


def move_destinations(cells: np.ndarray, rings: np.ndarray) -> np.ndarray:
    """(n, 5, 6, 9) bool: the legal ring moves from ``rings`` (n, 5) points, by ray step.

    Each ray's cells are read as one base-3 number (empty, marker, stop; the
    nearest step lowest) and looked up in :data:`~.tables.RAY_LEGAL_STEPS`;
    ``RAY_ACTIONS[rings]`` names the action of each entry.
    """
    n, width = cells.shape
    kinds = np.take(_KIND, cells).reshape(-1)
    points = np.take(_RAY_POINTS, rings, axis=0)  # (n, 5, 6, 9)
    points += (np.arange(n, dtype=np.int32) * width)[:, None, None, None]
    codes = np.einsum("grdk,k->grd", np.take(kinds, points), _POW3)
    return np.asarray(np.take(RAY_LEGAL_STEPS, codes, axis=0))


def ring_ray_codes(state: BatchState, g: np.ndarray, rings: np.ndarray) -> np.ndarray:
    """(m, 5, 6) int16: the ray codes of the six rays from each of ``rings`` (m, 5) points
    in games ``g``: one gather of a point's six codes (a row) per ring, not one per ray."""
    by_point = state.ray_codes.reshape(-1, 6)  # row game * 86 + point
    return np.asarray(by_point.take((g * N_CELLS)[:, None] + rings, axis=0, mode="clip"))


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
    present = np.bincount(phase, minlength=N_PHASES).tolist()
    only = sum(map(bool, present)) == 1  # one phase: its group is every game

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
        codes = ring_ray_codes(state, moving, rings)
        legal = RAY_LEGAL_STEPS.take(codes, axis=0, mode="clip").reshape(moving.size, -1)
        found = legal.reshape(-1).nonzero()[0]  # (game, ring, ray, step), flattened
        ring, step = np.divmod(found, _RAY_STEPS)
        actions = _RAY_ACTIONS[rings.reshape(-1)[ring] * _RAY_STEPS + step]
        mask.reshape(-1)[moving[ring // RINGS_PER_SIDE] * N_ACTIONS + actions] = True
        mask[moving, PASS_ACTION] = ~legal.any(axis=1)
    if present[ROW]:
        rowing, players = group(ROW)
        mask[rowing, ROW_OFFSET:RING_OFFSET] = rows_of(cells[rowing], MARKER_CODE[players])
    if present[RING]:
        removing, players = group(RING)
        rings = state.ring_pos[removing, players]
        g, r = np.nonzero(rings != OFF)
        mask[removing[g], RING_OFFSET + rings[g, r]] = True


def random_draws(
    state: BatchState, phase: int, g: np.ndarray, player: np.ndarray, draw: np.ndarray
) -> np.ndarray:
    """The ``floor(draw * count)``-th legal action of ``player`` in each of games ``g``,
    all in ``phase`` (``draw`` uniform in [0, 1): a uniformly random legal action)."""
    if phase == PLACE:
        return _kth(state.cells[g, :N_POINTS] == EMPTY, draw)
    if phase == ROW:
        return ROW_OFFSET + _kth(rows_of(state.cells[g], MARKER_CODE[player]), draw)
    if phase == RING:
        rings = state.ring_pos[g, player]
        return np.asarray(RING_OFFSET + rings[np.arange(g.size), _kth(rings != OFF, draw)])
    return _random_moves(state, g, player, draw)


def _random_moves(
    state: BatchState, g: np.ndarray, player: np.ndarray, draw: np.ndarray
) -> np.ndarray:
    """The ``floor(draw * count)``-th legal move of each game, by ring, ray and step (pass
    where there is none)."""
    rings = state.ring_pos[g, player]
    codes = ring_ray_codes(state, g, rings).reshape(g.size, -1)
    counts = RAY_COUNT.take(codes, mode="clip")  # (m, 30) legal steps per ray
    upto = counts.cumsum(axis=1)
    pick = (draw * upto[:, -1]).astype(np.int64)
    ray = (upto > pick[:, None]).argmax(axis=1)
    arange = np.arange(g.size)
    nth = pick - upto[arange, ray] + counts[arange, ray]
    step = RAY_NTH_STEP[codes[arange, ray], nth]
    point = rings[arange, ray // 6]
    moves = _RAY_ACTIONS[(point * 6 + ray % 6) * MAX_RAY + step]
    return np.asarray(np.where(upto[:, -1] > 0, moves, PASS_ACTION))


def _kth(held: np.ndarray, draw: np.ndarray) -> np.ndarray:
    """(m,) the column of the ``floor(draw * count)``-th set entry of each row of ``held``."""
    upto = held.cumsum(axis=1, dtype=np.int64)
    pick = (draw * upto[:, -1]).astype(np.int64)
    return np.asarray((upto > pick[:, None]).argmax(axis=1))
