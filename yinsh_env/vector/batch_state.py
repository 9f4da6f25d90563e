"""The batched game state: N games as a record of arrays with a leading batch axis.

:class:`BatchState` holds what :class:`yinsh_env.engine.state.State` holds, one row
per game: the board per point (``cells``, codes of :mod:`.tables`), each
side's ring points (``ring_pos``, so a move's rays start from five points
rather than the whole board), rings removed, the pool, the player to act,
the phase, whose move is being resolved, consecutive passes, and the legal
actions as a mask, PGX-style part of the state and kept up to date by
:func:`yinsh_env.vector.step.apply`.  ``ray_codes`` caches what ring moves
read: for every point and direction, the kinds of the cells along that ray as
one base-3 number; a decision changes the few rays through the points it
changes (table rows of :mod:`.tables`), so legal moves are one table lookup
per ray of the player's rings instead of a walk along it.

Conversions to and from the scalar engine (:func:`from_states`,
:func:`to_state`) serve tests, set-up positions and agents that read an
engine state; they loop over the games they are given, the rules never do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from yinsh_env.engine.actions import N_ACTIONS, PLACE_OFFSET
from yinsh_env.engine.geometry import N_POINTS, POINT_BIT, bits_to_points
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import (
    DEFAULT_RINGS_TO_WIN,
    RINGS_PER_PLAYER,
    TOTAL_MARKERS,
    Phase,
    Player,
)
from yinsh_env.vector.tables import (
    BLOCK,
    CELL_KIND,
    EMPTY_RAY_CODES,
    MARKER_CODE,
    MAX_RAY,
    N_CELLS,
    N_RAYS,
    OFF,
    RAY_POINTS,
    RING_CODE,
    RINGS_PER_SIDE,
)

__all__ = ["BatchState", "count_rays", "from_states", "new_batch", "reset_games", "to_state"]

#: The legal actions at the start of a game: a ring on any point.
START_MASK = np.zeros(N_ACTIONS, dtype=np.bool_)
START_MASK[PLACE_OFFSET : PLACE_OFFSET + N_POINTS] = True
START_MASK.flags.writeable = False


@dataclass
class BatchState:
    """N games of YINSH; every field's first axis is the game.

    Fields: ``cells`` (N, 86) int8 codes (the 86th cell is the padding point,
    always BLOCK); ``ring_pos`` (N, 2, 5) each side's ring points (OFF for
    none); ``removed`` (N, 2); ``pool``, ``to_act``, ``phase`` (a
    :class:`~yinsh_env.engine.vocabulary.Phase`), ``mover`` (-1 outside row/ring
    resolution), ``passes`` (N,); ``mask`` (N, 2142) bool, the legal actions
    of the player to act; ``ray_codes`` (N, 86 * 6) int16 (module docstring).
    ``rings_to_win`` is shared by the batch.
    """

    cells: np.ndarray
    ring_pos: np.ndarray
    removed: np.ndarray
    pool: np.ndarray
    to_act: np.ndarray
    phase: np.ndarray
    mover: np.ndarray
    passes: np.ndarray
    mask: np.ndarray
    ray_codes: np.ndarray
    rings_to_win: int = DEFAULT_RINGS_TO_WIN

    @property
    def num_games(self) -> int:
        return int(self.cells.shape[0])

    def take(self, games: np.ndarray) -> BatchState:
        """A new batch of copies of ``games`` (an index array)."""
        return BatchState(
            **{name: getattr(self, name)[games].copy() for name in _ARRAYS},
            rings_to_win=self.rings_to_win,
        )


_ARRAYS = tuple(f.name for f in fields(BatchState) if f.name != "rings_to_win")


def _check_rings_to_win(rings_to_win: int) -> int:
    if isinstance(rings_to_win, bool) or not isinstance(rings_to_win, (int, np.integer)):
        raise ValueError(f"rings_to_win must be an integer, got {rings_to_win!r}")
    if not 1 <= rings_to_win <= RINGS_PER_PLAYER:
        raise ValueError(f"rings_to_win must be in 1..{RINGS_PER_PLAYER}, got {rings_to_win}")
    return int(rings_to_win)


def new_batch(num_games: int, rings_to_win: int = DEFAULT_RINGS_TO_WIN) -> BatchState:
    """``num_games`` new games at the start of ring placement."""
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
        raise ValueError(f"num_games must be an integer, got {num_games!r}")
    if num_games < 1:
        raise ValueError(f"num_games must be at least 1, got {num_games}")
    n = int(num_games)
    state = BatchState(
        cells=np.zeros((n, N_CELLS), dtype=np.int8),
        ring_pos=np.full((n, 2, RINGS_PER_SIDE), OFF, dtype=np.int64),
        removed=np.zeros((n, 2), dtype=np.int64),
        pool=np.zeros(n, dtype=np.int64),
        to_act=np.zeros(n, dtype=np.int64),
        phase=np.zeros(n, dtype=np.int64),
        mover=np.zeros(n, dtype=np.int64),
        passes=np.zeros(n, dtype=np.int64),
        mask=np.zeros((n, N_ACTIONS), dtype=np.bool_),
        ray_codes=np.zeros((n, N_RAYS), dtype=np.int16),
        rings_to_win=_check_rings_to_win(rings_to_win),
    )
    reset_games(state, np.arange(n))
    return state


def reset_games(state: BatchState, games: np.ndarray) -> None:
    """Start new games in the rows ``games`` (an index array), in place."""
    state.cells[games] = 0
    state.cells[games, OFF] = BLOCK
    state.ring_pos[games] = OFF
    state.removed[games] = 0
    state.pool[games] = TOTAL_MARKERS
    state.to_act[games] = Player.WHITE
    state.phase[games] = Phase.PLACE
    state.mover[games] = -1
    state.passes[games] = 0
    state.mask[games] = START_MASK
    state.ray_codes[games] = EMPTY_RAY_CODES


def count_rays(cells: np.ndarray) -> np.ndarray:
    """(n, 86 * 6) int16: the ray codes of positions ``cells`` (n, 86), from scratch."""
    kinds = np.take(CELL_KIND, cells, axis=0)[:, RAY_POINTS]  # (n, 86, 6, 9)
    codes = (kinds * 3 ** np.arange(MAX_RAY, dtype=np.int16)).sum(axis=3, dtype=np.int16)
    return np.asarray(codes.reshape(cells.shape[0], N_RAYS))


def from_states(states: Sequence[State]) -> BatchState:
    """A batch holding copies of scalar states (all of one ``rings_to_win``)."""
    if not states:
        raise ValueError("from_states needs at least one state")
    targets = {s.rings_to_win for s in states}
    if len(targets) != 1:
        raise ValueError(f"states of one batch share rings_to_win, got {sorted(targets)}")
    batch = new_batch(len(states), targets.pop())
    for i, s in enumerate(states):
        for player in (0, 1):
            rings = bits_to_points(s.rings[player])
            batch.cells[i, rings] = RING_CODE[player]
            batch.cells[i, bits_to_points(s.markers[player])] = MARKER_CODE[player]
            batch.ring_pos[i, player, : len(rings)] = rings
        batch.removed[i] = s.removed
        batch.pool[i] = s.pool
        batch.to_act[i] = s.to_act
        batch.phase[i] = s.phase
        batch.mover[i] = s.mover
        batch.passes[i] = s.passes
        batch.mask[i] = s.legal_mask().astype(np.bool_)
    batch.ray_codes[:] = count_rays(batch.cells)
    return batch


def to_state(batch: BatchState, game: int) -> State:
    """Game ``game`` of the batch as a scalar :class:`State` (no history)."""
    state = State(rings_to_win=batch.rings_to_win)
    cells = batch.cells[game, :N_POINTS]
    for player in (0, 1):
        state.rings[player] = sum(POINT_BIT[p] for p in np.flatnonzero(cells == RING_CODE[player]))
        state.markers[player] = sum(
            POINT_BIT[p] for p in np.flatnonzero(cells == MARKER_CODE[player])
        )
    state.removed = [int(v) for v in batch.removed[game]]
    state.pool = int(batch.pool[game])
    state.to_act = Player(int(batch.to_act[game]))
    state.phase = Phase(int(batch.phase[game]))
    state.mover = int(batch.mover[game])
    state.passes = int(batch.passes[game])
    return state
