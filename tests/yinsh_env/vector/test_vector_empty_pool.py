"""The vector environment takes an opponent pool that is still empty when it is built."""

from __future__ import annotations

import numpy as np

from agents import make_agent
from yinsh_env.envs.matchmaking import OpponentPool
from yinsh_env.vector.batch_agents import random_legal
from yinsh_env.vector.env import YinshVectorEnv


def test_an_empty_pool_is_a_sampler_filled_before_the_first_reset() -> None:
    pool = OpponentPool("uniform", max_snapshots=2)
    assert len(pool) == 0  # falsy, yet a sampler
    env = YinshVectorEnv(num_envs=4, opponent=pool, illegal_reward=None)
    pool.add_snapshot(make_agent("random", seed=0), step=0)  # as SB3 self-play does
    observations, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        observations, _, terminated, _, _ = env.step(random_legal(observations["action_mask"], rng))
        ended += int(terminated.sum())
    assert ended > 0 and pool.entries[0].games == ended
