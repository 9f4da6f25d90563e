"""Leaf values from random rollouts scored by the hand-made evaluation (the ``mcts`` baseline).

Random play to the end of a YINSH game says little (rows form by chance, most
games end with the pool), so a rollout stops after ``rollout_limit`` random
decisions and is scored by the evaluation's odds
(:func:`agents.baselines.heuristics.evaluate`, one ring up being about 3 to 1), and the
leaf's value mixes that rollout result with the evaluation of the leaf itself,
weight ``eval_weight`` (the mixing AlphaGo used for its value network and
rollouts).  ``rollout_limit=0, eval_weight=0`` is plain rollouts to the end;
``eval_weight=1`` values leaves by the evaluation alone (a heuristic
evaluator, no rollout played).

The evaluator also orders a new node's actions: shuffled, so that UCT
(:class:`~agents.search.rules.UCT`), which expands in the node's action order,
tries them in random order.  The root's own value is not rolled out: UCT never
reads it (its value stays 0).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

from agents.baselines.heuristics import RING_VALUE, evaluate
from agents.search.tree import Leaf
from yinsh_env import Player
from yinsh_env.engine.state import State

#: Evaluation units per logit when a cut-off rollout is scored.
_EVAL_SCALE = RING_VALUE
_NO_LOGITS = np.zeros(0)


def eval_odds(state: State) -> float:
    """White's expected result in [0, 1] by the evaluation's odds (one ring up: about 3 to 1)."""
    return 1.0 / (1.0 + math.exp(-evaluate(state, Player.WHITE) / _EVAL_SCALE))


class RolloutEvaluator:
    """A :data:`~agents.search.core.BatchEvaluator` (and leaf maker) that plays random rollouts.

    All randomness comes from ``rng`` (the agent's), so a seeded agent replays.
    """

    def __init__(self, rng: random.Random, rollout_limit: int = 10, eval_weight: float = 0.5):
        self.rng = rng
        self.rollout_limit = rollout_limit
        self.eval_weight = eval_weight

    def leaf(self, state: State, root: bool = False) -> Leaf:
        """The leaf of ``state``: its actions in random expansion order and a copy to roll out."""
        own = None if root else state.copy()  # legal actions then cached for its rollout
        actions = list((state if own is None else own).legal_actions())
        self.rng.shuffle(actions)
        actions.reverse()  # the order the baseline always expanded in (popping the shuffle)
        return Leaf(
            np.asarray(actions, dtype=np.int64), state.to_act, state=own, root=root, uniform=True
        )

    def __call__(self, leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
        logits = [_NO_LOGITS] * len(leaves)  # uniform leaves: the prior is not read
        values = np.zeros(len(leaves))
        for k, leaf in enumerate(leaves):
            if leaf.state is None:
                continue  # the root: not valued
            white = 2.0 * self.white_result(leaf.state) - 1.0
            values[k] = white if leaf.player == Player.WHITE else -white
        return logits, values

    def white_result(self, state: State) -> float:
        """White's result in [0, 1] of a leaf: rollout and evaluation mixed (uses ``state`` up)."""
        weight = self.eval_weight
        if not weight:
            return self.rollout(state)
        white = eval_odds(state)
        if weight == 1.0:  # the evaluation alone (``eval_weight=1``): no rollout to play
            return white
        return weight * white + (1.0 - weight) * self.rollout(state)

    def rollout(self, state: State) -> float:
        """Play random actions to the end (or the limit); White's result in [0, 1]."""
        rng = self.rng
        limit = self.rollout_limit or 1 << 30
        steps = 0
        while not state.is_terminal and steps < limit:
            legal = state.legal_actions()
            state.apply_unchecked(legal[int(rng.random() * len(legal))])
            steps += 1
        if not state.is_terminal:
            return eval_odds(state)
        winner = state.winner
        if winner is None:
            return 0.5
        return 1.0 if winner == Player.WHITE else 0.0
