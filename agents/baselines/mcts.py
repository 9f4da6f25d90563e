"""The MCTS baseline: the search core (:mod:`agents.search`) configured as UCT with rollouts.

UCB1 selection with unexplored actions first (:class:`~agents.search.rules.UCT`),
leaves valued by random rollouts cut off after ``rollout_limit`` decisions and
scored by the hand-made evaluation, mixed with the leaf's own evaluation by
``eval_weight`` (:class:`~agents.search.rollout.RolloutEvaluator`), values
backed up per player, and MCTS-Solver proofs: random rollouts judge a won
position and a merely good one alike, so a finished game is proven for its
winner and proofs climb the tree (:mod:`agents.search.tree`); selection skips
children proven lost, the root plays a proven win at once, and the search stops
once the root is proven.  ``rollout_limit=0,eval_weight=0`` is plain UCT with
rollouts to the end of the game, weaker than the default (docs/guide/agents.md).
"""

from __future__ import annotations

import time
from typing import Annotated

import numpy as np
from pydantic import Field

from agents.base import Agent
from agents.params import Fraction, Seconds, Sims, checked
from agents.search import UCT, Analysis, RolloutEvaluator, Search, run_searches
from agents.search.budget import UNBOUNDED
from yinsh_env import State


class MCTSAgent(Agent):
    """UCT search: ``sims`` simulations per decision (or ``time`` seconds if given).

    ``c`` is the exploration constant of UCB1 on rewards in [0, 1] (the search
    keeps values in [-1, 1], where it is ``2 c``); ``rollout_limit`` caps the
    random decisions per rollout (0: play to the end), a cut-off rollout being
    scored by the evaluation; ``eval_weight`` is the weight of the leaf's
    evaluation against the rollout's result (0: the rollout alone).
    """

    @checked
    def __init__(
        self,
        seed: int | None = None,
        sims: Sims = 400,
        time: Seconds = 0.0,
        c: Annotated[float, Field(ge=0.0, le=1e3, allow_inf_nan=False)] = 1.0,
        rollout_limit: Annotated[int, Field(ge=0, le=10_000)] = 10,
        eval_weight: Fraction = 0.5,
    ) -> None:
        super().__init__(seed)
        self.sims = sims
        self.time_budget = time
        self.rules = UCT(c=2.0 * c)
        self.evaluator = RolloutEvaluator(self.rng, rollout_limit, eval_weight)
        #: UCT draws nothing itself (the evaluator holds the randomness).
        self._np_rng = np.random.default_rng(0)
        #: Simulations run for the last decision.
        self.last_sims = 0

    def act(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self.search(state).best_action()

    def analyse(self, state: State) -> Analysis:
        """Search ``state`` and report the root's value, priors, visits and Q per action."""
        return self.search(state).analysis()

    def search(self, state: State) -> Search:
        """Run the simulations from ``state`` (not modified) and return the finished search."""
        deadline = time.perf_counter() + self.time_budget if self.time_budget else 0.0
        search = Search(
            state.copy(),
            self.rules,
            UNBOUNDED if self.time_budget else self.sims,
            self._np_rng,
            make_leaf=self.evaluator.leaf,
            solver=True,
            deadline=deadline,
        )
        run_searches([search], self.evaluator)
        self.last_sims = search.done_simulations
        return search

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """:meth:`act` with ``sims`` simulations or ``time`` seconds instead of the settings."""
        saved = self.sims, self.time_budget
        if sims is not None:
            self.sims, self.time_budget = max(1, sims), 0.0
        if time is not None:
            self.time_budget = max(time, 1e-3)
        try:
            return self.act(state)
        finally:
            self.sims, self.time_budget = saved
