"""YINSH as an OpenSpiel game: OpenSpiel's own checks, its MCTS bot, and agreement with the engine.

Skipped where OpenSpiel is not installed (``pip install -e ".[openspiel]"``).
"""

from __future__ import annotations

import base64
import pickle
import random
import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason='optional extra: pip install -e ".[openspiel]"')

from open_spiel.python.algorithms import mcts  # noqa: E402

import yinsh_env.envs.openspiel as yinsh_spiel  # noqa: E402
from agents import make_agent  # noqa: E402
from agents.evaluation.arena import MatchSettings, run_arena  # noqa: E402
from yinsh_env import ACTION_NAMES, N_ACTIONS, IllegalActionError, State  # noqa: E402
from yinsh_env.envs.observation import encode  # noqa: E402


def random_states(rings_to_win: int, seed: int) -> list[pyspiel.State]:
    """Every state of one uniformly random game, start to end."""
    game = pyspiel.load_game("yinsh", {"rings_to_win": rings_to_win})
    rng = random.Random(seed)
    state = game.new_initial_state()
    states = [state.clone()]
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
        states.append(state.clone())
    return states


def test_game_type_and_info() -> None:
    game = pyspiel.load_game("yinsh")
    kind = game.get_type()
    assert kind.short_name == "yinsh"
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert game.num_distinct_actions() == N_ACTIONS == 2142
    assert game.num_players() == 2 and game.max_chance_outcomes() == 0
    assert game.observation_tensor_shape() == [11, 11, 17]
    assert game.get_parameters() == {"rings_to_win": 3}
    assert game.max_game_length() == yinsh_spiel.max_game_length(3) == 173
    blitz = pyspiel.load_game("yinsh(rings_to_win=1)")
    assert blitz.new_initial_state().yinsh_state.rings_to_win == 1
    with pytest.raises(ValueError, match="rings_to_win"):
        pyspiel.load_game("yinsh(rings_to_win=9)")


@pytest.mark.parametrize("rings_to_win", [1, 3])
def test_openspiel_random_simulation_test_with_serialisation(rings_to_win: int) -> None:
    game = pyspiel.load_game("yinsh", {"rings_to_win": rings_to_win})
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_games_stay_within_the_length_bound_and_agree_with_the_engine() -> None:
    for seed in range(6):
        states = random_states(1 + seed % 3, seed)
        final = states[-1]
        engine = final.yinsh_state
        assert len(states) - 1 == len(final.history()) <= final.get_game().max_game_length()
        assert final.returns() == list(engine.returns())
        assert sum(final.returns()) == 0
        # Replaying the OpenSpiel history through the checked engine reaches the same end.
        replay = State(rings_to_win=engine.rings_to_win).apply_all(final.history())
        assert replay == engine


def test_action_strings_are_the_project_notation() -> None:
    state = pyspiel.load_game("yinsh").new_initial_state()
    for action in range(N_ACTIONS):
        assert state.action_to_string(0, action) == ACTION_NAMES[action]
    for spiel_state in random_states(3, seed=1)[::7]:
        if spiel_state.is_terminal():
            continue
        for action in spiel_state.legal_actions():
            name = spiel_state.action_to_string(spiel_state.current_player(), action)
            assert spiel_state.string_to_action(name) == action


def test_observation_tensor_is_the_project_planes_for_both_players() -> None:
    for spiel_state in random_states(3, seed=2):
        engine = spiel_state.yinsh_state
        for player in (0, 1):
            tensor = np.asarray(spiel_state.observation_tensor(player), dtype=np.float32)
            assert np.array_equal(tensor.reshape(11, 11, 17), encode(engine, player))
            assert spiel_state.observation_string(player) == engine.to_text()
        if not spiel_state.is_terminal():
            assert spiel_state.current_player() == engine.to_act
            assert spiel_state.legal_actions() == engine.legal_actions()


def test_serialisation_round_trip_goes_through_the_position_text() -> None:
    game = pyspiel.load_game("yinsh")
    for spiel_state in random_states(3, seed=3)[::9]:
        text = spiel_state.yinsh_state.to_text()
        serialized = spiel_state.serialize()
        # The Python side of the state pickles as its position text, nothing else.
        pickled = base64.b64decode(serialized.split("__dict__=", 1)[1])
        assert text.encode() in pickled
        restored = game.deserialize_state(serialized)
        assert restored.yinsh_state == spiel_state.yinsh_state
        assert restored.history() == spiel_state.history()
        assert str(restored) == str(spiel_state)
        _, again = pyspiel.deserialize_game_and_state(
            pyspiel.serialize_game_and_state(game, spiel_state)
        )
        assert again.yinsh_state == spiel_state.yinsh_state
        assert pickle.loads(pickle.dumps(spiel_state)).yinsh_state == spiel_state.yinsh_state
        # A position given as text starts a game there.
        assert game.new_initial_state(text).yinsh_state == spiel_state.yinsh_state
        if not spiel_state.is_terminal():
            action = spiel_state.legal_actions()[0]
            restored.apply_action(action)
            spiel_state.apply_action(action)
            assert restored.yinsh_state == spiel_state.yinsh_state


def test_clones_are_independent_and_illegal_actions_change_nothing() -> None:
    state = pyspiel.load_game("yinsh").new_initial_state()
    state.apply_action(state.string_to_action("E5"))
    clone = state.clone()
    clone.apply_action(clone.string_to_action("F6"))
    assert state.yinsh_state.to_text() != clone.yinsh_state.to_text()
    before = state.serialize()
    with pytest.raises(IllegalActionError, match="E5"):
        state.apply_action(ACTION_NAMES.index("E5"))  # taken: placed already
    assert state.serialize() == before and state.history() == [ACTION_NAMES.index("E5")]
    with pytest.raises(ValueError, match="rings_to_win=1"):
        pyspiel.load_game("yinsh").new_initial_state(State(rings_to_win=1).to_text())


def test_openspiel_mcts_bot_plays_a_game_to_the_end() -> None:
    game = pyspiel.load_game("yinsh(rings_to_win=1)")
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(
        game, 2.0, 6, mcts.RandomRolloutEvaluator(1, rng), random_state=rng, solve=True
    )
    state = game.new_initial_state()
    engine = State(rings_to_win=1)
    while not state.is_terminal():
        action = bot.step(state)
        assert action in state.legal_actions()
        engine.apply(action)  # the engine agrees it is legal
        state.apply_action(action)
    assert engine == state.yinsh_state and engine.is_terminal
    assert state.returns() == list(engine.returns())


def test_openspiel_mcts_agent_plays_in_the_arena() -> None:
    agent = make_agent("openspiel_mcts:sims=4", seed=1)
    state = State(rings_to_win=1)
    assert agent.act(state) in state.legal_actions()
    result = run_arena(
        ["openspiel_mcts:sims=4", "random"],
        2,
        MatchSettings(workers=1, rings_to_win=1),
        progress=False,
    )
    pairing = result.pairings[0]
    assert pairing.games == 2 and pairing.a_forfeits == pairing.b_forfeits == 0


def test_the_package_does_not_import_openspiel_and_the_module_says_how_to_install_it() -> None:
    code = (
        "import sys, yinsh_env, agents, yinsh_env.envs.aec_env, yinsh_env.envs.gym_env\n"
        "assert 'pyspiel' not in sys.modules\n"
        "sys.modules['pyspiel'] = None\n"
        "try:\n"
        "    import yinsh_env.envs.openspiel\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install -e ".[openspiel]"' in out.stdout
