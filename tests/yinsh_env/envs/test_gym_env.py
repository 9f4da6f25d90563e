"""The Gymnasium single-agent wrapper: API checks, sides, opponents, rewards."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import LAST_MARKER, OPPONENT_ROW, OWN_ROW

from agents import RandomAgent, make_agent
from yinsh_env import IllegalActionError, PositionError, State, str_to_action
from yinsh_env.envs.gym_env import GYM_ID, YinshGymEnv
from yinsh_env.envs.observation import decode


def first_legal(env: YinshGymEnv) -> int:
    return int(np.flatnonzero(env.action_masks())[0])


def play_out(env: YinshGymEnv, seed: int) -> tuple[list[int], float]:
    """Random masked learner moves to the end; returns (all decisions, final reward)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    reward, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    return list(env.game.actions), float(reward)


@pytest.mark.parametrize("learner", ["alternate", "random", "player_0", "player_1"])
def test_gymnasium_check_env(learner: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gym.make(GYM_ID, learner=learner, render_mode="rgb_array").unwrapped)


def test_registered_id_and_make() -> None:
    env = gym.make(GYM_ID, rings_to_win=1)
    obs, info = env.reset(seed=0)
    assert env.unwrapped.game.rings_to_win == 1
    assert info["learner"] == "player_0"
    mask = env.unwrapped.get_wrapper_attr("action_masks")()
    assert mask.dtype == np.int8 and mask.shape == (2142,)
    assert mask[env.action_space.sample(mask=mask)] == 1  # Gymnasium's masked sampling takes it
    assert env.observation_space.contains(obs)
    assert gym.make("yinsh_env.envs.gym_env:Yinsh-v0").spec.id == GYM_ID


def test_observation_is_the_learners_view() -> None:
    env = YinshGymEnv(learner="player_1")
    obs, info = env.reset(seed=0)
    assert info["learner"] == "player_1" and len(info["opponent_actions"]) == 1
    assert env.game.to_act == 1
    assert decode(obs["observation"]) == env.game
    assert np.array_equal(obs["action_mask"], env.action_masks())


def test_alternate_sides_and_seed_restarts_with_white() -> None:
    env = YinshGymEnv(learner="alternate")
    sides = [env.reset()[1]["learner"] for _ in range(4)]
    assert sides == ["player_0", "player_1", "player_0", "player_1"]
    assert env.reset(seed=3)[1]["learner"] == "player_0"
    assert env.reset(options={"learner": "black"})[1]["learner"] == "player_1"
    with pytest.raises(ValueError, match="learner"):
        YinshGymEnv(learner="both")


def test_random_side_and_games_repeat_under_a_seed() -> None:
    runs = [play_out(YinshGymEnv(learner="random"), seed=4) for _ in range(2)]
    assert runs[0] == runs[1]
    assert play_out(YinshGymEnv(learner="random"), seed=5)[0] != runs[0][0]


def test_reward_is_the_learners_result() -> None:
    for seed in range(4):
        env = YinshGymEnv()
        _, reward = play_out(env, seed)
        learner = 0 if env.learner == "player_0" else 1
        assert reward == env.game.returns()[learner]
        assert env.game.is_terminal


def test_learner_wins_on_its_own_resolution() -> None:
    env = YinshGymEnv(learner="player_0")
    env.reset(options={"state": OWN_ROW})
    steps = [env.step(str_to_action(a)) for a in ("E7-E8", "xE3-E7", "xE8")]
    assert [s[1] for s in steps] == [0.0, 0.0, 1.0]
    assert [s[2] for s in steps] == [False, False, True]
    assert steps[-1][4]["result"] == "W" and steps[-1][4]["end_reason"] == "rings"


