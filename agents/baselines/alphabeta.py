"""Alpha-beta baseline: negamax with iterative deepening and a transposition table.

YINSH lets one player make several decisions in a row (a move, then a row
removal, then a ring removal, maybe more), and a move can hand the next
decisions to the opponent (their rows made by our flips).  The search is
therefore a negamax in which every value is from the point of view of the
player to act at that node, and a child's value is negated only when the player
to act changed; the opponent's row removals are searched like any other
decisions.

Depth counts *turns*, not decisions: a placement, a ring move or a pass costs
one unit, a row or ring removal costs nothing, so that a leaf is never cut in the
middle of a row resolution (this is the search's quiescence).

Moves are ordered by the transposition-table move, then (at nodes two or more
units from the horizon) by the static evaluation of the child, otherwise by the
history heuristic.  The table is keyed on the Zobrist hash and kept between
moves of a game; :meth:`AlphaBetaAgent.reset` clears it.

A :func:`~agents.search.stopping.stop_when` condition (the engine protocol's
``stop``) is polled with the clock and ends the search once depth 1 is
complete, with the best move of the last completed depth.
"""

from __future__ import annotations

import time
from typing import Annotated, Final

from pydantic import Field

from agents.base import Agent
from agents.baselines.heuristics import WIN_SCORE, evaluate
from agents.params import Seconds, checked
from agents.search.stopping import current_stop
from yinsh_env import PASS_ACTION, ROW_OFFSET, Phase, State

_EXACT: Final = 0
_LOWER: Final = 1  # value is a lower bound (a beta cut-off)
_UPPER: Final = 2  # value is an upper bound (no move raised alpha)
_INF: Final = float("inf")
_CLOCK_CHECK_MASK: Final = 255  # look at the clock every 256 nodes
#: Deepest search a spec may ask for, in turns (a game lasts well under 100).
MAX_DEPTH: Final = 64


class _OutOfTime(Exception):
    """Raised inside the search when the time budget is spent."""


def _costs_depth(action: int) -> bool:
    """Placements, ring moves and passes cost one unit of depth; removals are free."""
    return action < ROW_OFFSET or action == PASS_ACTION


