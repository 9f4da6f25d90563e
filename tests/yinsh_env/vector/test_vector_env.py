"""YinshVectorEnv against the scalar Yinsh-v0, step by step, and its Gymnasium conventions.

N scalar environments and one vector environment of N games play the same
learner actions against the same deterministic opponent: observations,
masks, rewards (shaped ones too), ends and the final observation of every
finished game must agree, and every observation returned carries a valid
mask.  Then the API: ``make_vec``, spaces, seeding, illegal actions,
self-play, opponent samplers, batch opponents.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AutoresetMode

import yinsh_env.vector.env as vector_env_module
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.engine.errors import IllegalActionError, NotAnActionError
from yinsh_env.envs.aec_env import raw_env
from yinsh_env.envs.env_base import MAX_WEIGHT
from yinsh_env.envs.gym_env import ShapedReward, YinshGymEnv
from yinsh_env.envs.matchmaking import OpponentPool
from yinsh_env.vector import to_state
from yinsh_env.vector.batch_agents import RandomOpponent, random_legal
from yinsh_env.vector.env import MAX_NUM_ENVS, YinshVectorEnv, check_num_envs


def lowest(observation: dict[str, np.ndarray]) -> int:
    """A deterministic opponent: the lowest legal action."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def check_valid(observations: dict[str, np.ndarray]) -> None:
    assert observations["action_mask"].dtype == np.int8
    assert (observations["action_mask"].sum(axis=1) > 0).all(), "a returned mask has no action"


def run_side_by_side(n: int, steps: int, seed: int, dense: float = 0.0, rings: int = 3) -> int:
    """Step a vector env and n scalar envs together; returns the games finished."""
    vec = YinshVectorEnv(n, opponent=lowest, rings_to_win=rings, dense_reward=dense, gamma=0.9)
    scalars: list[Any] = [
        YinshGymEnv(opponent=lowest, rings_to_win=rings, learner=i % 2) for i in range(n)
    ]
    if dense:
        scalars = [ShapedReward(env, weight=dense, gamma=0.9) for env in scalars]
    episodes = [1] * n
    observations, _ = vec.reset(seed=seed)
    for i, env in enumerate(scalars):
        obs, _ = env.reset(options={"learner": i % 2})
        assert data_equivalence(obs, {k: v[i] for k, v in observations.items()}, exact=True)
    rng = np.random.default_rng(seed)
    finished = 0
    for _ in range(steps):
        check_valid(observations)
        actions = random_legal(observations["action_mask"], rng)
        observations, rewards, terminated, truncated, info = vec.step(actions)
        assert not truncated.any()
        for i, env in enumerate(scalars):
            obs, reward, done, _, scalar_info = env.step(int(actions[i]))
            assert reward == pytest.approx(rewards[i], abs=1e-12) and done == terminated[i]
            if done:
                finished += 1
                assert info["_final_obs"][i] and info["final_info"]["_result"][i]
                assert data_equivalence(obs, info["final_obs"][i], exact=True)
                assert info["final_info"]["result"][i] == scalar_info["result"]
                assert info["final_info"]["end_reason"][i] == scalar_info["end_reason"]
                side = (i + episodes[i]) % 2
                episodes[i] += 1
                obs, _ = env.reset(options={"learner": side})
            assert data_equivalence(obs, {k: v[i] for k, v in observations.items()}, exact=True)
    return finished


def test_the_vector_env_plays_as_the_scalar_env() -> None:
    assert run_side_by_side(n=12, steps=160, seed=3) >= 12


def test_blitz_plays_as_the_scalar_env() -> None:
    assert run_side_by_side(n=8, steps=60, seed=4, rings=1) >= 8


