"""Applying one action in each of a set of games: the batched rules of a decision.

:func:`apply` groups the games by the kind of their action (place, move,
row, ring, pass) and applies each kind to its group with array operations,
then refreshes the groups' legal masks.  The transitions are those of
:class:`yinsh_env.engine.state.State` (its docstring has the turn structure); the
differential tests compare the two ply by ply.  :func:`play_opening` and
:func:`play_random_turns` apply uniformly random decisions (the arena's
opening, the random opponent's turns).
"""

from __future__ import annotations

import numpy as np

from yinsh_env.engine.actions import MOVE_OFFSET, PASS_ACTION, PLACE_OFFSET, RING_OFFSET, ROW_OFFSET
from yinsh_env.engine.vocabulary import RINGS_PER_PLAYER
from yinsh_env.vector.batch_agents import random_legal
from yinsh_env.vector.batch_state import BatchState
from yinsh_env.vector.legal import random_draws, refresh_mask, row_bits
from yinsh_env.vector.tables import (
    ACTION_ARG,
    ACTION_KIND,
    EMPTY,
    FLIP,
    MARKER_CODE,
    MOVE,
    MOVE_BETWEEN_POINTS,
    MOVE_DELTA,
    MOVE_DEST,
    MOVE_KIND,
    MOVE_ORIGIN,
    MOVE_RAYS,
    N_CELLS,
    N_PHASES,
    N_RAYS,
    OFF,
    OVER,
    PASS_KIND,
    PLACE,
    PLACE_KIND,
    POINT_DELTA,
    POINT_RAYS,
    RING,
    RING_CODE,
    RING_KIND,
    RINGS_PER_SIDE,
    ROW,
    ROW_KIND,
    SEGMENT_DELTA,
    SEGMENT_POINTS,
    SEGMENT_RAYS,
)

__all__ = ["apply", "outcome", "play_random_turns"]


def apply(state: BatchState, games: np.ndarray, actions: np.ndarray, refresh: bool = True) -> None:
    """Apply ``actions[i]`` in game ``games[i]``, in place; every action must be legal there.

    The caller checks legality (the mask); an illegal action corrupts the game.
    ``refresh=False`` leaves the masks of ``games`` stale, for a caller that
    refreshes those it needs (:func:`~.legal.refresh_mask`) and draws the
    others' actions from the positions (:func:`play_random_turns`).
    """
    kind = ACTION_KIND[actions]
    arg = ACTION_ARG[actions]
    me = state.to_act[games]
    present = np.bincount(kind, minlength=len(_RULES)).tolist()
    if sum(map(bool, present)) == 1:  # one kind of action: its group is every game
        _RULES[next(code for code, count in enumerate(present) if count)](state, games, me, arg)
    else:
        for code, rule in enumerate(_RULES):
            if present[code]:
                chosen = kind == code
                rule(state, games[chosen], me[chosen], arg[chosen])
    if refresh:
        refresh_mask(state, games)


def play_opening(
    state: BatchState, games: np.ndarray, plies: int, rng: np.random.Generator
) -> None:
    """``plies`` uniformly random ring placements in each of ``games``, just started (their
    masks fresh), as the arena opens its games; their masks are left fresh."""
    for _ in range(plies):
        apply(state, games, random_legal(state.mask, rng, games))