def test_opponent_resolving_its_rows_ends_the_game_inside_one_step() -> None:
    env = YinshGymEnv(learner="player_0", opponent=RandomAgent(seed=0))
    env.reset(options={"state": OPPONENT_ROW})
    obs, reward, terminated, truncated, info = env.step(str_to_action("E5-G5"))
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["opponent_actions"][0] == str_to_action("xF3-F7")
    assert info["result"] == "B"
    assert not obs["action_mask"].any()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_reset_refuses_a_game_that_ends_before_the_learner_acts() -> None:
    env = YinshGymEnv(learner="player_1")  # White's move empties the pool
    with pytest.raises(PositionError, match="before the learner"):
        env.reset(options={"state": LAST_MARKER})


def test_illegal_action_loses_by_default_and_raises_when_asked() -> None:
    env = YinshGymEnv(learner="player_0")
    obs, _ = env.reset(seed=0)
    obs2, reward, terminated, _, info = env.step(2141)  # pass: illegal while placing
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, 2141)
    assert np.array_equal(obs2["observation"], obs["observation"]) and obs2 is not obs

    strict = YinshGymEnv(learner="player_0", illegal_reward=None)
    strict.reset(seed=0)
    before = strict.game.to_text()
    with pytest.raises(IllegalActionError):
        strict.step(2141)
    assert strict.game.to_text() == before
    strict.step(first_legal(strict))  # still playable


@pytest.mark.parametrize(
    "opponent",
    [
        None,
        RandomAgent(seed=1),
        make_agent("greedy", seed=1),
        lambda obs: int(np.flatnonzero(obs["action_mask"])[-1]),
    ],
    ids=["default", "agent", "greedy", "callable"],
)
def test_any_opponent_kind_plays_legal_games(opponent: Any) -> None:
    env = YinshGymEnv(opponent=opponent, learner="player_1", rings_to_win=1)
    _, reward = play_out(env, seed=2)
    assert reward in (-1.0, 0.0, 1.0) and env.game.is_terminal


def test_observation_only_opponent() -> None:
    class LastLegal:
        calls = 0

        def act_observation(self, obs: dict[str, np.ndarray]) -> int:
            self.calls += 1
            assert obs["action_mask"].any()
            return int(np.flatnonzero(obs["action_mask"])[-1])

    opponent = LastLegal()
    env = YinshGymEnv(opponent=opponent, learner="player_0")
    env.reset(seed=0)
    env.step(first_legal(env))
    assert opponent.calls == 1


def test_agent_opponents_are_reseeded_each_episode() -> None:
    def opponent_moves(seed: int) -> list[int]:
        env = YinshGymEnv(opponent=RandomAgent(seed=None), learner="player_1")
        _, info = env.reset(seed=seed)
        return list(info["opponent_actions"]) + play_out_opponent(env)

    def play_out_opponent(env: YinshGymEnv) -> list[int]:
        moves = []
        for _ in range(5):
            _, _, _, _, info = env.step(first_legal(env))
            moves += info["opponent_actions"]
        return moves

    assert opponent_moves(1) == opponent_moves(1)


def test_illegal_opponent_is_a_clear_error() -> None:
    env = YinshGymEnv(opponent=lambda obs: 2141, learner="player_1")
    with pytest.raises(IllegalActionError, match="opponent"):
        env.reset(seed=0)
    with pytest.raises(TypeError, match="opponent"):
        YinshGymEnv(opponent=42)


def test_legal_moves_in_info_and_render() -> None:
    env = YinshGymEnv(learner="player_0", legal_moves_in_info=True, render_mode="ansi")
    _, info = env.reset(seed=0)
    assert len(info["legal_moves"]) == 85 and "E5" in info["legal_moves"]
    text = env.render()
    assert isinstance(text, str) and "White to place" in text
    assert State() == State.from_text(env.game.to_text())


def test_pickle_round_trip_mid_game() -> None:
    env = YinshGymEnv(opponent=RandomAgent(seed=3), learner="player_1")
    env.reset(seed=3)
    for _ in range(12):
        env.step(first_legal(env))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.game == env.game and copy.learner == env.learner
    for _ in range(10):
        a, b = env.step(first_legal(env)), copy.step(first_legal(copy))
        assert np.array_equal(a[0]["observation"], b[0]["observation"])
        assert a[1:] == b[1:]
