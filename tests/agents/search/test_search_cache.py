"""The evaluation cache: each remembered position evaluated once, bounded, the same answers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from helpers import random_game

from agents import make_agent
from agents.network.agent import NetAgent
from agents.network.search_rules import search_rules
from agents.search import Leaf, Search, network_leaf, run_searches
from agents.search.cache import EvaluationCache
from train.config import SearchConfig
from yinsh_env import Phase, State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


class CountingEvaluator:
    """Logits and a value that depend on the leaf's planes alone; counts the leaves it sees."""

    def __init__(self) -> None:
        self.leaves = 0

    def __call__(self, leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
        self.leaves += len(leaves)
        logits, values = [], []
        for leaf in leaves:
            assert leaf.planes is not None
            seed = int(np.abs(leaf.planes).sum() * 1000) % (2**32)
            rng = np.random.default_rng(seed)
            logits.append(rng.standard_normal(len(leaf.actions)))
            values.append(float(rng.uniform(-1, 1)))
        return logits, np.array(values)


def positions(count: int) -> list[State]:
    found: list[State] = []
    for seed in range(200):
        state = random_game(seed, stop=25)
        if state.phase == Phase.MOVE and len(state.legal_actions()) > 4:
            found.append(state)
            if len(found) == count:
                return found
    raise AssertionError("not enough ring-move positions")


def test_a_remembered_position_is_answered_without_the_evaluator() -> None:
    inner = CountingEvaluator()
    cache = EvaluationCache(inner)
    leaves = [network_leaf(s) for s in positions(3)]
    first_logits, first_values = cache(leaves)
    assert inner.leaves == 3 and cache.misses == 3 and cache.hits == 0
    again = [network_leaf(s) for s in positions(3)]  # new leaves, the same positions
    logits, values = cache([again[2], again[0]])
    assert inner.leaves == 3 and cache.hits == 2
    np.testing.assert_array_equal(logits[0], first_logits[2])
    np.testing.assert_array_equal(logits[1], first_logits[0])
    np.testing.assert_array_equal(values, first_values[[2, 0]])


def test_a_leaf_without_a_key_is_always_evaluated() -> None:
    inner = CountingEvaluator()
    cache = EvaluationCache(inner)
    state = positions(1)[0]
    leaf = network_leaf(state)
    leaf.key = None
    cache([leaf])
    cache([leaf])
    assert inner.leaves == 2 and cache.hits == 0 and len(cache) == 0


def test_the_cache_keeps_its_capacity_and_forgets_the_least_recently_used() -> None:
    inner = CountingEvaluator()
    cache = EvaluationCache(inner, capacity=2)
    a, b, c = (network_leaf(s) for s in positions(3))
    cache([a])
    cache([b])
    cache([a])  # a is now the most recently used
    cache([c])  # evicts b
    assert len(cache) == 2 and inner.leaves == 3
    cache([a])
    assert inner.leaves == 3
    cache([b])
    assert inner.leaves == 4
    cache.clear()
    assert len(cache) == 0


@pytest.mark.parametrize("capacity", [0, -3])
def test_a_capacity_below_one_is_refused(capacity: int) -> None:
    with pytest.raises(ValueError, match="capacity"):
        EvaluationCache(CountingEvaluator(), capacity=capacity)


def test_a_capacity_that_is_not_an_int_is_refused() -> None:
    with pytest.raises(TypeError, match="capacity"):
        EvaluationCache(CountingEvaluator(), capacity=2.5)  # type: ignore[arg-type]


def searched(state: State, evaluate: CountingEvaluator | EvaluationCache) -> Search:
    rules = search_rules(SearchConfig(algorithm="gumbel", simulations=64))
    search = Search(state.copy(), rules, 64, np.random.default_rng(0))
    run_searches([search], evaluate)
    return search


def test_a_search_through_the_cache_is_the_search_without_it_and_the_next_one_reuses_it() -> None:
    state = positions(1)[0]
    plain, cache = CountingEvaluator(), EvaluationCache(CountingEvaluator())
    first, cached = searched(state, plain), searched(state, cache)
    np.testing.assert_array_equal(first.root.visits, cached.root.visits)  # type: ignore[union-attr]
    assert first.best_action() == cached.best_action()
    # On the reply the first search explored most, the positions it reached come
    # from the cache.
    root = first.root
    assert root is not None
    child = root.children[root.child_index(first.best_action())]
    assert child is not None and child.visits.sum() > 0
    state.apply(first.best_action())
    state.apply(int(child.actions[int(np.argmax(child.visits))]))
    hits = cache.hits
    again = searched(state, cache)
    assert cache.hits > hits
    assert again.best_action() == searched(state, CountingEvaluator()).best_action()


def test_the_network_agent_plays_the_same_moves_through_its_cache(tiny_run_dir: Path) -> None:
    state = positions(1)[0]
    agent = make_agent(f"net:path={tiny_run_dir},sims=32", seed=0)
    assert isinstance(agent, NetAgent)
    replies = []
    for _ in range(3):
        replies.append(agent.act(state.copy()))
        state.apply(replies[-1])
        if state.is_terminal:
            break
    assert agent.cache.hits > 0 and agent.cache.misses > 0
    plain = make_agent(f"net:path={tiny_run_dir},sims=32", seed=0)
    assert isinstance(plain, NetAgent)
    plain.cache = EvaluationCache(plain.evaluator, capacity=1)  # next to nothing remembered
    replay = positions(1)[0]
    for action in replies:
        assert plain.act(replay.copy()) == action
        replay.apply(action)
