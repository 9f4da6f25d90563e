"""Options every environment takes alike: the arena's opening, rows-threatened shaping,
and the keys of a finished game's info whatever the opponent."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import yinsh_env.envs.gym_env  # noqa: F401 (registers Yinsh-v0)
from agents.evaluation.games import DEFAULT_OPENING_PLIES, make_openings
from agents.evaluation.settings import MatchSettings
from yinsh_env import State, env
from yinsh_env.engine.vocabulary import Phase
from yinsh_env.envs.aec_env import raw_env
from yinsh_env.envs.env_base import (
    ARENA_OPENING_PLIES,
    SEGMENT_CELLS,
    play_opening,
    threat_potential,
)
from yinsh_env.envs.gym_env import ShapedReward, YinshGymEnv
from yinsh_env.envs.matchmaking import OpponentPool
from yinsh_env.envs.observation import encode
from yinsh_env.vector.batch_agents import random_legal
from yinsh_env.vector.env import YinshVectorEnv


def lowest(observation: dict[str, np.ndarray]) -> int:
    """A deterministic opponent: the lowest legal action."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def rings_on_board(planes: np.ndarray) -> np.ndarray:
    """(n,) rings on the board in observations (planes 0 and 1: own and opponent's rings)."""
    return np.asarray(planes[..., 0].sum(axis=(-2, -1)) + planes[..., 1].sum(axis=(-2, -1)))


# --- the arena's opening ---------------------------------------------------------------


def test_the_arena_plays_the_environments_opening_number_and_draws() -> None:
    assert ARENA_OPENING_PLIES == DEFAULT_OPENING_PLIES == MatchSettings().opening_plies
    rng = np.random.default_rng([7, 0x0BE11])  # make_openings' generator for seed 7
    first = State()
    play_opening(first, ARENA_OPENING_PLIES, rng)
    assert make_openings(1, ARENA_OPENING_PLIES, 7)[0] == tuple(first.actions)


def test_the_aec_env_opens_with_seeded_random_placements() -> None:
    e = env(opening_plies=4)
    e.reset(seed=3)
    game = e.unwrapped.game
    assert game.ply == 4 and game.phase == Phase.PLACE and e.agent_selection == "player_0"
    opened = game.actions
    e.reset(seed=3)
    assert e.unwrapped.game.actions == opened
    e.reset(seed=4)
    assert e.unwrapped.game.actions != opened
    plain = env()
    plain.reset(seed=3)
    assert plain.unwrapped.game.ply == 0  # the default: the empty board


def test_the_aec_opening_follows_a_given_start() -> None:
    e = raw_env(opening_plies=3)
    e.reset(seed=0, options={"actions": ["E5"]})
    assert e.game.ply == 3 and e.game.actions[0] == State().apply_all(["E5"]).actions[0]
    e.reset(seed=0, options={"actions": ["E5", "F6", "E4", "F7"]})  # already past 3 rings
    assert e.game.ply == 4


def test_yinsh_v0_opens_before_either_side_acts_and_repeats_with_its_seed() -> None:
    made = gym.make("Yinsh-v0", opening_plies=ARENA_OPENING_PLIES, learner="alternate")
    obs, info = made.reset(seed=5)
    assert rings_on_board(obs["observation"]) == 4 and info["opponent_actions"] == []
    opened = made.unwrapped.game.actions  # type: ignore[attr-defined]
    obs, info = made.reset()  # the learner is Black: the opponent placed one more
    assert rings_on_board(obs["observation"]) == 5 and len(info["opponent_actions"]) == 1
    made.reset(seed=5)
    assert made.unwrapped.game.actions == opened  # type: ignore[attr-defined]


def test_the_vector_env_opens_every_game_it_starts() -> None:
    vec = YinshVectorEnv(6, rings_to_win=1, opening_plies=4)
    obs, _ = vec.reset(seed=2)
    seats = vec.learner_seats
    assert (rings_on_board(obs["observation"]) == 4 + seats).all()
    again, _ = YinshVectorEnv(6, rings_to_win=1, opening_plies=4).reset(seed=2)
    np.testing.assert_array_equal(again["observation"], obs["observation"])
    rng = np.random.default_rng(0)
    started = 0
    for _ in range(300):
        obs, _, done, _, _ = vec.step(random_legal(obs["action_mask"], rng))
        seats = vec.learner_seats
        assert (rings_on_board(obs["observation"][done]) == 4 + seats[done]).all()
        started += int(done.sum())
    assert started > 0
    plain, _ = YinshVectorEnv(2).reset(seed=2)
    assert (rings_on_board(plain["observation"]) == [0, 1]).all()


