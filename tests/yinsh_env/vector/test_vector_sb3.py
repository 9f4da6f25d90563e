"""The SB3 adapter: MaskablePPO trains on YinshVectorEnv directly (sb3-contrib)."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.vec_env import VecMonitor

from yinsh_env.vector.env import YinshVectorEnv
from yinsh_env.vector.sb3 import YinshSB3VecEnv


def test_masks_and_finished_games_follow_sb3s_conventions() -> None:
    env = YinshSB3VecEnv(num_envs=6, rings_to_win=1)
    assert is_masking_supported(env)
    env.seed(3)
    observations = cast(dict[str, np.ndarray], env.reset())
    rng = np.random.default_rng(3)
    finished = 0
    for _ in range(120):
        masks = get_action_masks(env)
        np.testing.assert_array_equal(masks, observations["action_mask"].astype(bool))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        result, rewards, dones, infos = env.step(actions)
        observations = cast(dict[str, np.ndarray], result)
        assert rewards.shape == (6,) and dones.dtype == np.bool_
        for i in np.flatnonzero(dones):
            finished += 1
            final = infos[i]["terminal_observation"]
            assert final["action_mask"].sum() == 0 and infos[i]["result"] in ("W", "B", "draw")
            assert rewards[i] in (-1.0, 0.0, 1.0)
    assert finished >= 6


def test_the_arenas_opening_and_shaping_are_options_of_the_adapter_too() -> None:
    env = YinshSB3VecEnv(num_envs=4, rings_to_win=1, opening_plies=4, threat_reward=0.05)
    env.seed(1)
    planes = cast(dict[str, np.ndarray], env.reset())["observation"]
    rings = planes[..., 0].sum(axis=(1, 2)) + planes[..., 1].sum(axis=(1, 2))
    assert (rings == 4 + env.env.learner_seats).all()
    assert env.get_attr("threat_reward") == [0.05] * 4
    rng = np.random.default_rng(1)
    for _ in range(300):
        masks = get_action_masks(env)
        _, _, dones, infos = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        if dones.any():
            assert infos[int(np.flatnonzero(dones)[0])]["opponent"] == "random"
            return
    raise AssertionError("no game ended")


def test_either_an_env_or_its_arguments() -> None:
    with pytest.raises(ValueError, match="either"):
        YinshSB3VecEnv(YinshVectorEnv(2), num_envs=2)


def test_maskable_ppo_learns_on_the_vector_env() -> None:
    env = VecMonitor(YinshSB3VecEnv(num_envs=8, rings_to_win=1, dense_reward=0.1))
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=32,
        batch_size=64,
        n_epochs=1,
        seed=0,
        policy_kwargs={"net_arch": [32]},
    )
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    assert model.ep_info_buffer, "VecMonitor saw no finished game"
    assert any(
        not np.allclose(a.numpy(), b.detach().numpy())
        for a, b in zip(before, model.policy.parameters())
    )
    observations = cast(dict[str, np.ndarray], env.reset())
    actions, _ = model.predict(observations, action_masks=get_action_masks(env))
    assert np.take_along_axis(observations["action_mask"], actions[:, None], axis=1).all()


def test_the_adapter_refuses_a_vector_env_that_leaves_finished_games_over() -> None:
    held = YinshVectorEnv(2, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match=r"autoreset_mode .* is not AutoresetMode\.SAME_STEP"):
        YinshSB3VecEnv(held)
