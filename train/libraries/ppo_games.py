"""The single-file PPO's games: openings as the arena plays them, opponents, results.

:mod:`train.libraries.ppo` keeps the algorithm; this module keeps what its
games need around it, each as the trainer uses it:

* :func:`make_opponent`: an agent spec as a batch opponent (``greedy`` scoring
  all its games' moves at once);
* :class:`OpeningOpponent` and :func:`opening_moves`: ``--opening-plies``
  uniformly random ring placements opening each game, for the opponents and
  for the learner (whose opening moves are then left out of the policy loss);
* :func:`learner_scores`: the learner's score in each game that just ended;
* :func:`check`: the most-likely-action policy's score against a fixed opponent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents import make_agent
from agents.baselines.greedy import GreedyAgent
from agents.baselines.greedy_batch import GreedyOpponent
from agents.learned.ppo_policy import PPOPolicy
from yinsh_env.engine.vocabulary import Result
from yinsh_env.vector.batch_agents import batch_opponent, random_legal
from yinsh_env.vector.env import YinshVectorEnv


def make_opponent(spec: str, seed: int) -> Any:
    """The agent ``spec`` names, as a batch opponent where one exists: ``greedy``
    (with its ``noise``) is :class:`agents.baselines.greedy_batch.GreedyOpponent`, its
    values computed for all games at once; anything else is built by
    :func:`agents.make_agent` (and asked game by game unless it has ``act_batch``)."""
    agent = make_agent(spec, seed=seed)
    return GreedyOpponent(agent.noise) if type(agent) is GreedyAgent else agent


def learner_scores(infos: dict[str, Any]) -> list[tuple[int, str, float]]:
    """(game, opponent, score 1/0.5/0) of each game that ended in this step."""
    final = infos.get("final_info")
    if final is None:
        return []
    found = []
    for game in np.flatnonzero(infos["_final_info"]):
        result, learner = final["result"][game], final["learner"][game]
        if result is None:  # an illegal action: cannot happen with masked actions
            score = 0.0
        elif result == Result.DRAW:
            score = 0.5
        else:
            won_white = result == Result.WHITE_WINS
            score = 1.0 if won_white == (learner == "player_0") else 0.0
        opponents = final.get("opponent")
        found.append((int(game), str(opponents[game] if opponents is not None else None), score))
    return found


def in_opening(planes: np.ndarray, plies: int) -> np.ndarray:
    """(n,) bool: which positions are still in the opening, ring placement with
    fewer than ``plies`` rings on the board (planes 0, 1 rings; plane 5 placement)."""
    if plies <= 0:
        return np.zeros(len(planes), dtype=np.bool_)
    rings = planes[..., 0].sum(axis=(1, 2)) + planes[..., 1].sum(axis=(1, 2))
    return np.asarray((planes[:, 0, 0, 5] > 0) & (rings < plies))


class OpeningOpponent:
    """``inner`` (a batch opponent), except in the opening: there a uniformly random
    placement, as the arena opens its games (``--opening-plies``)."""

    observes = True

    def __init__(self, inner: Any, plies: int) -> None:
        self.inner: Any = batch_opponent(inner)
        self.plies = plies
        self.name = getattr(inner, "name", type(inner).__name__)

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        if observations is None:
            raise ValueError("the opening opponent needs the observations")
        actions = np.zeros(len(masks), dtype=np.int64)
        rest = ~opening_moves(observations, masks, actions, self.plies, rng)
        if rest.any():
            planes = observations[rest] if getattr(self.inner, "observes", True) else None
            actions[rest] = self.inner.act_batch(planes, masks[rest], rng)
        return actions

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.inner.load_state_dict(state)


def opening_moves(
    planes: np.ndarray, masks: np.ndarray, actions: np.ndarray, plies: int, rng: np.random.Generator
) -> np.ndarray:
    """(n,) bool, and ``actions`` changed in place: random placements where in the opening."""
    opening = in_opening(planes, plies)
    if opening.any():
        actions[opening] = random_legal(masks[opening], rng)
    return opening


def check(
    policy: PPOPolicy, opponent: Any, games: int, seed: int, rings_to_win: int, plies: int = 0
) -> float:
    """The most-likely-action policy's score in ``games`` games against ``opponent``,
    each opened by ``plies`` random ring placements as the arena opens them."""
    env = YinshVectorEnv(
        num_envs=games, opponent=OpeningOpponent(opponent, plies), rings_to_win=rings_to_win
    )
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    scores: dict[int, float] = {}
    while len(scores) < games:
        actions = policy.choose(obs["observation"], obs["action_mask"], None)
        opening_moves(obs["observation"], obs["action_mask"], actions, plies, rng)
        obs, _, _, _, infos = env.step(actions)
        for game, _, score in learner_scores(infos):
            scores.setdefault(game, score)
    return float(np.mean(list(scores.values())))


__all__ = [
    "OpeningOpponent",
    "check",
    "in_opening",
    "learner_scores",
    "make_opponent",
    "opening_moves",
]
