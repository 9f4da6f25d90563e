"""The PettingZoo AEC environment: API conformance, turn order, rewards, errors."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Iterator

import numpy as np
import pettingzoo
import pytest
from helpers import LAST_MARKER, OPPONENT_ROW, OWN_ROW, SECOND_PASS

from yinsh_env import (
    ACTION_NAMES,
    N_ACTIONS,
    IllegalActionError,
    NotAnActionError,
    NotationError,
    PositionError,
    State,
    env,
)
from yinsh_env import raw_env as make_raw_env
from yinsh_env.envs.aec_env import ClassicWrapper, raw_env, standard_wrappers
from yinsh_env.envs.env_base import AGENTS
from yinsh_env.envs.observation import decode, encode

with warnings.catch_warnings():  # pettingzoo.test imports connect four the deprecated way
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test, render_test, seed_test


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # PettingZoo's tests warn about dict observations and illegal moves by design.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def play(e: object, actions: list[str]) -> list[str]:
    """Apply ``actions`` given in notation; returns the agent selected before each."""
    seen = []
    for action in actions:
        seen.append(e.agent_selection)  # type: ignore[attr-defined]
        e.step(_index(action))  # type: ignore[attr-defined]
    return seen


def random_game(e: object, seed: int, steps: int | None = None) -> list[int]:
    """Play masked random actions through the AEC loop; returns the actions."""
    rng = np.random.default_rng(seed)
    actions = []
    for agent in e.agent_iter():  # type: ignore[attr-defined]
        obs, _, term, trunc, _ = e.last()  # type: ignore[attr-defined]
        if term or trunc:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            actions.append(action)
        e.step(action)  # type: ignore[attr-defined]
        if steps is not None and len(actions) >= steps:
            break
        assert agent in AGENTS
    return actions


# --- PettingZoo's own conformance tests ------------------------------------------------


@pytest.mark.parametrize("factory", [env, raw_env], ids=["env", "raw_env"])
def test_pettingzoo_api_test(factory: type) -> None:
    api_test(factory(), num_cycles=300)


@pytest.mark.parametrize("factory", [env, raw_env], ids=["env", "raw_env"])
def test_pettingzoo_seed_test(factory: type) -> None:
    seed_test(factory, num_cycles=100)


def test_pettingzoo_api_and_seed_tests_pass_with_shaping() -> None:
    def shaped() -> object:
        return env(dense_reward=0.5, threat_reward=0.05, opening_plies=4)

    api_test(shaped(), num_cycles=300)
    seed_test(shaped, num_cycles=100)


def test_pettingzoo_render_test() -> None:
    render_test(
        env,
        custom_tests={
            "ansi": lambda r: isinstance(r, str) and "A  B  C" in r,
            "rgb_array": lambda r: r.ndim == 3 and r.shape[2] == 3 and r.std() > 0,
        },
    )


def test_registered_with_pettingzoo() -> None:
    e = pettingzoo.make("aec", "yinsh_v0", rings_to_win=1)
    e.reset()
    assert e.unwrapped.metadata["name"] == "yinsh_v0"
    assert e.unwrapped.game.rings_to_win == 1


def test_metadata_and_spaces() -> None:
    e = env()
    assert e.metadata["name"] == "yinsh_v0"
    assert e.metadata["is_parallelizable"] is False
    assert set(e.metadata["render_modes"]) == {"ansi", "rgb_array", "human"}
    assert e.possible_agents == ["player_0", "player_1"]
    for agent in e.possible_agents:
        assert e.action_space(agent) is e.action_space(agent)
        assert e.observation_space(agent) is e.observation_space(agent)
        assert e.action_space(agent).n == N_ACTIONS
        box = e.observation_space(agent)["observation"]
        assert box.shape == (11, 11, 17) and box.dtype == np.float32
        assert e.observation_space(agent)["action_mask"].dtype == np.int8
    assert e.action_space("player_0") is not e.action_space("player_1")  # seeded separately


# --- observations ---------------------------------------------------------------------


def test_observations_follow_the_engine_through_a_game() -> None:
    e = raw_env()
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    while not e.game.is_terminal:
        agent, game = e.agent_selection, e.game
        me = AGENTS.index(agent)
        assert me == game.to_act
        obs = e.observe(agent)
        assert obs["action_mask"].dtype == np.int8 and obs["observation"].dtype == np.float32
        assert np.array_equal(obs["action_mask"], game.legal_mask())
        assert decode(obs["observation"]) == game
        assert e.observation_space(agent).contains(obs)
        other = e.observe(AGENTS[1 - me])
        assert not other["action_mask"].any()
        assert np.array_equal(other["observation"], encode(game, 1 - me))
        assert np.array_equal(other["observation"][:, :, 0], obs["observation"][:, :, 1])
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    for agent in AGENTS:
        final = e.observe(agent)
        assert not final["action_mask"].any()
        assert not final["observation"][:, :, 5:9].any()  # no phase: the game is over


def test_each_observation_is_new_and_outlives_the_step() -> None:
    e = raw_env()
    e.reset()
    first = e.observe("player_0")
    again = e.observe("player_0")
    assert again is not first
    assert all(again[key] is not first[key] for key in first)
    e.step("E5")
    assert first["observation"][:, :, 0].sum() == 0  # the old observation was not changed


def test_unknown_agent_is_a_clear_error() -> None:
    e = raw_env()
    e.reset()
    with pytest.raises(ValueError, match="unknown agent"):
        e.observe("player_2")


def test_legal_moves_in_info() -> None:
    e = env(legal_moves_in_info=True)
    e.reset(seed=0)
    for _ in range(30):
        obs, _, _, _, info = e.last()
        names = info["legal_moves"]
        mask = obs["action_mask"]
        assert names == [ACTION_NAMES[a] for a in np.flatnonzero(mask)]
        other = AGENTS[1 - AGENTS.index(e.agent_selection)]
        assert e.infos[other] == {}
        e.step(int(np.flatnonzero(mask)[0]))
    assert env().unwrapped.infos["player_0"] == {}  # off by default


# --- turn order and rewards -----------------------------------------------------------


def test_mover_acts_several_times_and_wins_on_its_own_resolution() -> None:
    e = env()
    e.reset(options={"state": OWN_ROW})
    assert play(e, ["E7-E8", "xE3-E7"]) == ["player_0", "player_0"]
    assert e.agent_selection == "player_0"
    e.step(_index("xE8"))  # White's third ring
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}
    finals = {}
    for agent in e.agent_iter():
        obs, reward, term, _, _ = e.last()
        assert term and not obs["action_mask"].any()
        finals[agent] = reward
        e.step(None)
    assert finals == {"player_0": 1.0, "player_1": -1.0}
    assert e.agents == []


def test_opponent_resolves_the_row_made_for_it_and_wins() -> None:
    e = env()
    e.reset(options={"state": OPPONENT_ROW})
    e.step(_index("E5-G5"))
    assert e.agent_selection == "player_1"  # Black removes its row before anything else
    obs, *_ = e.last()
    assert obs["action_mask"][_index("xF3-F7")] == 1
    assert not e.observe("player_0")["action_mask"].any()
    play(e, ["xF3-F7"])
    assert e.agent_selection == "player_1"
    e.step(_index("xA2"))  # Black's third ring
    assert e.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert e.unwrapped.game.end_reason == "rings"


def test_game_ends_when_the_pool_runs_out() -> None:
    e = env()
    e.reset(options={"state": LAST_MARKER})
    e.step(_index("E5-E6"))
    assert all(e.terminations.values()) and not any(e.truncations.values())
    assert e.unwrapped.game.end_reason == "pool"
    assert e.rewards == {"player_0": -1.0, "player_1": 1.0}  # Black removed more rings
    assert e.last()[1] in (-1.0, 1.0)


def test_game_ends_on_the_second_pass() -> None:
    e = env()
    e.reset(options={"state": SECOND_PASS})
    obs, *_ = e.last()
    assert np.flatnonzero(obs["action_mask"]).tolist() == [_index("pass")]
    e.step(_index("pass"))
    assert e.unwrapped.game.end_reason == "passes"
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}


def test_rewards_sum_to_zero_and_match_the_engine() -> None:
    for seed in range(3):
        e = env()
        e.reset(seed=seed)
        totals = dict.fromkeys(AGENTS, 0.0)
        rng = np.random.default_rng(seed)
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            totals[agent] += reward
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        game = e.unwrapped.game
        assert (totals["player_0"], totals["player_1"]) == game.returns()


# --- start positions, seeds, bad input -----------------------------------------------


def test_reset_from_state_text_and_actions() -> None:
    e = raw_env()
    e.reset(options={"state": State(), "actions": ["E5", "F6"]})
    assert e.game.ply == 2 and e.agent_selection == "player_0"
    assert e.game.piece_at(_point("F6")) == "r"
    e.reset(options={"state": OPPONENT_ROW})
    assert e.game.to_text() == OPPONENT_ROW
    e.reset()
    assert e.game == State()


def test_reset_options_do_not_alias_the_callers_state() -> None:
    start = State()
    e = raw_env()
    e.reset(options={"state": start})
    e.step("E5")
    assert start == State()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"state": "not a position"}, PositionError),
        ({"state": 42}, PositionError),
        ({"actions": ["E5", "E5"]}, IllegalActionError),
        ({"actions": ["Z9"]}, NotationError),
        ({"actions": "E5"}, PositionError),
        ({"state": LAST_MARKER, "actions": ["E5-E6"]}, PositionError),  # finished game
    ],
)
def test_bad_reset_options_raise_and_keep_the_game(options: dict, error: type) -> None:
    e = raw_env()
    e.reset()
    e.step("E5")
    before = e.game.to_text()
    with pytest.raises(error):
        e.reset(options=options)
    assert e.game.to_text() == before and e.agent_selection == "player_1"


def test_rings_to_win_option_and_validation() -> None:
    e = raw_env(rings_to_win=1)
    e.reset()
    assert e.game.rings_to_win == 1
    with pytest.raises(ValueError, match="rings_to_win"):
        raw_env(rings_to_win=7)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="window")


def test_seeded_reset_is_reproducible() -> None:
    def run(seed: int) -> list[int]:
        e = env()
        e.reset(seed=seed)
        actions = []
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            action = None if term or trunc else e.action_space(agent).sample(obs["action_mask"])
            if action is not None:
                actions.append(int(action))
            e.step(action)
        return actions

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_illegal_action_in_raw_env_raises_and_changes_nothing() -> None:
    e = raw_env()
    e.reset()
    play(e, ["E5", "F6"])
    before = (e.game.to_text(), e.agent_selection, dict(e.rewards), dict(e.terminations))
    obs = e.observe("player_0")
    for bad in (_index("E5"), _index("xE5"), -1, N_ACTIONS, None, "E5", 3.5):
        with pytest.raises(ValueError) as info:
            e.step(bad)  # type: ignore[arg-type]
        assert isinstance(info.value, (IllegalActionError, NotationError, NotAnActionError))
        assert (e.game.to_text(), e.agent_selection, e.rewards, e.terminations) == before
        now = e.observe("player_0")
        assert all(np.array_equal(now[key], obs[key]) for key in obs)
    with pytest.raises(NotationError):
        e.step("Z9")
    e.step(np.int64(_index("A2")))  # numpy integers are actions too
    assert e.agent_selection == "player_1"


def test_illegal_action_in_env_ends_the_game_as_pettingzoo_does() -> None:
    e = env()
    e.reset()
    e.step(_index("E5"))
    e.step(_index("E5"))  # occupied: illegal for player_1
    assert all(e.terminations.values()) and all(e.truncations.values())
    assert e.rewards == {"player_0": 0.0, "player_1": -1.0}
    rewards = {}
    for agent in e.agent_iter():
        rewards[agent] = e.last()[1]
        e.step(None)
    assert rewards == {"player_0": 0.0, "player_1": -1.0}
    assert e.unwrapped.game.ply == 1  # the illegal action was not applied


def test_env_refuses_what_is_no_action_and_the_game_goes_on() -> None:
    e = env()
    e.reset()
    for bad in (N_ACTIONS, -1, 2.0, None, True, "Z9"):
        with pytest.raises(ValueError):
            e.step(bad)  # type: ignore[arg-type]
        assert e.unwrapped.game.ply == 0 and not any(e.terminations.values())
    e.step("E5")  # notation is an action, as in raw_env
    assert e.unwrapped.game.ply == 1


def test_env_enforces_call_order() -> None:
    e = env()
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agent_selection
    with pytest.raises(AssertionError, match="reset"):
        e.step(0)
    with pytest.raises(AssertionError, match="reset"):
        e.observe("player_0")
    e.reset()
    iterator = iter(e.agent_iter())
    next(iterator)
    with pytest.raises(AssertionError, match="step"):
        next(iterator)


def test_env_behaves_as_pettingzoo_standard_wrapper_stack() -> None:
    """ClassicWrapper against PettingZoo's three wrappers, with an illegal move at the end."""
    for illegal_after in (5, 40, None):
        ours, theirs = env(), standard_wrappers(make_raw_env())
        assert isinstance(ours, ClassicWrapper)
        trace = []
        for e in (ours, theirs):
            e.reset(seed=11)
            rng = np.random.default_rng(11)
            log = []
            for n, agent in enumerate(e.agent_iter()):
                obs, reward, term, trunc, info = e.last()
                log.append(
                    (agent, obs["action_mask"].tobytes(), obs["observation"].tobytes(),
                     float(reward), term, trunc, info, sorted(e.agents))
                )  # fmt: skip
                if term or trunc:
                    action = None
                elif n == illegal_after:
                    action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
                else:
                    action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
                e.step(action)
            trace.append(log)
        assert trace[0] == trace[1]