@pytest.mark.parametrize("plies", [-1, 11, 2.5, True, "4", None])
@pytest.mark.parametrize("make", [raw_env, YinshGymEnv, YinshVectorEnv])
def test_a_bad_opening_is_refused_by_name(make: Any, plies: object) -> None:
    with pytest.raises(ValueError, match=r"opening_plies must be an integer in 0\.\.10"):
        make(opening_plies=plies)


# --- rows threatened ---------------------------------------------------------------------


def test_threat_potential_counts_rows_threatened_from_the_observer_side() -> None:
    assert threat_potential(encode(State())[None], 1.0).tolist() == [0.0]
    planes = np.zeros((3, 11, 11, 17), dtype=np.float32)
    segment = SEGMENT_CELLS[0]
    planes[0].reshape(121, 17)[segment[:4], 2] = 1  # four own markers in a segment
    planes[1].reshape(121, 17)[segment[:3], 3] = 1  # three of the opponent's
    planes[2].reshape(121, 17)[segment[:3], 3] = 1  # three of theirs, blocked by one of mine
    planes[2].reshape(121, 17)[segment[4], 2] = 1
    weights = threat_potential(planes, 2.0)
    assert weights[0] >= 2.0 and weights[1] < 0 and weights[2] == 0.0


def play_seeded(vec: YinshVectorEnv, steps: int, seed: int) -> list[tuple[Any, ...]]:
    """(observation, reward, done) of ``steps`` seeded random steps."""
    obs, _ = vec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = [(obs["observation"], None, None)]
    for _ in range(steps):
        obs, reward, done, _, _ = vec.step(random_legal(obs["action_mask"], rng))
        seen.append((obs["observation"], reward, done))
    return seen


@pytest.mark.slow
def test_threat_reward_gives_the_single_file_ppos_old_shaping() -> None:
    weight, dense, gamma = 0.05, 0.5, 0.97
    kwargs: dict[str, Any] = {"opponent": lowest, "rings_to_win": 1, "gamma": gamma}
    shaped = play_seeded(
        YinshVectorEnv(8, dense_reward=dense, threat_reward=weight, **kwargs), 150, 4
    )
    plain = play_seeded(YinshVectorEnv(8, dense_reward=dense, **kwargs), 150, 4)
    # train.libraries.ppo's own shaping before the environment took it over:
    phi = threat_potential(plain[0][0], weight)
    moved = 0
    for (obs, reward, done), (_, expected, _) in zip(plain[1:], shaped[1:]):
        following = threat_potential(obs, weight)
        old = reward + gamma * np.where(done, 0.0, following) - phi
        phi = following
        np.testing.assert_allclose(expected, old, atol=1e-12)
        moved += int((old != reward).sum())
    assert moved > 0  # rows were threatened: the shaping was tried


@pytest.mark.slow
def test_yinsh_v0_shapes_rows_threatened_as_the_vector_env() -> None:
    weight, gamma = 0.05, 0.9
    vec = YinshVectorEnv(4, opponent=lowest, rings_to_win=1, threat_reward=weight, gamma=gamma)
    scalars = [
        ShapedReward(YinshGymEnv(opponent=lowest, rings_to_win=1), 0.0, gamma, weight)
        for _ in range(4)
    ]
    obs, _ = vec.reset(seed=1)
    for i, scalar in enumerate(scalars):
        scalar.reset(options={"learner": i % 2})
    episodes = [1] * 4
    rng = np.random.default_rng(1)
    shaped = 0
    for _ in range(150):
        actions = random_legal(obs["action_mask"], rng)
        obs, rewards, done, _, _ = vec.step(actions)
        for i, scalar in enumerate(scalars):
            _, reward, over, _, info = scalar.step(int(actions[i]))
            assert reward == pytest.approx(rewards[i], abs=1e-12) and over == done[i]
            shaped += info["shaping"] != 0
            if over:
                scalar.reset(options={"learner": (i + episodes[i]) % 2})
                episodes[i] += 1
    assert shaped > 0


def test_a_bad_threat_reward_is_refused_by_name() -> None:
    for bad in (-0.1, 11.0, float("nan"), "0.05"):
        with pytest.raises(ValueError, match="threat_reward must be a number"):
            YinshVectorEnv(2, threat_reward=bad)
        with pytest.raises(ValueError, match="threat_reward must be a number"):
            ShapedReward(YinshGymEnv(), threat_reward=bad)
    with pytest.raises(ValueError, match="not self_play"):
        YinshVectorEnv(2, self_play=True, threat_reward=0.1)