def test_shaped_rewards_are_the_scalar_wrappers() -> None:
    assert run_side_by_side(n=8, steps=120, seed=5, dense=0.5) >= 8


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_shaped_returns_of_a_finished_game_equal_the_unshaped_result(gamma: float) -> None:
    """The potential is zero at the start and the end: the discounted shaping terms cancel."""
    vec = YinshVectorEnv(16, dense_reward=1.0, gamma=gamma)
    observations, _ = vec.reset(seed=7)
    rng = np.random.default_rng(7)
    returns, discount = np.zeros(16), np.ones(16)
    checked = shaped = 0
    while checked < 30:
        actions = random_legal(observations["action_mask"], rng)
        observations, rewards, terminated, _, info = vec.step(actions)
        returns += discount * rewards
        discount *= gamma
        shaped += int((rewards[~terminated] != 0).sum())
        for i in np.flatnonzero(terminated):
            learner = 0 if info["final_info"]["learner"][i] == "player_0" else 1
            result = info["final_info"]["result"][i]
            value = {"W": 1.0, "B": -1.0}.get(str(result), 0.0) * (1 if learner == 0 else -1)
            assert returns[i] == pytest.approx(discount[i] / gamma * value, abs=1e-9)
            returns[i], discount[i] = 0.0, 1.0
            checked += 1
    assert shaped > 0, "no shaping term was ever paid"


def test_scalar_shaped_wrapper_passes_gymnasiums_checker() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped")
        check_env(ShapedReward(YinshGymEnv(), weight=0.2), skip_render_check=True)


def test_against_the_random_opponent_every_mask_is_the_positions() -> None:
    """The random opponent draws from the positions and its own masks are never built:
    the learner's masks, and every game's state, still match the scalar engine."""
    vec = YinshVectorEnv(16, learner="random")
    observations, _ = vec.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(150):
        observations, *_ = vec.step(random_legal(observations["action_mask"], rng))
        for game in range(16):
            state = to_state(vec._batch, game)
            assert state.to_act == vec.learner_seats[game]
            np.testing.assert_array_equal(observations["action_mask"][game], state.legal_mask())


def test_make_vec_returns_the_vector_env_with_same_step_autoreset() -> None:
    vec = gym.make_vec("Yinsh-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(vec, YinshVectorEnv)
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    single = YinshGymEnv()
    assert vec.single_observation_space == single.observation_space
    assert vec.single_action_space == single.action_space
    observations, _ = vec.reset(seed=0)
    assert vec.observation_space.contains(observations)


def test_reset_with_a_seed_repeats_and_returned_data_is_fresh() -> None:
    def trace(seed: int) -> list[Any]:
        vec = YinshVectorEnv(4, learner="random")
        observations = vec.reset(seed=seed)[0]
        out: list[Any] = [observations]
        rng = np.random.default_rng(0)
        for _ in range(30):
            step = vec.step(random_legal(observations["action_mask"], rng))
            observations = step[0]
            out.append(step[:4])
        return out

    first, second = trace(11), trace(11)
    assert data_equivalence(first, second, exact=True)
    assert not data_equivalence(first, trace(12))
    assert first[1][0]["observation"] is not first[2][0]["observation"]


def test_an_illegal_action_ends_that_game_with_the_illegal_reward() -> None:
    vec = YinshVectorEnv(3)
    observations, _ = vec.reset(seed=1)
    actions = random_legal(observations["action_mask"], np.random.default_rng(0))
    bad = int(np.flatnonzero(observations["action_mask"][1] == 0)[0])
    actions[1] = bad
    new, rewards, terminated, _, info = vec.step(actions)
    assert terminated.tolist() == [False, True, False] and rewards[1] == -1.0
    assert info["final_info"]["illegal_action"][1] == bad
    assert data_equivalence(
        info["final_obs"][1], {k: v[1] for k, v in observations.items()}, exact=True
    )
    check_valid(new)


def test_illegal_reward_none_raises_and_changes_nothing() -> None:
    vec = YinshVectorEnv(2, illegal_reward=None)
    observations, _ = vec.reset(seed=2)
    actions = np.array([0, 0])
    actions[0] = int(np.flatnonzero(observations["action_mask"][0])[0])
    actions[1] = int(np.flatnonzero(observations["action_mask"][1] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 1"):
        vec.step(actions)
    assert data_equivalence(vec.action_masks(), observations["action_mask"])


@pytest.mark.parametrize("actions", [np.zeros(3, np.int64), np.zeros(2), np.array([0, 9999])])
def test_malformed_actions_are_refused(actions: np.ndarray) -> None:
    vec = YinshVectorEnv(2)
    vec.reset(seed=0)
    with pytest.raises(NotAnActionError):
        vec.step(actions)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"rings_to_win": 6}, "rings_to_win"),
        ({"learner": "left"}, "learner"),
        ({"dense_reward": -1.0}, "dense_reward"),
        ({"gamma": 0.0}, "gamma"),
        ({"self_play": True, "opponent": lowest}, "self_play"),
        ({"render_mode": "human"}, "render_mode"),
    ],
)
def test_bad_settings_are_refused_by_name(kwargs: dict[str, Any], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        YinshVectorEnv(**kwargs)


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ([1], TypeError, "must be a dict"),
        (
            {"leaner": 0},
            ValueError,
            "unknown reset option(s) 'leaner' (known: learner, reset_mask)",
        ),
        ({"learner": 0, "state": None}, ValueError, "'state'"),
        ({1: 2}, TypeError, "names must be strings"),
        ({"learner": "left"}, ValueError, "unknown learner side 'left'"),
    ],
)
def test_bad_reset_options_raise_naming_them(options: Any, error: type, words: str) -> None:
    with pytest.raises(error) as caught:
        YinshVectorEnv(2).reset(options=options)
    assert words in str(caught.value)