def play_random_turns(
    state: BatchState, games: np.ndarray, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Uniformly random decisions in each of ``games`` for as long as the player to act at
    the call stays to act, at most one of each phase, in the order place, move, row,
    ring: a move, the row it made and the ring that row costs in one call, each drawn
    from the position the one before left (masks left stale).

    Returns the decisions, (games, actions) phase by phase, for replays.
    """
    phase = state.phase[games]
    player = state.to_act[games]
    present = np.bincount(phase, minlength=N_PHASES).tolist()
    # Positions in ``games`` of each phase's games; a move may hand its games on to the
    # row phase and a row always hands them on to the ring phase, the same player to act.
    groups = {which: (phase == which).nonzero()[0] for which in _PHASES if present[which]}
    played: list[tuple[np.ndarray, np.ndarray]] = []
    for which in _PHASES:
        going = groups.get(which)
        if going is None or not going.size:
            continue
        g, me = games[going], player[going]
        actions = random_draws(state, which, g, me, rng.random(g.size))
        _apply_phase(state, which, g, me, actions)
        played.append((g, actions))
        if which == MOVE:
            rows = going[(state.phase[g] == ROW) & (state.to_act[g] == me)]
            groups[ROW] = np.concatenate([groups.get(ROW, rows[:0]), rows])
        elif which == ROW:
            groups[RING] = np.concatenate([groups.get(RING, going[:0]), going])
    return played


def _apply_phase(
    state: BatchState, which: int, g: np.ndarray, me: np.ndarray, actions: np.ndarray
) -> None:
    """Apply ``actions``, all legal in games ``g`` of phase ``which`` (a pass in a move's)."""
    if which == MOVE:
        stuck = actions == PASS_ACTION
        if stuck.any():
            _pass(state, g[stuck], me[stuck], actions[stuck])
            g, me, actions = g[~stuck], me[~stuck], actions[~stuck]
        if g.size:
            _move(state, g, me, actions - MOVE_OFFSET)
    elif which == PLACE:
        _place(state, g, me, actions)  # PLACE_OFFSET is 0
    elif which == ROW:
        _row(state, g, me, actions - ROW_OFFSET)
    else:
        _ring(state, g, me, actions - RING_OFFSET)


def _place(state: BatchState, g: np.ndarray, me: np.ndarray, point: np.ndarray) -> None:
    state.cells.reshape(-1)[g * N_CELLS + point] = RING_CODE[me]
    _set_ring(state, g, me, OFF, point)
    state.to_act[g] = 1 - me
    placed = (state.ring_pos[g] != OFF).sum(axis=(1, 2)) + state.removed[g].sum(axis=1)
    state.phase[g[placed >= 2 * RINGS_PER_PLAYER]] = MOVE
    _shift_rays(state, g, POINT_RAYS, POINT_DELTA, point)


def _move(state: BatchState, g: np.ndarray, me: np.ndarray, move: np.ndarray) -> None:
    cells = state.cells.reshape(-1)  # flat indices: cheaper than two-axis fancy indexing
    base = g * N_CELLS
    origin, dest = MOVE_ORIGIN[move], MOVE_DEST[move]
    cells[base + origin] = MARKER_CODE[me]
    cells[base + dest] = RING_CODE[me]
    _set_ring(state, g, me, origin, dest)
    between = MOVE_BETWEEN_POINTS.take(move, axis=0, mode="clip")
    between += base[:, None]  # padding: the game's own OFF cell
    flipped = FLIP[cells[between]]
    cells[between] = flipped
    pool = state.pool[g] - 1
    state.pool[g] = pool
    state.passes[g] = 0
    _shift_rays(state, g, MOVE_RAYS, MOVE_DELTA, move)
    rows = row_bits(state.cells[g])
    flipped_to_opp = (flipped == MARKER_CODE[1 - me][:, None]).any(axis=1)
    case = _AFTER_MOVE[me, rows, flipped_to_opp.view(np.int8), (pool <= 0).view(np.int8)]
    state.phase[g] = case & 7
    state.to_act[g] = np.where(case & 8, me, 1 - me)
    state.mover[g] = np.where(case & 16, me, -1)


def _row(state: BatchState, g: np.ndarray, me: np.ndarray, segment: np.ndarray) -> None:
    state.cells.reshape(-1)[(g * N_CELLS)[:, None] + SEGMENT_POINTS[segment]] = EMPTY
    _shift_rays(state, g, SEGMENT_RAYS, SEGMENT_DELTA, segment)
    state.pool[g] += 5
    state.phase[g] = RING


def _ring(state: BatchState, g: np.ndarray, me: np.ndarray, point: np.ndarray) -> None:
    """Remove a ring; then more rows of ``me``, the other side's rows, or the next move."""
    state.cells.reshape(-1)[g * N_CELLS + point] = EMPTY
    _set_ring(state, g, me, point, OFF)
    _shift_rays(state, g, POINT_RAYS, POINT_DELTA, point, leaving=True)
    counts = state.removed.reshape(-1)
    mine = g * 2 + me
    removed = counts[mine] + 1
    counts[mine] = removed
    mover = state.mover[g]
    case = _AFTER_RING[
        me,
        (me == mover).view(np.int8),
        row_bits(state.cells[g]),
        (removed >= state.rings_to_win).view(np.int8),
        (state.pool[g] <= 0).view(np.int8),
    ]
    state.phase[g] = case & 7
    state.to_act[g] = np.where(case & 8, me, 1 - mover)
    state.mover[g] = np.where(case & 16, mover, -1)


def _set_ring(
    state: BatchState, g: np.ndarray, me: np.ndarray, old: np.ndarray | int, new: np.ndarray | int
) -> None:
    """In each game, the first of ``me``'s ring slots holding ``old`` now holds ``new``."""
    sides = g * 2 + me
    own = state.ring_pos.reshape(-1, RINGS_PER_SIDE).take(sides, axis=0, mode="clip")
    slot = (own == (old[:, None] if isinstance(old, np.ndarray) else old)).argmax(axis=1)
    state.ring_pos.reshape(-1)[sides * RINGS_PER_SIDE + slot] = new


def _shift_rays(
    state: BatchState,
    g: np.ndarray,
    rays: np.ndarray,
    delta: np.ndarray,
    rows: np.ndarray,
    leaving: bool = False,
) -> None:
    """Change the ray codes of games ``g`` by rows ``rows`` of a change table (``rays``,
    ``delta``: a table of :mod:`.tables`), negated when a ring is ``leaving``.

    A row's rays are distinct but for weight-0 padding, so a gather, an add and
    a scatter are exact (duplicate padding entries write back what they read).
    """
    flat = state.ray_codes.reshape(-1)
    index = rays.take(rows, axis=0, mode="clip")
    index += (g * N_RAYS)[:, None]
    codes = flat.take(index, mode="clip")
    change = delta.take(rows, axis=0, mode="clip")
    if leaving:
        codes -= change
    else:
        codes += change
    flat[index] = codes


def _pass(state: BatchState, g: np.ndarray, me: np.ndarray, _: np.ndarray) -> None:
    state.passes[g] += 1
    state.to_act[g] = 1 - me
    state.phase[g[state.passes[g] >= 2]] = OVER


def _after_move() -> np.ndarray:
    """[me, row bits, a marker flipped to the other colour, pool empty] -> the case code:
    phase | 8 if ``me`` acts next | 16 if the mover stays recorded.

    The mover's own rows come first; the other side's rows count only when the
    move flipped a marker to their colour (a row of theirs cannot exist before
    the move); otherwise the game ends on an empty pool or the turn passes.
    """
    table = np.zeros((2, 4, 2, 2), dtype=np.int64)
    for me, bits, flipped, empty in np.ndindex(*table.shape):
        if bits >> me & 1:
            table[me, bits, flipped, empty] = ROW | 8 | 16
        elif flipped and bits >> (1 - me) & 1:
            table[me, bits, flipped, empty] = ROW | 16
        elif empty:
            table[me, bits, flipped, empty] = OVER | 16
        else:
            table[me, bits, flipped, empty] = MOVE
    return table


def _after_ring() -> np.ndarray:
    """[me, me is the mover, row bits, won, pool empty] -> the case code (as _after_move's,
    with bit 8 meaning ``me`` acts next, else the mover's opponent).

    A win ends the game; more rows of ``me`` are resolved next; then, when
    ``me`` is the mover, the opponent's rows; else the game ends on an empty
    pool or the mover's opponent moves.
    """
    table = np.zeros((2, 2, 4, 2, 2), dtype=np.int64)
    for me, moving, bits, won, empty in np.ndindex(*table.shape):
        if won:
            code = OVER | 8 | 16
        elif bits >> me & 1:
            code = ROW | 8 | 16
        elif moving and bits >> (1 - me) & 1:
            code = ROW | 16
        elif empty:
            code = OVER | 16
        else:
            code = MOVE
        table[me, moving, bits, won, empty] = code
    return table


_AFTER_MOVE = _after_move()
#: The phases of decisions, in the order play_random_turns takes them.
_PHASES = (PLACE, MOVE, ROW, RING)
_AFTER_RING = _after_ring()
#: The rule of each action kind, indexed by kind.
_RULES = (_place, _move, _row, _ring, _pass)
assert (PLACE_KIND, MOVE_KIND, ROW_KIND, RING_KIND, PASS_KIND) == (0, 1, 2, 3, 4)


def outcome(state: BatchState, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(winner, termination) of finished ``games``: winner 0/1 or -1 for a draw;
    termination 0 rings, 1 pool, 2 passes (scalar ``State.winner`` / ``end_reason``)."""
    removed = state.removed[games]
    white, black = removed[:, 0], removed[:, 1]
    target = state.rings_to_win
    w_done, b_done = white >= target, black >= target
    by_count = np.where(white > black, 0, np.where(black > white, 1, -1))
    winner = np.where(
        w_done & ~b_done,
        0,
        np.where(b_done & ~w_done, 1, np.where(w_done, state.mover[games], by_count)),
    )
    termination = np.where(
        np.maximum(white, black) >= target, 0, np.where(state.passes[games] >= 2, 2, 1)
    )
    return winner, termination


assert PLACE_OFFSET == 0