# --- pickling and rendering -----------------------------------------------------------


@pytest.mark.parametrize("factory", [env, raw_env], ids=["env", "raw_env"])
def test_pickle_round_trip_mid_game(factory: type) -> None:
    e = factory()
    e.reset(seed=5)
    random_game(e, seed=5, steps=25)
    copy = pickle.loads(pickle.dumps(e))
    assert copy.unwrapped.game == e.unwrapped.game
    assert copy.agent_selection == e.agent_selection
    assert random_game(copy, seed=9) == random_game(e, seed=9)
    assert copy.unwrapped.game == e.unwrapped.game and copy.rewards == e.rewards


def test_render_modes() -> None:
    for mode, check in (
        ("ansi", lambda r: isinstance(r, str) and "White to place" in r),
        ("rgb_array", lambda r: r.dtype == np.uint8 and r.ndim == 3 and r.shape[2] == 3),
    ):
        e = env(render_mode=mode)
        e.reset()
        assert check(e.render())
    e = env(render_mode="rgb_array", render_size=240)
    e.reset()
    assert e.render().shape[1] == 240
    e = raw_env()
    e.reset()
    e.step("E5")
    svg = e.svg()
    assert svg.startswith("<svg") and "ring white" in svg
    with pytest.warns(UserWarning, match="render_mode"):
        warnings.simplefilter("always")
        assert e.render() is None


def test_human_render_prints_the_board(capsys: pytest.CaptureFixture[str]) -> None:
    e = env(render_mode="human")
    e.reset()
    e.step(_index("E5"))
    assert e.render() is None
    out = capsys.readouterr().out
    assert out.count("A  B  C") >= 2  # drawn on reset and after the step


def _index(name: str) -> int:
    from yinsh_env import str_to_action

    return str_to_action(name)


def _point(name: str) -> int:
    from yinsh_env import parse_point

    return parse_point(name)