def test_the_learner_reset_option_sets_the_side_of_the_games_it_starts() -> None:
    vec = YinshVectorEnv(4)  # alternating sides by default
    vec.reset(seed=0, options={"learner": "black"})
    assert vec.learner_seats.tolist() == [1, 1, 1, 1]
    vec.reset(options=None)  # the second episode of each game: (game + 1) % 2
    assert vec.learner_seats.tolist() == [1, 0, 1, 0]
    with pytest.raises(ValueError, match=r"'learner'.*self_play"):
        YinshVectorEnv(2, self_play=True).reset(options={"learner": 0})


def test_self_play_gives_each_decision_to_the_player_to_act() -> None:
    vec = YinshVectorEnv(8, self_play=True)
    observations, _ = vec.reset(seed=3)
    rng = np.random.default_rng(3)
    ends = 0
    for _ in range(400):
        seats = vec.learner_seats
        whites = observations["observation"][:, 0, 0, 16]
        np.testing.assert_array_equal(whites, seats == 0)
        observations, rewards, terminated, _, info = vec.step(
            random_legal(observations["action_mask"], rng)
        )
        check_valid(observations)
        for i in np.flatnonzero(terminated):
            ends += 1
            result = str(info["final_info"]["result"][i])
            mover = 0 if info["final_info"]["learner"][i] == "player_0" else 1
            expected = {"W": 1.0, "B": -1.0}.get(result, 0.0) * (1 if mover == 0 else -1)
            assert rewards[i] == expected
    assert ends >= 8


def test_a_sampler_chooses_an_opponent_per_game_and_hears_the_results() -> None:
    pool = OpponentPool()
    pool.add("random", None)
    pool.add("lowest", lowest)
    vec = YinshVectorEnv(6, opponent=pool)
    observations, _ = vec.reset(seed=4)
    rng = np.random.default_rng(4)
    names: list[str] = []
    for _ in range(200):
        observations, _, terminated, _, info = vec.step(
            random_legal(observations["action_mask"], rng)
        )
        names += [str(info["final_info"]["opponent"][i]) for i in np.flatnonzero(terminated)]
    assert set(names) == {"random", "lowest"}
    assert sum(entry.games for entry in pool.entries) == len(names)


def test_a_batch_opponent_is_asked_for_all_its_games_at_once() -> None:
    class Counting(RandomOpponent):
        def __init__(self) -> None:
            self.sizes: list[int] = []

        def act_batch(self, observations: Any, masks: np.ndarray, rng: Any) -> np.ndarray:
            self.sizes.append(len(masks))
            return super().act_batch(observations, masks, rng)

    opponent = Counting()
    vec = YinshVectorEnv(32, opponent=opponent, learner="player_1")
    vec.reset(seed=0)
    assert opponent.sizes == [32]  # Black's learner: White's opponent opens in every game


