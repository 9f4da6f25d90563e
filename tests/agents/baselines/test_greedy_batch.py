"""The greedy baseline for many games at once (greedy_batch, GreedyAgent.act_batch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import random_positions

from agents import make_agent
from agents.baselines.greedy import GreedyAgent, best_turn_value
from agents.baselines.greedy_batch import GreedyOpponent
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode
from yinsh_env.vector.batch_agents import StateOpponent, batch_opponent, random_legal
from yinsh_env.vector.env import YinshVectorEnv


def batch(states: list[State]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack([encode(s) for s in states]), np.stack([s.legal_mask() for s in states])


def test_greedy_asked_per_game_chooses_as_the_scalar_greedy() -> None:
    states = random_positions(30, seed=2)
    planes, masks = batch(states)
    batched = StateOpponent(GreedyAgent(seed=5)).act_batch(planes, masks, np.random.default_rng())
    scalar = GreedyAgent(seed=5)
    assert batched.tolist() == [scalar.act(s) for s in states]


def test_batched_greedy_values_every_action_as_the_scalar_greedy() -> None:
    """Every legal action's value (the mover's turn finished greedily, then evaluated)
    equals agents.baselines.greedy's exactly, so the choice is one of the scalar agent's best."""
    states = random_positions(80, seed=3)
    planes, masks = batch(states)
    greedy = GreedyOpponent()
    game, action, value = greedy.values(planes, masks)
    expected = []
    for g, a in zip(game.tolist(), action.tolist()):
        child = states[g].copy()
        child.apply_unchecked(a)
        expected.append(best_turn_value(child, states[g].to_act))
    np.testing.assert_array_equal(value, expected)
    chosen = greedy.act_batch(planes, masks, np.random.default_rng(0))
    for g, pick in enumerate(chosen.tolist()):
        mine = value[game == g]
        assert value[(game == g) & (action == pick)][0] == mine.max()


def test_batched_greedy_breaks_ties_at_random_and_refuses_negative_noise() -> None:
    start, masks = batch([State()] * 2)
    picks = {int(a) for a in GreedyOpponent().act_batch(start, masks, np.random.default_rng(1))}
    picks |= {int(a) for a in GreedyOpponent().act_batch(start, masks, np.random.default_rng(2))}
    assert len(picks) > 1  # placements tie at the start: the choice varies
    with pytest.raises(ValueError, match="noise"):
        GreedyOpponent(noise=-1.0)


def test_the_greedy_agent_decides_a_batch_with_the_values_act_uses() -> None:
    states = random_positions(25, seed=8)
    planes, masks = batch(states)
    agent: Any = make_agent("greedy", seed=2)
    actions = agent.act_batch(planes, masks)
    for state, action in zip(states, actions.tolist()):
        values = {}
        for legal in state.legal_actions():
            work = state.copy()
            work.apply(legal)
            values[legal] = best_turn_value(work, state.to_act)
        assert values[action] == max(values.values())  # one of act's best actions
    again = make_agent("greedy", seed=2).act_batch(planes, masks)  # type: ignore[attr-defined]
    assert actions.tolist() == again.tolist()  # seeded: the same ties broken the same way
    noisy: Any = make_agent("greedy:noise=1000", seed=2)
    picks = noisy.act_batch(planes, masks)
    assert masks[np.arange(25), picks].all() and picks.tolist() != actions.tolist()
    assert agent.act_batch(planes[:0], masks[:0]).shape == (0,)
    with pytest.raises(ValueError, match="row 1"):
        agent.act_batch(planes[:2], masks[:2] * np.array([[1], [0]], dtype=masks.dtype))
    assert batch_opponent(agent) is agent  # the vector env asks it for all its games at once


def test_the_greedy_agent_beats_random_play_in_the_vector_env() -> None:
    vec = YinshVectorEnv(16, opponent=make_agent("greedy", seed=0), rings_to_win=1)
    observations, _ = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    results: list[float] = []
    while len(results) < 16:
        observations, rewards, terminated, _, _ = vec.step(
            random_legal(observations["action_mask"], rng)
        )
        results += rewards[terminated].tolist()
    assert np.mean(results) < -0.5
