"""Applying one action in each of a set of games: the batched rules of a decision.

:func:`apply` groups the games by the kind of their action (place, move,
row, ring, pass) and applies each kind to its group with array operations,
then refreshes the groups' legal masks.  The transitions are those of
:class:`yinsh_env.state.State` (its docstring has the turn structure); the
differential tests compare the two ply by ply.
"""

from __future__ import annotations

import numpy as np

from ..vocabulary import RINGS_PER_PLAYER
from .legal import has_row, refresh_mask, rows_by_colour
from .state import BatchState
from .tables import (
    ACTION_ARG,
    ACTION_KIND,
    EMPTY,
    FLIP,
    MARKER_CODE,
    MOVE,
    MOVE_BETWEEN_POINTS,
    MOVE_DEST,
    MOVE_KIND,
    MOVE_ORIGIN,
    OFF,
    OVER,
    PASS_KIND,
    PLACE_KIND,
    RING,
    RING_CODE,
    RING_KIND,
    ROW,
    ROW_KIND,
    SEGMENT_POINTS,
)

__all__ = ["apply", "outcome"]


def apply(state: BatchState, games: np.ndarray, actions: np.ndarray) -> None:
    """Apply ``actions[i]`` in game ``games[i]``, in place; every action must be legal there.

    The caller checks legality (the mask); an illegal action corrupts the game.
    """
    kind = ACTION_KIND[actions]
    arg = ACTION_ARG[actions]
    me = state.to_act[games]
    present = np.bincount(kind, minlength=len(_RULES))
    only = len(present.nonzero()[0]) == 1  # one kind of action: its group is every game
    for code, rule in _RULES:
        if present[code] and only:
            rule(state, games, me, arg)
        elif present[code]:
            chosen = kind == code
            rule(state, games[chosen], me[chosen], arg[chosen])
    refresh_mask(state, games)


def _place(state: BatchState, g: np.ndarray, me: np.ndarray, point: np.ndarray) -> None:
    state.cells[g, point] = RING_CODE[me]
    own = state.ring_pos[g, me]
    slot = np.argmax(own == OFF, axis=1)
    state.ring_pos[g, me, slot] = point
    state.to_act[g] = 1 - me
    placed = (state.ring_pos[g] != OFF).sum(axis=(1, 2)) + state.removed[g].sum(axis=1)
    state.phase[g[placed >= 2 * RINGS_PER_PLAYER]] = MOVE


def _move(state: BatchState, g: np.ndarray, me: np.ndarray, move: np.ndarray) -> None:
    origin, dest = MOVE_ORIGIN[move], MOVE_DEST[move]
    cells = state.cells
    cells[g, origin] = MARKER_CODE[me]
    cells[g, dest] = RING_CODE[me]
    own = state.ring_pos[g, me]
    state.ring_pos[g, me] = np.where(own == origin[:, None], dest[:, None], own)
    between = MOVE_BETWEEN_POINTS[move]
    flipped = FLIP[cells[g[:, None], between]]
    cells[g[:, None], between] = flipped
    state.pool[g] -= 1
    state.passes[g] = 0
    state.mover[g] = me
    opp = 1 - me
    white, black = rows_by_colour(cells[g])
    own_row = np.where(me == 0, white, black)
    flipped_to_opp = (flipped == MARKER_CODE[opp][:, None]).any(axis=1)
    opp_row = ~own_row & flipped_to_opp & np.where(me == 0, black, white)
    over = ~own_row & ~opp_row & (state.pool[g] <= 0)
    state.to_act[g] = np.where(own_row, me, opp)
    state.phase[g] = np.where(own_row | opp_row, ROW, np.where(over, OVER, MOVE))
    quiet = ~own_row & ~opp_row & ~over
    state.mover[g[quiet]] = -1


def _row(state: BatchState, g: np.ndarray, me: np.ndarray, segment: np.ndarray) -> None:
    state.cells[g[:, None], SEGMENT_POINTS[segment]] = EMPTY
    state.pool[g] += 5
    state.phase[g] = RING


def _ring(state: BatchState, g: np.ndarray, me: np.ndarray, point: np.ndarray) -> None:
    state.cells[g, point] = EMPTY
    own = state.ring_pos[g, me]
    state.ring_pos[g, me] = np.where(own == point[:, None], OFF, own)
    state.removed[g, me] += 1
    won = state.removed[g, me] >= state.rings_to_win
    state.phase[g[won]] = OVER
    rest, me = g[~won], me[~won]
    more = has_row(state.cells[rest], MARKER_CODE[me])
    state.phase[rest[more]] = ROW
    _after_rows(state, rest[~more], me[~more])


def _after_rows(state: BatchState, g: np.ndarray, player: np.ndarray) -> None:
    """``player`` has no rows left in games ``g``: hand over resolution or the move."""
    mover = state.mover[g]
    opp = 1 - mover
    theirs = (player == mover) & has_row(state.cells[g], MARKER_CODE[opp])
    state.to_act[g] = opp
    ending = ~theirs & (state.pool[g] <= 0)
    state.phase[g] = np.where(theirs, ROW, np.where(ending, OVER, MOVE))
    state.mover[g[~theirs & ~ending]] = -1


def _pass(state: BatchState, g: np.ndarray, me: np.ndarray, _: np.ndarray) -> None:
    state.passes[g] += 1
    state.to_act[g] = 1 - me
    state.phase[g[state.passes[g] >= 2]] = OVER


_RULES = (
    (PLACE_KIND, _place),
    (MOVE_KIND, _move),
    (ROW_KIND, _row),
    (RING_KIND, _ring),
    (PASS_KIND, _pass),
)


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