def test_several_opponents_each_see_their_own_games_in_one_round() -> None:
    """A pool's opponents are asked in turn, their moves applied together: each is
    shown its own games' planes and masks, as the scalar env would show them."""
    from yinsh_env.envs.observation import decode

    class Seeing(RandomOpponent):
        observes = True

        def __init__(self) -> None:
            self.calls = 0

        def act_batch(self, observations: Any, masks: np.ndarray, rng: Any) -> np.ndarray:
            assert observations is not None and len(observations) == len(masks)
            for planes, mask in zip(observations, masks):
                assert np.array_equal(decode(planes).legal_mask(), mask)
            self.calls += 1
            return super().act_batch(observations, masks, rng)

    seeing = [Seeing() for _ in range(3)]
    pool = OpponentPool()
    for i, opponent in enumerate(seeing):
        pool.add(f"seeing{i}", opponent)
    pool.add("random", None)
    vec = YinshVectorEnv(12, opponent=pool)
    observations, _ = vec.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(60):
        observations, *_ = vec.step(random_legal(observations["action_mask"], rng))
        check_valid(observations)
    assert all(opponent.calls > 10 for opponent in seeing)


def test_an_opponent_choosing_illegal_actions_is_refused() -> None:
    vec = YinshVectorEnv(2, opponent=lambda observation: 2141, learner="player_1")
    with pytest.raises(IllegalActionError, match="opponent"):
        vec.reset(seed=0)


@pytest.mark.parametrize("offset", [2142, -2142])
def test_an_opponents_action_out_of_range_is_refused_not_wrapped(offset: int) -> None:
    """An index 2,142 away from a legal one is no action, whatever it points at modulo."""

    def shifted(observation: dict[str, np.ndarray]) -> int:
        return lowest(observation) + offset

    vec = YinshVectorEnv(2, opponent=shifted, learner="player_1")
    with pytest.raises(IllegalActionError, match="opponent"):
        vec.reset(seed=0)


# --- limits: num_envs, order of calls, settings checked where the env is made -----