def aec_learner_rewards(actions: np.random.Generator, **options: Any) -> list[float]:
    """White's rewards at each of its decisions and at the end, Black playing ``lowest``."""
    aec = env(**options)
    aec.reset(seed=0)
    seen: list[float] = []
    for agent in aec.agent_iter():
        observation, reward, over, _, _ = aec.last()
        if agent == "player_0":
            seen.append(float(reward))
        if over:
            aec.step(None)
        elif agent == "player_0":
            aec.step(int(actions.choice(np.flatnonzero(observation["action_mask"]))))
        else:
            aec.step(lowest(observation))
    return seen


@pytest.mark.parametrize("seed", [0, 1])
def test_the_pettingzoo_env_shapes_each_seat_as_yinsh_v0_shapes_its_learner(seed: int) -> None:
    weight, threat, gamma = 0.5, 0.05, 0.9
    seen = aec_learner_rewards(
        np.random.default_rng(seed),
        rings_to_win=1,
        dense_reward=weight,
        threat_reward=threat,
        gamma=gamma,
    )
    gym_env = ShapedReward(YinshGymEnv(opponent=lowest, rings_to_win=1), weight, gamma, threat)
    observation, _ = gym_env.reset(options={"learner": 0})
    actions, expected, over = np.random.default_rng(seed), [0.0], False
    while not over:
        action = int(actions.choice(np.flatnonzero(observation["action_mask"])))
        observation, reward, over, _, _ = gym_env.step(action)
        expected.append(float(reward))
    assert seen == pytest.approx(expected, abs=1e-12)
    assert sum(r != 0 for r in seen[:-1]) > 0  # shaped before the end, not only the result


def test_the_pettingzoo_envs_shaping_is_zero_sum_and_cancels_over_a_game() -> None:
    aec = env(rings_to_win=1, dense_reward=0.5, threat_reward=0.05, gamma=1.0, opening_plies=4)
    aec.reset(seed=3)
    rng = np.random.default_rng(3)
    totals = {"player_0": 0.0, "player_1": 0.0}
    shaped = 0
    for agent in aec.agent_iter():
        observation, reward, over, _, _ = aec.last()
        totals[agent] += reward
        shaped += reward != 0 and not over
        aec.step(None if over else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    white, black = aec.unwrapped.game.returns()  # type: ignore[attr-defined]
    assert totals == pytest.approx({"player_0": white, "player_1": black}, abs=1e-12)
    assert shaped > 0
    plain = env()
    plain.reset(seed=3)
    assert plain.unwrapped.dense_reward == plain.unwrapped.threat_reward == 0.0  # type: ignore[attr-defined]


def test_the_pettingzoo_env_refuses_bad_shaping_by_name() -> None:
    with pytest.raises(ValueError, match="threat_reward must be a number"):
        raw_env(threat_reward=-1)
    with pytest.raises(ValueError, match="dense_reward must be a number"):
        raw_env(dense_reward=float("nan"))
    with pytest.raises(ValueError, match="gamma must be in"):
        raw_env(dense_reward=0.5, gamma=0.0)


# --- the finished game's info ---------------------------------------------------------------


def finished_info(vec: YinshVectorEnv) -> dict[str, Any]:
    """The ``final_info`` of the first step that ends a game."""
    obs, _ = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(500):
        obs, _, done, _, info = vec.step(random_legal(obs["action_mask"], rng))
        if done.any():
            return dict(info["final_info"])
    raise AssertionError("no game ended")


def test_final_info_has_the_same_keys_whatever_the_opponent() -> None:
    pool = OpponentPool()
    pool.add("first", lowest)
    envs = {
        "random": YinshVectorEnv(4, rings_to_win=1),
        "lowest": YinshVectorEnv(4, opponent=lowest, rings_to_win=1),
        "self": YinshVectorEnv(4, self_play=True, rings_to_win=1),
        "first": YinshVectorEnv(4, opponent=pool, rings_to_win=1),
    }
    infos = {name: finished_info(vec) for name, vec in envs.items()}
    keys = {name: sorted(info) for name, info in infos.items()}
    assert len({tuple(k) for k in keys.values()}) == 1, keys
    for name, info in infos.items():
        named = info["opponent"][info["_opponent"]]
        expected = name
        assert set(named) == {expected}, (name, named)
