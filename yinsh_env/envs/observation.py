"""Observation planes: the position as an 11 x 11 x C tensor, and back.

The planes lie on the board's axial grid: ``planes[number - 1, column, k]``
(``H`` = number 1..11, ``W`` = column A..K), channel-last as in PettingZoo's
classic environments.  They are written from the point of view of one player,
by default the player to act ("own" pieces first), and hold everything the
rules need, so the exact :class:`~yinsh_env.engine.state.State` can be read back
with :func:`decode`.

=====  ======================================================================
plane  meaning
=====  ======================================================================
0      own rings
1      opponent's rings
2      own markers
3      opponent's markers
4      the 85 board points (1 on the board, 0 on the grid's unused cells)
5-8    phase one-hot, constant planes: place, move, row, ring (all 0 once
       the game is over)
9      candidate rows: points of every row the player to act may remove
10     1 if the observing player made the move being resolved (so after all
       rows the opponent moves); 0 if they resolve the opponent's move's rows
       (they move next) or outside row/ring phases
11     own rings removed / 5 (constant)
12     opponent's rings removed / 5 (constant)
13     rings needed to win / 5 (constant: 0.6 standard, 0.2 Blitz)
14     markers left in the pool / 51 (constant)
15     1 if one pass has just been played (one more pass ends the game)
16     1 if the observing player is White
=====  ======================================================================

Observations of the player *not* to act (``encode(state, player=...)``, as
PettingZoo's ``observe`` makes for the waiting agent and at the end) use the
same planes with "own" meaning the observer; whose turn it is then follows
from the environment's all-zero action mask.  :func:`decode` reads back
observations of the player to act.

Symmetries: :func:`transform_planes`, :func:`transform_actions` (masks and
policy vectors) and :func:`transform_state` apply the 12 board symmetries of
:data:`~yinsh_env.engine.geometry.SYMMETRIES` consistently, so that
``encode(transform_state(s, k)) == transform_planes(encode(s), k)`` and
``transform_state(s, k).legal_mask() == transform_actions(s.legal_mask(), k)``:
data augmentation for training.

>>> import numpy as np
>>> from yinsh_env import State
>>> from yinsh_env.envs.observation import decode, encode, transform_planes, transform_state
>>> state = State().apply_all(["E5", "F6"])
>>> planes = encode(state)
>>> planes.shape, planes.dtype
((11, 11, 17), dtype('float32'))
>>> decode(planes) == state
True
>>> np.array_equal(encode(transform_state(state, 3)), transform_planes(planes, 3))
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np

from yinsh_env.engine.actions import ACTION_SYMMETRIES, ROW_OFFSET
from yinsh_env.engine.errors import PositionError
from yinsh_env.engine.geometry import (
    GRID_WIDTH,
    N_SYMMETRIES,
    POINT_BIT,
    POINTS,
    SEGMENT_MASK,
    SYMMETRIES,
    iter_points,
)
from yinsh_env.engine.rows import row_actions
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import TOTAL_MARKERS, Phase, Player

N_PLANES: Final = 17
GRID: Final = 11
OBS_SHAPE: Final = (GRID, GRID, N_PLANES)
_BYTES: Final = (11 * GRID_WIDTH + 7) // 8

#: 11 x 11 mask of the board's 85 points, in (number - 1, column) layout.
BOARD_PLANE: Final = np.zeros((GRID, GRID), dtype=np.float32)
for _c, _n in POINTS:
    BOARD_PLANE[_n - 1, _c] = 1.0
BOARD_PLANE.flags.writeable = False


def bitboard_plane(bitboard: int) -> np.ndarray:
    """A bitboard as an 11 x 11 float32 plane in (number - 1, column) layout."""
    raw = np.frombuffer(bitboard.to_bytes(_BYTES, "little"), dtype=np.uint8)
    bits = np.unpackbits(raw, bitorder="little")[: GRID * GRID_WIDTH]
    return bits.reshape(GRID, GRID_WIDTH)[:, :GRID].T.astype(np.float32)


def _plane_bitboard(plane: np.ndarray) -> int:
    bb = 0
    for c, n in POINTS:
        if plane[n - 1, c] > 0.5:
            bb |= 1 << (c * GRID_WIDTH + n - 1)
    return bb


# encode() copies a cached template holding the constant planes and the board
# plane for the position's counts (phase, rings removed, pool, ...), then
# writes the four piece planes with one gather from the unpacked bitboards.
# Few numpy calls per observation is what keeps the environment's step cheap;
# templates are bounded in number (the counts of real games repeat).  The
# bitboards are packed big-endian because numpy unpacks bits fastest in its
# default (big) bit order; the gather undoes the reversal for free.
_SLOT: Final = _BYTES * 8
_PIECE_BYTES: Final = 4 * _BYTES
_PIECE_BITS: Final = 8 * _PIECE_BYTES
_MAX_TEMPLATES: Final = 4096
_TEMPLATES: dict[tuple[int, ...], np.ndarray] = {}
#: _PIECE_GATHER[n, c, k]: the bit of piece plane k at cell (n, c) in the unpacked bitboards.
_PIECE_GATHER: Final = np.array(
    [
        [
            [_PIECE_BITS - 1 - (k * _SLOT + c * GRID_WIDTH + n) for k in range(4)]
            for c in range(GRID)
        ]
        for n in range(GRID)
    ],
    dtype=np.intp,
)
# numpy names bound once (a measurable saving per observation).
_frombuffer: Final = np.frombuffer
_unpackbits: Final = np.unpackbits
_UINT8: Final = np.uint8


def _template(key: tuple[int, ...]) -> np.ndarray:
    """The constant planes (and the board plane) for ``key``; piece planes zero."""
    template = _TEMPLATES.get(key)
    if template is not None:
        return template
    phase, resolving_own_move, own_removed, opp_removed, rings_to_win, pool, passes, white = key
    template = np.zeros(OBS_SHAPE, dtype=np.float32)
    template[:, :, 4] = BOARD_PLANE
    if phase <= Phase.RING:
        template[:, :, 5 + phase] = 1.0
    template[:, :, 10] = resolving_own_move
    template[:, :, 11] = own_removed / 5.0
    template[:, :, 12] = opp_removed / 5.0
    template[:, :, 13] = rings_to_win / 5.0
    template[:, :, 14] = pool / TOTAL_MARKERS
    template[:, :, 15] = 1.0 if passes else 0.0
    template[:, :, 16] = white
    template.flags.writeable = False
    if len(_TEMPLATES) >= _MAX_TEMPLATES:
        _TEMPLATES.clear()
    _TEMPLATES[key] = template
    return template


def encode(state: State, player: int | None = None) -> np.ndarray:
    """The planes of ``state`` from ``player``'s point of view (default: the player to act)."""
    me = state.to_act if player is None else player
    opp = 1 - me  # also the "observer is White" flag: Player.WHITE is 0
    phase = state.phase
    removed = state.removed
    key = (
        phase,
        1 if Phase.ROW <= phase <= Phase.RING and state.mover == me else 0,
        removed[me],
        removed[opp],
        state.rings_to_win,
        state.pool,
        state.passes,
        opp,
    )
    template = _TEMPLATES.get(key)
    planes = (_template(key) if template is None else template).copy()
    rings, markers = state.rings, state.markers
    bits = rings[me] | rings[opp] << _SLOT | markers[me] << 2 * _SLOT | markers[opp] << 3 * _SLOT
    flat = _unpackbits(_frombuffer(bits.to_bytes(_PIECE_BYTES, "big"), _UINT8))
    planes[..., :4] = flat[_PIECE_GATHER]
    if phase == Phase.ROW:
        rows = 0
        for action in row_actions(markers[state.to_act]):
            rows |= SEGMENT_MASK[action - ROW_OFFSET]
        planes[:, :, 9] = bitboard_plane(rows)
    return planes