@pytest.mark.parametrize("num_envs", [MAX_NUM_ENVS + 1, 10**6, 2**63, np.uint64(2**63), 10**30])
def test_too_many_games_are_refused_before_anything_is_allocated(
    num_envs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def allocate(*args: Any) -> None:
        raise AssertionError("allocated before num_envs was checked")

    monkeypatch.setattr(vector_env_module, "new_batch", allocate)
    monkeypatch.setattr(vector_env_module, "batch_space", allocate)
    with pytest.raises(ValueError, match=rf"num_envs must be an integer 1\.\.{MAX_NUM_ENVS}, got"):
        YinshVectorEnv(num_envs)
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec("Yinsh-v0", num_envs=num_envs, vectorization_mode="vector_entry_point")


def test_the_largest_number_of_games_is_accepted() -> None:
    assert check_num_envs(MAX_NUM_ENVS) == MAX_NUM_ENVS
    assert check_num_envs(np.int32(1)) == 1


def test_step_before_reset_needs_a_reset_as_the_scalar_env_does() -> None:
    scalar = gym.make("Yinsh-v0")
    with pytest.raises(gym.error.ResetNeeded):
        scalar.step(0)
    vec = gym.make_vec("Yinsh-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(gym.error.ResetNeeded, match=r"step\(\) before reset\(\)"):
        vec.step(np.zeros(2, dtype=np.int64))
    observations, _ = vec.reset(seed=0)
    vec.step(random_legal(observations["action_mask"], np.random.default_rng(0)))


def test_a_reset_or_step_that_raised_part_way_needs_a_reset() -> None:
    calls = 0

    def fails_on_its_third_move(observation: dict[str, np.ndarray]) -> int:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise RuntimeError("opponent broke")
        return lowest(observation)

    vec = YinshVectorEnv(1, opponent=fails_on_its_third_move, learner="player_0")
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match="opponent broke"):
        for _ in range(3):
            vec.step(random_legal(vec.action_masks(), rng))
    assert calls == 3
    with pytest.raises(gym.error.ResetNeeded, match=r"step\(\) raised part-way"):
        vec.step(random_legal(vec.action_masks(), rng))
    observations, _ = vec.reset(seed=0)  # the opponent plays on from its fourth call
    vec.step(random_legal(observations["action_mask"], rng))

    refused = YinshVectorEnv(2, opponent=lambda observation: 2141, learner="player_1")
    with pytest.raises(IllegalActionError):
        refused.reset(seed=0)
    with pytest.raises(gym.error.ResetNeeded, match=r"reset\(\) raised part-way"):
        refused.step(np.zeros(2, dtype=np.int64))


def test_an_illegal_action_refused_before_any_change_needs_no_reset() -> None:
    vec = YinshVectorEnv(1, illegal_reward=None)
    observations, _ = vec.reset(seed=0)
    illegal = np.flatnonzero(observations["action_mask"][0] == 0)[:1]
    with pytest.raises(IllegalActionError):
        vec.step(illegal)
    with pytest.raises(NotAnActionError):
        vec.step(np.array([N_ACTIONS]))
    vec.step(random_legal(observations["action_mask"], np.random.default_rng(0)))


def test_every_call_after_close_is_a_clear_error() -> None:
    vec = YinshVectorEnv(2)
    vec.reset(seed=0)
    vec.close()
    vec.close()  # closing twice is harmless, as Gymnasium's vector envs have it
    calls: dict[str, Any] = {
        "reset": lambda: vec.reset(),
        "step": lambda: vec.step(np.zeros(2, dtype=np.int64)),
        "action_masks": vec.action_masks,
        "learner_seats": lambda: vec.learner_seats,
    }
    for name, call in calls.items():
        with pytest.raises(gym.error.ClosedEnvironmentError, match=rf"{name}\(\) after close"):
            call()


def test_the_vector_env_carries_its_autoreset_mode_as_gymnasiums_do() -> None:
    vec = gym.make_vec("Yinsh-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert vec.autoreset_mode is AutoresetMode.SAME_STEP
    assert vec.metadata["autoreset_mode"] is vec.autoreset_mode
    sync = gym.make_vec("Yinsh-v0", num_envs=2, vectorization_mode="sync")
    assert isinstance(sync.autoreset_mode, AutoresetMode)  # where Gymnasium keeps it


@pytest.mark.parametrize(
    ("make", "kwargs", "error", "words"),
    [
        (YinshVectorEnv, {"self_play": "false"}, TypeError, "self_play must be True or False"),
        (YinshVectorEnv, {"self_play": 1}, TypeError, "self_play must be True or False"),
        (YinshVectorEnv, {"dense_reward": 1e308}, ValueError, "dense_reward must be a number in"),
        (YinshVectorEnv, {"dense_reward": MAX_WEIGHT * 1.01}, ValueError, "dense_reward"),
        (YinshVectorEnv, {"dense_reward": float("nan")}, ValueError, "dense_reward"),
        (YinshVectorEnv, {"dense_reward": 10**400}, ValueError, "dense_reward"),
        (YinshVectorEnv, {"dense_reward": "0.5"}, ValueError, "dense_reward must be a number"),
        (YinshVectorEnv, {"dense_reward": np.bool_(True)}, ValueError, "dense_reward"),
        (YinshVectorEnv, {"gamma": np.float64("nan")}, ValueError, "gamma"),
        (ShapedReward, {"weight": 1e308}, ValueError, "dense_reward must be a number in"),
        (YinshGymEnv, {"legal_moves_in_info": "false"}, TypeError, "legal_moves_in_info"),
        (raw_env, {"legal_moves_in_info": "false"}, TypeError, "legal_moves_in_info"),
    ],
)
def test_flags_and_shaping_weights_are_checked_where_each_env_is_made(
    make: Any, kwargs: dict[str, Any], error: type, words: str
) -> None:
    args = (YinshGymEnv(),) if make is ShapedReward else ()
    with pytest.raises(error, match=words):
        make(*args, **kwargs)


def test_the_largest_shaping_weight_gives_finite_rewards() -> None:
    vec = YinshVectorEnv(4, opponent=lowest, dense_reward=MAX_WEIGHT)
    observations, _ = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    while ended < 4:
        observations, rewards, terminated, *_ = vec.step(
            random_legal(observations["action_mask"], rng)
        )
        assert np.isfinite(rewards).all()
        ended += int(terminated.sum())


# --- autoreset DISABLED: a finished game waits for reset(options={"reset_mask": ...}) ---


def test_disabled_autoreset_plays_as_same_step_with_resets_by_mask() -> None:
    same = YinshVectorEnv(4, opponent=lowest)
    held = YinshVectorEnv(4, opponent=lowest, autoreset_mode=AutoresetMode.DISABLED)
    assert held.autoreset_mode is held.metadata["autoreset_mode"] is AutoresetMode.DISABLED
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP  # the class's untouched
    observations, _ = same.reset(seed=5)
    assert data_equivalence(held.reset(seed=5)[0], observations, exact=True)
    rng = np.random.default_rng(5)
    ended = 0
    while ended < 6:
        actions = random_legal(observations["action_mask"], rng)
        observations, rewards, terminated, _, info = same.step(actions)
        shown, held_rewards, held_terminated, _, held_info = held.step(actions)
        assert data_equivalence((held_rewards, held_terminated), (rewards, terminated), exact=True)
        done = np.flatnonzero(terminated)
        for i in done:  # the game as it ended, where SAME_STEP shows the next one
            assert data_equivalence({k: v[i] for k, v in shown.items()}, info["final_obs"][i])
            assert not shown["action_mask"][i].any()
            for key in ("result", "end_reason", "learner"):
                assert held_info[f"_{key}"][i] and held_info[key][i] == info["final_info"][key][i]
        assert "final_obs" not in held_info
        if done.size:
            ended += done.size
            with pytest.raises(gym.error.ResetNeeded, match=r"are over.*reset_mask"):
                held.step(actions)
            shown, _ = held.reset(options={"reset_mask": terminated})
        assert data_equivalence(shown, observations, exact=True)


@pytest.mark.parametrize(
    ("mask", "words"),
    [(np.ones(3, dtype=np.int64), "must be 3 bools"), (np.ones(2, dtype=np.bool_), "3 bools")],
)
def test_a_malformed_reset_mask_is_refused_by_name(mask: np.ndarray, words: str) -> None:
    vec = YinshVectorEnv(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=words):
        vec.reset(options={"reset_mask": mask})


def test_a_reset_mask_resets_only_the_games_it_marks_and_needs_a_full_reset_first() -> None:
    vec = YinshVectorEnv(3, opponent=lowest, learner="player_0")
    with pytest.raises(gym.error.ResetNeeded, match="reset every game"):
        vec.reset(options={"reset_mask": np.array([True, False, False])})
    observations, _ = vec.reset(options={"reset_mask": np.ones(3, dtype=np.bool_)})
    actions = random_legal(observations["action_mask"], np.random.default_rng(0))
    moved, *_ = vec.step(actions)
    again, _ = vec.reset(options={"reset_mask": np.array([False, True, False])})
    for i, source in enumerate((moved, observations, moved)):
        assert data_equivalence(
            {k: v[i] for k, v in again.items()}, {k: v[i] for k, v in source.items()}
        )


@pytest.mark.parametrize("mode", ["next_step", "same_step", 1, None])
def test_an_autoreset_mode_the_env_does_not_offer_is_refused(mode: Any) -> None:
    with pytest.raises(ValueError, match=r"autoreset_mode must be one of AutoresetMode\.SAME_STEP"):
        YinshVectorEnv(2, autoreset_mode=mode)


def test_autoreset_modes_are_taken_by_value_too() -> None:
    vec = gym.make_vec(
        "Yinsh-v0", num_envs=2, vectorization_mode="vector_entry_point", autoreset_mode="Disabled"
    )
    assert vec.autoreset_mode is AutoresetMode.DISABLED
