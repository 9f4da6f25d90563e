"""Cancelling a running search (:mod:`agents.search.stopping`): it returns its best so far."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from agents.baselines.alphabeta import AlphaBetaAgent
from agents.baselines.mcts import MCTSAgent
from agents.params import MAX_SIMS
from agents.search import (
    PUCT,
    UCT,
    Gumbel,
    Leaf,
    Rules,
    Search,
    current_stop,
    run_searches,
    stop_when,
)
from yinsh_env import State

#: White's B5-D5 gives Black a row, which Black resolves before moving (a busy position).
POSITION = "4/4R2/2mmMmm1/8r/4m2R2/2M1r4/2R7/6R2/r4r2/1R5/r3 w move - 0-0 44 0 3"


def after(polls: int) -> Callable[[], bool]:
    """A stop condition that turns True at its ``polls``-th call, counting the calls."""
    calls = [0]

    def should_stop() -> bool:
        calls[0] += 1
        return calls[0] >= polls

    return should_stop


def uniform(leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
    return [np.zeros(len(leaf.actions)) for leaf in leaves], np.zeros(len(leaves))


@pytest.mark.parametrize("rules", [UCT(), PUCT(), Gumbel()], ids=["uct", "puct", "gumbel"])
def test_a_stopped_search_returns_a_legal_best_so_far(rules: Rules) -> None:
    state = State.from_text(POSITION)
    with stop_when(after(30)):
        # Gumbel plans its root for the whole budget: large, not absurd.
        search = Search(state.copy(), rules, 10**5, np.random.default_rng(0))
    run_searches([search], uniform)
    assert 1 <= search.done_simulations <= 30
    assert search.best_action() in state.legal_actions()


def test_the_stop_applies_after_one_simulation_even_if_already_requested() -> None:
    search = Search(State(), UCT(), 10**9, np.random.default_rng(0), should_stop=lambda: True)
    run_searches([search], uniform)
    assert search.done_simulations == 1


def test_a_stopped_mcts_agent_acts_and_analyses() -> None:
    state = State.from_text(POSITION)
    agent = MCTSAgent(seed=0, sims=MAX_SIMS)
    with stop_when(after(40)):
        action = agent.act(state)
    assert action in state.legal_actions() and 1 <= agent.last_sims <= 40
    with stop_when(after(40)):
        found = agent.analyse(state)
    assert found.action in state.legal_actions() and 1 <= found.simulations <= 40
    assert state.to_text() == POSITION  # the agent searched a copy


def test_a_stopped_alphabeta_keeps_the_last_completed_depth() -> None:
    state = State.from_text(POSITION)
    agent = AlphaBetaAgent(seed=0, depth=30)
    with stop_when(lambda: True):
        action = agent.act(state)
    assert action in state.legal_actions()
    assert agent.completed_depth == 1  # depth 1 always completes; depth 2 was cut


def test_the_condition_is_scoped_to_its_block_and_thread() -> None:
    assert current_stop() is None

    def outer() -> bool:
        return False

    def inner() -> bool:
        return True

    seen: list[object] = []
    with stop_when(outer):
        with stop_when(inner):
            assert current_stop() is inner
        assert current_stop() is outer
        thread = threading.Thread(target=lambda: seen.append(current_stop()))
        thread.start()
        thread.join(timeout=30)
    assert seen == [None]  # another thread runs its own searches unstopped
    assert current_stop() is None


@pytest.mark.slow
def test_the_network_agents_search_stops_too() -> None:
    """``pretrained`` (the web app offers it) searches through the same core."""
    from agents import make_agent

    state = State.from_text(POSITION)
    agent = make_agent(f"pretrained:sims={MAX_SIMS}", seed=0)
    with stop_when(after(3)):
        found = agent.analyse(state)
    assert found.action in state.legal_actions() and 1 <= found.simulations <= 3


def test_a_condition_that_never_fires_changes_nothing() -> None:
    state = State.from_text(POSITION)
    alone = MCTSAgent(seed=5, sims=60).act(state)
    with stop_when(lambda: False):
        inside = MCTSAgent(seed=5, sims=60).act(state)
    assert alone == inside