class AlphaBetaAgent(Agent):
    """Negamax alpha-beta search with iterative deepening to ``depth`` turns.

    ``depth``: turns searched in the ring-move phase (row and ring removals are
    free); ``place_depth``: the same during ring placement, where 85 choices
    per ply make deep search slow and the evaluation (ring mobility) is what
    matters; ``time``: seconds per decision, 0 for no limit (iterative
    deepening stops at the last depth completed in time, and never before
    depth 1); ``tt_size``: transposition-table entries kept before it is
    cleared.
    """

    @checked
    def __init__(
        self,
        seed: int | None = None,
        depth: Annotated[int, Field(ge=1, le=MAX_DEPTH)] = 2,
        place_depth: Annotated[int, Field(ge=1, le=MAX_DEPTH)] = 1,
        time: Seconds = 0.0,
        tt_size: Annotated[int, Field(ge=0, le=100_000_000)] = 500_000,
    ) -> None:
        super().__init__(seed)
        self.depth = depth
        self.place_depth = place_depth
        self.time_budget = time
        self.tt_size = tt_size
        self._tt: dict[int, tuple[int, int, float, int]] = {}
        self._history: dict[int, int] = {}
        self._deadline = 0.0
        self._node_limit = 0  # 0: no limit (act_with_budget sets one)
        #: Nodes visited by the last search, and the depth it completed.
        self.nodes = 0
        self.completed_depth = 0
        #: Value of the last chosen action for the player who chose it.
        self.last_value = 0.0

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._tt.clear()
        self._history.clear()

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """:meth:`act` limited to ``sims`` nodes and/or ``time`` seconds (depth stays a cap)."""
        saved = self.time_budget, self._node_limit
        if time is not None:
            self.time_budget = max(time, 1e-3)
        if sims is not None:
            self._node_limit = max(1, sims)
        try:
            return self.act(state)
        finally:
            self.time_budget, self._node_limit = saved

    # --- the root ----------------------------------------------------------------

    def act(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        work = state.copy()
        if len(self._tt) > self.tt_size:
            self._tt.clear()
        max_depth = self.place_depth if state.phase == Phase.PLACE else self.depth
        self._deadline = time.perf_counter() + self.time_budget if self.time_budget else 0.0
        self.nodes = 0
        self.completed_depth = 0

        order = list(legal)
        self.rng.shuffle(order)  # random tie-breaking among equal values
        best_action, best_value = order[0], -_INF
        for depth in range(1, max_depth + 1):
            try:
                action, value, scores = self._search_root(work, order, depth)
            except _OutOfTime:
                break
            best_action, best_value = action, value
            self.completed_depth = depth
            if abs(value) >= WIN_SCORE / 2:
                break  # a forced result: deeper search cannot change it
            # Search the best moves of this iteration first in the next one.
            order.sort(key=lambda a: -scores[a])
        self.last_value = best_value
        return best_action

    def _search_root(
        self, state: State, order: list[int], depth: int
    ) -> tuple[int, float, dict[int, float]]:
        me = state.to_act
        alpha = -_INF
        best_action = order[0]
        scores: dict[int, float] = {}
        for action in order:
            state.apply_unchecked(action)
            child_depth = depth - 1 if _costs_depth(action) else depth
            # Moves that do not raise alpha get upper bounds only: enough to
            # choose, and to order the next iteration.
            value = self._child_value(state, me, child_depth, alpha, _INF)
            state.pop()
            scores[action] = value
            if value > alpha:
                alpha, best_action = value, action
        return best_action, alpha, scores

    # --- the tree ----------------------------------------------------------------

    def _child_value(self, state: State, me: int, depth: int, alpha: float, beta: float) -> float:
        """Value for ``me`` of the position after one of ``me``'s decisions."""
        if state.phase == Phase.OVER:
            return self._terminal(state, me)
        if state.to_act == me:
            return self._negamax(state, depth, alpha, beta)
        return -self._negamax(state, depth, -beta, -alpha)

    @staticmethod
    def _terminal(state: State, me: int) -> float:
        # Prefer quick wins and slow losses: the score shrinks with the game's length.
        winner = state.winner
        if winner is None:
            return 0.0
        return WIN_SCORE - state.ply if winner == me else state.ply - WIN_SCORE

    def _negamax(self, state: State, depth: int, alpha: float, beta: float) -> float:
        """Value of ``state`` (not over) for the player to act, within (alpha, beta)."""
        self.nodes += 1
        if not self.nodes & _CLOCK_CHECK_MASK:
            if self._deadline and time.perf_counter() > self._deadline:
                raise _OutOfTime
            if self._node_limit and self.nodes > self._node_limit:
                raise _OutOfTime
            stop = current_stop()
            if stop is not None and self.completed_depth and stop():
                raise _OutOfTime
        me = state.to_act
        quiet = state.phase <= Phase.MOVE  # PLACE or MOVE: no removal pending
        if depth <= 0 and quiet:
            return evaluate(state, me)

        key = state.zobrist()
        entry = self._tt.get(key)
        tt_move = -1
        if entry is not None:
            entry_depth, flag, value, tt_move = entry
            if entry_depth >= depth:
                if flag == _EXACT:
                    return value
                if flag == _LOWER and value >= beta:
                    return value
                if flag == _UPPER and value <= alpha:
                    return value

        moves = self._ordered(state, depth, tt_move, me)
        alpha_start = alpha
        best_value = -_INF
        best_move = moves[0]
        for action in moves:
            state.apply_unchecked(action)
            value = self._child_value(
                state, me, depth - 1 if _costs_depth(action) else depth, alpha, beta
            )
            state.pop()
            if value > best_value:
                best_value, best_move = value, action
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        if _costs_depth(action):
                            self._history[action] = self._history.get(action, 0) + depth * depth
                        break

        if best_value <= alpha_start:
            flag = _UPPER
        elif best_value >= beta:
            flag = _LOWER
        else:
            flag = _EXACT
        self._tt[key] = (depth, flag, best_value, best_move)
        return best_value

    def _ordered(self, state: State, depth: int, tt_move: int, me: int) -> list[int]:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal
        if depth >= 2 and state.phase == Phase.MOVE:
            # Close to the root: order by the static value of each child.
            scored = []
            for action in legal:
                state.apply_unchecked(action)
                scored.append((evaluate(state, me), action))
                state.pop()
            scored.sort(reverse=True)
            moves = [a for _, a in scored]
        else:
            history = self._history
            moves = sorted(legal, key=lambda a: -history.get(a, 0))
        if tt_move >= 0 and tt_move in legal:
            moves.remove(tt_move)
            moves.insert(0, tt_move)
        return moves