def decode(planes: np.ndarray) -> State:
    """The exact :class:`State` an observation was made from (not terminal ones).

    Raises :class:`~yinsh_env.engine.errors.PositionError` if the array is not an
    observation of a position where someone is to act.
    """
    planes = np.asarray(planes)
    if planes.shape != OBS_SHAPE:
        raise PositionError(f"observation has shape {planes.shape}, expected {OBS_SHAPE}")
    me = Player.WHITE if planes[0, 0, 16] > 0.5 else Player.BLACK
    opp = me.other
    phases = [k for k in range(4) if planes[0, 0, 5 + k] > 0.5]
    if len(phases) != 1:
        raise PositionError("observation has no single phase plane set (terminal or malformed)")
    state = State(rings_to_win=int(round(planes[0, 0, 13] * 5)))
    state.rings[me] = _plane_bitboard(planes[:, :, 0])
    state.rings[opp] = _plane_bitboard(planes[:, :, 1])
    state.markers[me] = _plane_bitboard(planes[:, :, 2])
    state.markers[opp] = _plane_bitboard(planes[:, :, 3])
    state.to_act = me
    state.phase = Phase(phases[0])
    if state.phase in (Phase.ROW, Phase.RING):
        state.mover = me if planes[0, 0, 10] > 0.5 else opp
    state.removed = [0, 0]
    state.removed[me] = int(round(planes[0, 0, 11] * 5))
    state.removed[opp] = int(round(planes[0, 0, 12] * 5))
    state.pool = int(round(planes[0, 0, 14] * TOTAL_MARKERS))
    state.passes = 1 if planes[0, 0, 15] > 0.5 else 0
    return State.from_text(state.to_text())  # validates the position


