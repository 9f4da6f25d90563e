"""Autoreset ``NEXT_STEP`` (Gymnasium's default and RLlib's): a game ends as under
``DISABLED``, and the next step starts it anew without reading its action."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import yinsh_env.envs.gym_env  # noqa: F401 (registers Yinsh-v0 and its vector entry point)
from yinsh_env.vector.batch_agents import random_legal
from yinsh_env.vector.env import YinshVectorEnv


def lowest(observation: dict[str, np.ndarray]) -> int:
    """A deterministic opponent: the lowest legal action."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def test_next_step_is_disabled_with_the_reset_made_by_the_next_step() -> None:
    options: dict[str, Any] = dict(opponent=lowest, illegal_reward=None)
    options |= dict(dense_reward=0.5, threat_reward=0.05)
    held = YinshVectorEnv(1, autoreset_mode=AutoresetMode.DISABLED, **options)
    nxt = YinshVectorEnv(1, autoreset_mode="NextStep", **options)
    assert nxt.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    shown, _ = held.reset(seed=3)
    assert data_equivalence(nxt.reset(seed=3)[0], shown, exact=True)
    rng = np.random.default_rng(3)
    ended = 0
    while ended < 4:  # learner="alternate": both sides
        actions = random_legal(shown["action_mask"], rng)
        shown, *rest = held.step(actions)
        rest_: list[Any] = rest
        assert data_equivalence(nxt.step(actions), (shown, *rest), exact=True)
        if rest_[1][0]:
            ended += 1
            assert not shown["action_mask"].any() and rest_[3]["_result"][0]
            shown, _ = held.reset(options={"reset_mask": np.ones(1, dtype=np.bool_)})
            # action 0 is illegal in an ended game: with illegal_reward=None, read it would raise
            started = nxt.step(np.zeros(1, dtype=np.int64))
            flag = np.zeros(1, dtype=np.bool_)
            expected: tuple[Any, ...] = (shown, np.zeros(1), flag, flag, {})  # reward 0, not done
            assert data_equivalence(started, expected, exact=True)


def test_next_step_games_restart_on_their_own_while_the_others_play_on() -> None:
    vec = gym.make_vec(
        "Yinsh-v0",
        num_envs=6,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.NEXT_STEP,
        opening_plies=4,
        rings_to_win=1,
    )
    observations, _ = vec.reset(seed=11)
    rng = np.random.default_rng(11)
    waiting = np.zeros(6, dtype=np.bool_)  # games that ended at the last step
    ended = 0
    for _ in range(400):
        live = observations["action_mask"].any(axis=1)
        assert (live == ~waiting).all()  # only an ended game shows no legal action
        actions = np.full(6, 2141, dtype=np.int64)  # an ended game's action is not read
        actions[live] = random_legal(observations["action_mask"][live], rng)
        observations, rewards, terminated, truncated, info = vec.step(actions)
        assert "final_obs" not in info and not truncated.any()
        restarted = np.flatnonzero(waiting)
        assert not terminated[restarted].any() and not rewards[restarted].any()
        assert observations["action_mask"][restarted].any(axis=1).all()
        for game in np.flatnonzero(terminated):
            assert info["_result"][game] and rewards[game] in (-1.0, 0.0, 1.0)
        waiting = terminated
        ended += int(terminated.sum())
    assert ended >= 6
