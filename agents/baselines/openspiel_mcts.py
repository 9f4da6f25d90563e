"""OpenSpiel's own MCTS (``open_spiel.python.algorithms.mcts.MCTSBot``) as an agent.

Spec ``openspiel_mcts:sims=100,rollouts=1,c=2.0,solve=true``: the bot plays
YINSH through the OpenSpiel game of :mod:`yinsh_env.envs.openspiel` (UCT with
random-rollout evaluation, optionally MCTS-Solver), so that an OpenSpiel
algorithm can meet the project's baselines in the arena::

    yinsh-eval openspiel_mcts:sims=50 random --games 20 --workers 2

It needs the optional extra ``pip install -e ".[openspiel]"``; without it the
agent fails when it is built, with the install hint.  Each decision starts a
fresh search from the position (the bot keeps no tree between decisions).
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field

from agents.base import Agent
from agents.params import Sims, checked
from yinsh_env import State


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's ``MCTSBot`` over the ``yinsh`` OpenSpiel game."""

    @checked
    def __init__(
        self,
        seed: int | None = None,
        sims: Sims = 100,
        rollouts: Annotated[int, Field(ge=1, le=10_000)] = 1,
        c: Annotated[float, Field(ge=0.0, le=1e3, allow_inf_nan=False)] = 2.0,
        solve: bool = True,
    ) -> None:
        super().__init__(seed)
        import pyspiel  # noqa: F401  (after yinsh_env.envs.openspiel's clear ImportError)

        import yinsh_env.envs.openspiel  # noqa: F401  (registers the game)

        self.sims, self.rollouts, self.c, self.solve = sims, rollouts, c, solve
        self.np_rng = np.random.RandomState(seed)
        self._games: dict[int, Any] = {}
        self._bots: dict[int, Any] = {}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self.np_rng.seed(seed)

    def _bot(self, rings_to_win: int) -> tuple[Any, Any]:
        """The OpenSpiel game and bot for this variant (built once each)."""
        if rings_to_win not in self._bots:
            import pyspiel
            from open_spiel.python.algorithms import mcts

            game = pyspiel.load_game("yinsh", {"rings_to_win": rings_to_win})
            evaluator = mcts.RandomRolloutEvaluator(self.rollouts, self.np_rng)
            self._games[rings_to_win] = game
            self._bots[rings_to_win] = mcts.MCTSBot(
                game, self.c, self.sims, evaluator, random_state=self.np_rng, solve=self.solve
            )
        return self._games[rings_to_win], self._bots[rings_to_win]

    def act(self, state: State) -> int:
        return self.act_with_budget(state)

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """A search of ``sims`` simulations (default the spec's); ``time`` is not honoured."""
        game, bot = self._bot(state.rings_to_win)
        bot.max_simulations = self.sims if sims is None else max(1, sims)
        return int(bot.step(game.new_initial_state(state)))
