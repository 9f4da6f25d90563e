"""Greedy baseline: one turn of lookahead with the hand-made evaluation.

A "ply" for greedy is the player's whole turn: each candidate action is applied,
then any further decisions the same player owes (a row removal, then a ring
removal, then maybe another row) are chosen to maximise the evaluation too, and
the position reached when the turn passes (or the game ends) is scored with
:func:`agents.baselines.heuristics.evaluate`.  Ties are broken at random with the agent's
seeded generator, so greedy games vary with the seed.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field

from agents.base import Agent, batch_arrays
from agents.baselines.heuristics import evaluate
from agents.params import checked
from yinsh_env import State


def best_turn_value(state: State, player: int) -> float:
    """The evaluation for ``player`` after they finish their current decisions greedily.

    Explores every sequence of ``player``'s consecutive decisions (these are
    few: rows and ring removals) and returns the best value reached when the
    game ends or the other player is to act.  ``state`` is restored.
    """
    if state.is_terminal or state.to_act != player:
        return evaluate(state, player)
    best = -float("inf")
    for action in state.legal_actions():
        state.apply_unchecked(action)
        value = best_turn_value(state, player)
        state.pop()
        if value > best:
            best = value
    return best


class GreedyAgent(Agent):
    """Plays the action whose completed turn evaluates best for the mover.

    ``noise`` adds a uniform random amount in ``[0, noise)`` to each action's
    value (in evaluation units, one ring = 100): 0 plays the greedy choice with
    random tie-breaking only.
    """

    @checked
    def __init__(
        self,
        seed: int | None = None,
        noise: Annotated[float, Field(ge=0.0, le=1e6, allow_inf_nan=False)] = 0.0,
    ) -> None:
        super().__init__(seed)
        self.noise = noise

    def act(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        player = state.to_act
        work = state.copy()
        best: list[int] = []
        best_value = -float("inf")
        for action in legal:
            work.apply_unchecked(action)
            value = best_turn_value(work, player)
            work.pop()
            if self.noise:
                value += self.rng.random() * self.noise
            if value > best_value:
                best_value, best = value, [action]
            elif value == best_value:
                best.append(action)
        return best[self.rng.randrange(len(best))]

    def act_batch(
        self, observations: Any, masks: Any, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """(n,) greedy's choice in each of n games, every game's actions valued at once.

        :class:`agents.baselines.greedy_batch.GreedyOpponent` computes the values :meth:`act`
        does, in array operations, so ``make_agent("greedy")`` is a batch opponent of
        the vector environment.  Noise and ties are drawn from a generator seeded
        from the agent's own (``rng`` unused), so seeded runs repeat, though not move
        for move with :meth:`act`.
        """
        from agents.baselines.greedy_batch import (
            GreedyOpponent,  # the batched engine, loaded when asked
        )

        planes, legal = batch_arrays(observations, masks)
        if not len(planes):
            return np.zeros(0, dtype=np.int64)
        draws = np.random.default_rng(self.rng.getrandbits(64))
        return GreedyOpponent(self.noise).act_batch(planes, legal.astype(np.int8), draws)
