"""Observations belong to the caller, in every environment.

Each test drives two copies of one environment with the same seed and the
same actions: ``edited`` has every array it returns overwritten in place (and
lists cleared) as soon as it is returned, ``clean`` is left alone.  The two
must agree on every later observation, mask, reward and game end: an edit
that reached the environment (a cached mask the legality check reads, planes
handed out again) would make them part.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import yinsh_env.envs.gym_env  # noqa: F401 (registers Yinsh-v0)
from yinsh_env import env
from yinsh_env.vector.env import YinshVectorEnv


def scribble(value: Any) -> int:
    """Overwrite every array and list in ``value`` in place; how many there were.

    Numbers flip (``1 - x``, ``not x``), so a mask says the illegal actions
    are legal; lists are emptied.  Every array must be writeable: the
    environments hand out their own new arrays, never read-only views.
    """
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return sum(scribble(item) for item in value.flat)
        assert value.flags.writeable, "an environment handed out a read-only array"
        if value.dtype == np.bool_:
            np.logical_not(value, out=value)
        else:
            value[...] = 1 - value
        return 1
    if isinstance(value, dict):
        return sum(scribble(item) for item in value.values())
    if isinstance(value, (tuple, list)):
        count = sum(scribble(item) for item in value)
        if isinstance(value, list):
            value.clear()
            count += 1
        return count
    return 0


def assert_same(edited: Any, clean: Any, where: str = "") -> None:
    """``edited`` equals ``clean`` all through (arrays by value)."""
    if isinstance(clean, np.ndarray):
        assert isinstance(edited, np.ndarray), where
        if clean.dtype == object:
            assert edited.shape == clean.shape, where
            for i, (a, b) in enumerate(zip(edited.flat, clean.flat)):
                assert_same(a, b, f"{where}[{i}]")
        else:
            np.testing.assert_array_equal(edited, clean, err_msg=where)
            assert edited.dtype == clean.dtype, where
    elif isinstance(clean, dict):
        assert edited.keys() == clean.keys(), where
        for key in clean:
            assert_same(edited[key], clean[key], f"{where}[{key!r}]")
    elif isinstance(clean, (tuple, list)):
        assert len(edited) == len(clean), where
        for i, (a, b) in enumerate(zip(edited, clean)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert edited == clean, where


def twin(edited: Any, clean: Any) -> Any:
    """``edited`` checked against ``clean`` and then scribbled over; ``clean`` returned."""
    assert_same(edited, clean)
    scribble(edited)
    return clean


def legal_choice(rng: random.Random, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def test_aec_observe_and_last_give_the_caller_its_own_arrays() -> None:
    edited, clean = env(), env()
    edited.reset(seed=5)
    clean.reset(seed=5)
    rng = random.Random(5)
    steps = 0
    for agent in clean.agent_iter():
        assert edited.agent_selection == agent
        waiting = "player_1" if agent == "player_0" else "player_0"
        twin(edited.observe(waiting), clean.observe(waiting))
        twin(edited.unwrapped.action_mask(), clean.unwrapped.action_mask())
        observation, *_, termination, truncation, _ = twin(edited.last(), clean.last())
        done = termination or truncation
        action = None if done else legal_choice(rng, observation["action_mask"])
        edited.step(action)  # an illegal action would end the game with -1: the twins part
        clean.step(action)
        assert edited.rewards == clean.rewards
        assert edited.terminations == clean.terminations
        steps += 1
    assert not edited.agents
    assert steps > 40  # a whole game was played


def scribbling_opponent(edit: bool) -> Callable[[dict[str, np.ndarray]], int]:
    """An observation-reading opponent (the first legal action) that edits what it was given."""

    def act(observation: dict[str, np.ndarray]) -> int:
        action = int(np.flatnonzero(observation["action_mask"])[0])
        if edit:
            scribble(observation)
        return action

    return act


def test_gym_reset_and_step_give_the_caller_its_own_arrays() -> None:
    edited = gym.make("Yinsh-v0", opponent=scribbling_opponent(edit=True))
    clean = gym.make("Yinsh-v0", opponent=scribbling_opponent(edit=False))
    rng = random.Random(2)
    for episode in range(2):
        observation, _ = twin(edited.reset(seed=episode), clean.reset(seed=episode))
        done = False
        while not done:
            twin(edited.unwrapped.action_masks(), clean.unwrapped.action_masks())
            action = legal_choice(rng, observation["action_mask"])
            result = twin(edited.step(action), clean.step(action))
            observation, _, terminated, truncated, info = result
            assert "illegal_action" not in info
            done = terminated or truncated


def test_vector_env_gives_the_caller_its_own_arrays_final_observations_too() -> None:
    edited, clean = YinshVectorEnv(num_envs=3), YinshVectorEnv(num_envs=3)
    observations, _ = twin(edited.reset(seed=1), clean.reset(seed=1))
    rng = random.Random(1)
    finished = 0
    while finished < 4:
        twin(edited.action_masks(), clean.action_masks())
        twin(edited.learner_seats, clean.learner_seats)
        actions = np.array([legal_choice(rng, mask) for mask in observations["action_mask"]])
        observations, _, terminated, _, infos = twin(edited.step(actions), clean.step(actions))
        assert not (infos.get("final_info", {}).get("_illegal_action", np.zeros(3))).any()
        finished += int(terminated.sum())


@pytest.mark.slow
def test_sb3_vecenv_gives_the_caller_its_own_arrays() -> None:
    pytest.importorskip("stable_baselines3", reason='optional extra: pip install -e ".[sb3]"')
    from yinsh_env.vector.sb3 import YinshSB3VecEnv

    edited, clean = YinshSB3VecEnv(num_envs=3), YinshSB3VecEnv(num_envs=3)
    edited.seed(4)
    clean.seed(4)
    observations = twin(edited.reset(), clean.reset())
    rng = random.Random(4)
    finished = 0
    while finished < 4:
        twin(edited.action_masks(), clean.action_masks())
        twin(edited.env_method("action_masks"), clean.env_method("action_masks"))
        actions = np.array([legal_choice(rng, mask) for mask in observations["action_mask"]])
        observations, _, dones, infos = twin(edited.step(actions), clean.step(actions))
        finished += int(dones.sum())
        assert all("illegal_action" not in info for info in infos)


@pytest.mark.slow
def test_openspiel_tensors_are_the_callers() -> None:
    pyspiel = pytest.importorskip("pyspiel", reason='optional extra: pip install -e ".[openspiel]"')
    from open_spiel.python.observation import make_observation

    import yinsh_env.envs.openspiel  # noqa: F401 (registers the game)

    game = pyspiel.load_game("yinsh", {"rings_to_win": 1})
    edited, clean = game.new_initial_state(), game.new_initial_state()
    observer = make_observation(game)
    rng = random.Random(3)
    while not clean.is_terminal():
        for player in (0, 1):
            twin(edited.observation_tensor(player), clean.observation_tensor(player))
            observer.set_from(edited, player)
            np.testing.assert_array_equal(observer.tensor, clean.observation_tensor(player))
            scribble(observer.dict)  # the observer's buffer is the caller's
        twin(edited.legal_actions_mask(), clean.legal_actions_mask())
        legal = twin(edited.legal_actions(), clean.legal_actions())
        action = rng.choice(legal)
        edited.apply_action(action)
        clean.apply_action(action)
        twin(edited.rewards(), clean.rewards())
    assert edited.is_terminal()
    assert edited.returns() == clean.returns()