# --- symmetries on planes ------------------------------------------------------


def _grid_permutations() -> np.ndarray:
    """``perm[k]``: flat 11x11 source index for each target cell under symmetry k.

    Cells off the board map to themselves (they are always zero but for the
    board plane, which every symmetry preserves).
    """
    perms = np.tile(np.arange(GRID * GRID), (N_SYMMETRIES, 1))
    for k, sym in enumerate(SYMMETRIES):
        for p, (c, n) in enumerate(POINTS):
            tc, tn = POINTS[sym[p]]
            perms[k, (tn - 1) * GRID + tc] = (n - 1) * GRID + c
    return perms


#: GRID_PERMUTATIONS[k]: gather indices applying symmetry k to a flattened grid.
GRID_PERMUTATIONS: Final = _grid_permutations()


def transform_planes(planes: np.ndarray, k: int) -> np.ndarray:
    """Apply board symmetry ``k`` to planes shaped (..., 11, 11, C)."""
    shape = planes.shape
    flat = planes.reshape(*shape[:-3], GRID * GRID, shape[-1])
    return flat[..., GRID_PERMUTATIONS[k], :].reshape(shape)


#: ACTION_GATHER[k]: gather indices applying symmetry k to an action vector
#: (the inverse permutation of ``ACTION_SYMMETRIES[k]``).
ACTION_GATHER: Final = np.argsort(np.asarray(ACTION_SYMMETRIES, dtype=np.intp), axis=1)


def transform_actions(values: np.ndarray, k: int) -> np.ndarray:
    """Apply board symmetry ``k`` to per-action values shaped (..., N_ACTIONS).

    Works for legal-action masks and policy targets alike: the value of
    action ``a`` moves to action ``ACTION_SYMMETRIES[k][a]``.
    """
    return np.asarray(values)[..., ACTION_GATHER[k]]


def transform_observation(observation: Mapping[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """Apply board symmetry ``k`` to an environment observation dict."""
    return {
        "observation": transform_planes(np.asarray(observation["observation"]), k),
        "action_mask": transform_actions(observation["action_mask"], k),
    }


def _transform_bitboard(bitboard: int, sym: tuple[int, ...]) -> int:
    out = 0
    for p in iter_points(bitboard):
        out |= POINT_BIT[sym[p]]
    return out


def transform_state(state: State, k: int) -> State:
    """A copy of ``state`` with board symmetry ``k`` applied to every piece.

    Counts, phase and player to act are unchanged; the copy has no history.
    """
    if not 0 <= k < N_SYMMETRIES:
        raise ValueError(f"symmetry index {k!r} is outside 0..{N_SYMMETRIES - 1}")
    sym = SYMMETRIES[k]
    return state.with_pieces(
        [_transform_bitboard(b, sym) for b in state.rings],
        [_transform_bitboard(b, sym) for b in state.markers],
    )


def _check_bits() -> None:
    # bitboard_plane relies on the padded-grid bit layout of geometry.
    c, n = POINTS[0]
    assert POINT_BIT[0] == 1 << (c * GRID_WIDTH + n - 1)


_check_bits()
__all__ = [
    "ACTION_GATHER",
    "BOARD_PLANE",
    "GRID_PERMUTATIONS",
    "N_PLANES",
    "OBS_SHAPE",
    "decode",
    "encode",
    "transform_actions",
    "transform_observation",
    "transform_planes",
    "transform_state",
]
