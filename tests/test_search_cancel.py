"""Cooperative cancellation: searches stop at the hook of ``stop_when`` with a legal move."""

from __future__ import annotations

import random

import numpy as np
from helpers import random_game

from agents import make_agent
from agents.search import UCT, RolloutEvaluator, Search, run_searches, stop_hook, stop_when
from yinsh_env import State


def a_position() -> State:
    return random_game(seed=3, stop=14)


def stop() -> bool:
    return True


def test_a_search_stops_after_one_simulation_when_told() -> None:
    state = a_position()
    evaluator = RolloutEvaluator(random.Random(0), 10, 0.5)
    rng = np.random.default_rng(0)
    search = Search(
        state.copy(), UCT(2.0), 100_000, rng, make_leaf=evaluator.leaf, should_stop=stop
    )
    run_searches([search], evaluator)
    assert search.done_simulations == 1 and search.best_action() in state.legal_actions()


def test_the_hook_reaches_every_searching_agent_and_only_inside_its_block() -> None:
    state = a_position()
    calls = []

    def counting_stop() -> bool:
        calls.append(1)
        return True

    for spec in ("mcts:sims=100000", "alphabeta:depth=8", "pretrained:sims=100000"):
        agent = make_agent(spec, seed=0)
        calls.clear()
        with stop_when(counting_stop):
            action = agent.act(state)
        assert action in state.legal_actions() and calls, spec
    mcts = make_agent("mcts:sims=100000", seed=0)
    with stop_when(stop):
        mcts.act(state)
    assert mcts.last_sims == 1
    assert stop_hook() is None
    small = make_agent("mcts:sims=20", seed=0)
    small.act(state)
    assert small.last_sims == 20  # no hook outside the block: the budget decides


def test_a_hook_that_never_fires_changes_nothing() -> None:
    state = a_position()
    first = make_agent("mcts:sims=60", seed=5).act(state)
    with stop_when(lambda: False):
        second = make_agent("mcts:sims=60", seed=5).act(state)
    assert first == second
