"""Geometric tables for the batched engine, built at import from :mod:`yinsh_env.engine.geometry`.

Everything the batched rules look up is an integer array here, PGX-style, so
that a step is gathers and element-wise operations over the games (and the
same code can run on torch tensors once the tables are moved there).

The board is stored per point (``cells``, 85 points plus one padding point,
:data:`OFF`, whose code :data:`BLOCK` stops every ray): rays that leave the
board and the padding of short lists all point at ``OFF``.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from yinsh_env.engine.actions import (
    MOVE_ACTION,
    MOVE_OFFSET,
    N_ACTIONS,
    PASS_ACTION,
    RING_OFFSET,
    ROW_OFFSET,
)
from yinsh_env.engine.geometry import MOVE_BETWEEN, MOVE_PAIRS, N_POINTS, POINTS, RAYS, SEGMENTS
from yinsh_env.engine.vocabulary import Phase

#: Cell codes: empty, White's / Black's ring, White's / Black's marker, off the board.
EMPTY: Final = 0
RING_W: Final = 1
RING_B: Final = 2
MARKER_W: Final = 3
MARKER_B: Final = 4
#: The code of the padding point, off the board: it stops every ray.
BLOCK: Final = 5
#: The padding point: index 85 of ``cells``, always :data:`BLOCK`.
OFF: Final = N_POINTS
N_CELLS: Final = N_POINTS + 1
RINGS_PER_SIDE: Final = 5
#: The longest ray (a ring travels at most 9 steps) and the most points between a move's ends.
MAX_RAY: Final = 9
MAX_BETWEEN: Final = 8
N_SEGMENTS: Final = len(SEGMENTS)

#: The phases as plain ints (an Enum member costs a lookup per use on the hot path).
PLACE: Final = int(Phase.PLACE)
MOVE: Final = int(Phase.MOVE)
ROW: Final = int(Phase.ROW)
RING: Final = int(Phase.RING)
OVER: Final = int(Phase.OVER)
N_PHASES: Final = len(Phase)

#: Action kinds, by action index.
PLACE_KIND: Final = 0
MOVE_KIND: Final = 1
ROW_KIND: Final = 2
RING_KIND: Final = 3
PASS_KIND: Final = 4


def _ray_tables() -> tuple[np.ndarray, np.ndarray]:
    points = np.full((N_CELLS, 6, MAX_RAY), OFF, dtype=np.int64)
    actions = np.zeros((N_CELLS, 6, MAX_RAY), dtype=np.int64)
    for p in range(N_POINTS):
        for d, ray in enumerate(RAYS[p]):
            for k, q in enumerate(ray):
                points[p, d, k] = q
                actions[p, d, k] = MOVE_ACTION[(p, q)]
    return points, actions


#: RAY_POINTS[p, d, k]: the point k + 1 steps from p in ray direction d (OFF past the edge).
#: RAY_ACTIONS[p, d, k]: the move action from p to that point (0 where there is none).
RAY_POINTS, RAY_ACTIONS = _ray_tables()

#: SEGMENT_POINTS[s]: the five points of row segment s (row action ROW_OFFSET + s).
SEGMENT_POINTS: Final = np.array(SEGMENTS, dtype=np.int64)

#: Per move (action - MOVE_OFFSET): origin, destination, and the points jumped over (OFF-padded).
MOVE_ORIGIN: Final = np.array([a for a, _ in MOVE_PAIRS], dtype=np.int64)
MOVE_DEST: Final = np.array([b for _, b in MOVE_PAIRS], dtype=np.int64)
MOVE_BETWEEN_POINTS: Final = np.array(
    [list(between) + [OFF] * (MAX_BETWEEN - len(between)) for between in MOVE_BETWEEN],
    dtype=np.int64,
)


def _kinds() -> np.ndarray:
    kind = np.full(N_ACTIONS, PASS_KIND, dtype=np.int64)
    kind[:MOVE_OFFSET] = PLACE_KIND
    kind[MOVE_OFFSET:ROW_OFFSET] = MOVE_KIND
    kind[ROW_OFFSET:RING_OFFSET] = ROW_KIND
    kind[RING_OFFSET:PASS_ACTION] = RING_KIND
    return kind


#: ACTION_KIND[a]: PLACE_KIND, MOVE_KIND, ROW_KIND, RING_KIND or PASS_KIND.
ACTION_KIND: Final = _kinds()
#: ACTION_ARG[a]: the point (place, ring), move index (move) or segment (row) the action names.
ACTION_ARG: Final = (
    np.arange(N_ACTIONS, dtype=np.int64)
    - np.array([0, MOVE_OFFSET, ROW_OFFSET, RING_OFFSET, PASS_ACTION], dtype=np.int64)[ACTION_KIND]
)

#: POINT_CELL[p]: point p's cell in an observation's flattened 11 x 11 grid:
#: (number - 1) * 11 + column.
POINT_CELL: Final = np.array([(n - 1) * 11 + c for c, n in POINTS], dtype=np.int64)

#: SEGMENT_POINTS_T[k, s]: the k-th point of segment s (the five points as the slow axis).
SEGMENT_POINTS_T: Final = np.ascontiguousarray(SEGMENT_POINTS.T)

#: GRID_POINT[cell]: the point at each cell of the flattened 11 x 11 grid (OFF off the board).
GRID_POINT: Final = np.full(11 * 11, OFF, dtype=np.int64)
GRID_POINT[POINT_CELL] = np.arange(N_POINTS)

#: CELL_KIND[code]: what a ray meets there: 0 an empty point, 1 a marker, 2 a stop
#: (a ring, or the edge of the board).  RAY_WEIGHT: the base-3 place value of each step.
CELL_KIND: Final = np.array([0, 2, 2, 1, 1, 2], dtype=np.int16)
#: RAY_POINTS_T[p, k, d]: RAY_POINTS with the step axis before the direction axis.
RAY_POINTS_T: Final = np.ascontiguousarray(RAY_POINTS.transpose(0, 2, 1))


def _ray_legal() -> np.ndarray:
    """RAY_LEGAL[code]: the legal destinations of a ray whose cells have kinds ``code``
    (base 3, nearest step lowest), as bits (bit k: the point k + 1 steps away).

    A destination is legal when it is empty, no stop lies before it, and no
    earlier point was already a landing after a run of markers.
    """
    codes = np.arange(3**MAX_RAY)
    kinds = codes[:, None] // 3 ** np.arange(MAX_RAY) % 3
    empty = kinds == 0
    stopped = np.cumsum(kinds == 2, axis=1) > 0
    landing = empty & (np.cumsum(kinds == 1, axis=1) > 0)
    earlier = np.cumsum(landing, axis=1) - landing
    legal = empty & ~stopped & (earlier == 0)
    return np.asarray((legal << np.arange(MAX_RAY)).sum(axis=1), dtype=np.int64)


RAY_LEGAL: Final = _ray_legal()
#: RAY_LEGAL_STEPS[code, k]: bit k of RAY_LEGAL[code], as a bool table.
RAY_LEGAL_STEPS: Final = (RAY_LEGAL[:, None] >> np.arange(MAX_RAY) & 1).astype(np.bool_)
#: RAY_COUNT[code]: how many legal steps; RAY_NTH_STEP[code, k]: the k-th of them (nearest first).
RAY_COUNT: Final = RAY_LEGAL_STEPS.sum(axis=1).astype(np.int64)
RAY_NTH_STEP: Final = np.argsort(~RAY_LEGAL_STEPS, axis=1, kind="stable").astype(np.int64)

#: Ray codes kept up to date move by move (``BatchState.ray_codes``): ray ``p * 6 + d``
#: of a game holds RAY_LEGAL's code of the ray from point p in direction d.
N_RAYS: Final = N_CELLS * 6
#: The ray every padding entry below names, with weight 0: the padding point's first ray.
_NO_RAY = OFF * 6
#: EMPTY_RAY_CODES[ray]: the code on an empty board (off-board steps are stops).
EMPTY_RAY_CODES: Final = (
    ((CELL_KIND[np.where(RAY_POINTS == OFF, BLOCK, EMPTY)] * 3 ** np.arange(MAX_RAY)).sum(axis=2))
    .reshape(-1)
    .astype(np.int16)
)


def _rays_through() -> list[list[tuple[int, int]]]:
    """For each point, the (ray, step) pairs of the rays that pass through it."""
    through: list[list[tuple[int, int]]] = [[] for _ in range(N_POINTS)]
    for (p, d, k), q in np.ndenumerate(RAY_POINTS):
        if q != OFF:
            through[int(q)].append((int(p) * 6 + int(d), int(k)))
    return through


_THROUGH = _rays_through()


def _weights(points: list[tuple[int, int]]) -> dict[int, int]:
    """The code change of every ray through ``points``, given as (point, kind change)."""
    change: dict[int, int] = {}
    for q, delta in points:
        for ray, k in _THROUGH[q]:
            change[ray] = change.get(ray, 0) + delta * 3**k
    return change


def _change_table(changes: list[dict[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of (ray, code change), padded with weight-0 entries on the padding point's ray."""
    width = max(len(c) for c in changes)
    rays = np.full((len(changes), width), _NO_RAY, dtype=np.int64)
    delta = np.zeros((len(changes), width), dtype=np.int16)
    for i, change in enumerate(changes):
        rays[i, : len(change)] = list(change)
        delta[i, : len(change)] = list(change.values())
    return rays, delta


#: POINT_RAYS[p], POINT_DELTA[p]: the rays through point p and their code change when
#: a ring appears there on an empty point (negated: when it leaves).
POINT_RAYS, POINT_DELTA = _change_table([_weights([(p, 2)]) for p in range(N_POINTS)])
#: MOVE_RAYS[m], MOVE_DELTA[m]: the same for move m (its origin turns from a ring into a
#: marker, its destination from empty into a ring; jumped markers stay markers).
MOVE_RAYS, MOVE_DELTA = _change_table([_weights([(a, -1), (b, 2)]) for a, b in MOVE_PAIRS])
#: SEGMENT_RAYS[s], SEGMENT_DELTA[s]: the same for removing row s's five markers.
SEGMENT_RAYS, SEGMENT_DELTA = _change_table(
    [_weights([(p, -1) for p in segment]) for segment in SEGMENTS]
)

#: RING_CODE[player], MARKER_CODE[player]: the cell codes of a player's pieces.
RING_CODE: Final = np.array([RING_W, RING_B], dtype=np.int8)
MARKER_CODE: Final = np.array([MARKER_W, MARKER_B], dtype=np.int8)
#: FLIP[code]: the code after a jump (markers change colour, everything else stays).
FLIP: Final = np.array([EMPTY, RING_W, RING_B, MARKER_B, MARKER_W, BLOCK], dtype=np.int8)

for _table in (
    RAY_POINTS,
    RAY_ACTIONS,
    SEGMENT_POINTS,
    MOVE_ORIGIN,
    MOVE_DEST,
    MOVE_BETWEEN_POINTS,
    ACTION_KIND,
    ACTION_ARG,
    POINT_CELL,
    SEGMENT_POINTS_T,
    RAY_POINTS_T,
    GRID_POINT,
    CELL_KIND,
    RAY_LEGAL,
    RAY_LEGAL_STEPS,
    RAY_COUNT,
    RAY_NTH_STEP,
    RING_CODE,
    MARKER_CODE,
    FLIP,
    EMPTY_RAY_CODES,
    POINT_RAYS,
    POINT_DELTA,
    MOVE_RAYS,
    MOVE_DELTA,
    SEGMENT_RAYS,
    SEGMENT_DELTA,
):
    _table.flags.writeable = False

assert max(len(b) for b in MOVE_BETWEEN) == MAX_BETWEEN
assert max(len(r) for rays in RAYS for r in rays) == MAX_RAY
