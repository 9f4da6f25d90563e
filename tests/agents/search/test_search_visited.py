"""Gumbel's selections over the visited edges choose what the full formulas choose."""

from __future__ import annotations

import numpy as np
import pytest

from agents.search import Gumbel, Node
from agents.search.tree import log_softmax
from agents.search.visited import root_edge


def random_node(rng: np.random.Generator, uniform: bool = False) -> Node:
    """A node with 1-60 edges, float32 logits (as a network gives), some edges visited."""
    n = int(rng.integers(1, 61))
    raw = np.zeros(n) if uniform else rng.normal(0.0, 2.0, n).astype(np.float32)
    node = Node(int(rng.integers(2)), np.arange(n, dtype=np.int64), log_softmax(raw), 0.0)
    node.value = float(rng.uniform(-1, 1))
    share = rng.choice([0.0, 0.1, 0.5, 1.0])
    visited = rng.random(n) < share
    node.visits[:] = np.where(visited, rng.integers(1, 30, n), 0).astype(float)
    node.value_sum[:] = node.visits * rng.uniform(-1, 1, n)
    return node


RULES = [
    Gumbel(),
    Gumbel(rescale_q=True),
    Gumbel(c_visit=10.0, c_scale=0.1),
    Gumbel(c_visit=400.0, c_scale=2.0, rescale_q=True),
]


@pytest.mark.parametrize("rules", RULES, ids=repr)
def test_the_interior_rule_picks_the_argmax_of_the_improved_policy_formula(rules: Gumbel) -> None:
    rng = np.random.default_rng(0)
    for trial in range(600):
        node = random_node(rng, uniform=trial % 5 == 0)
        policy = rules.improved_policy(node)
        expected = int(np.argmax(policy - node.visits / (1.0 + node.total_visits)))
        assert rules.select(node, 1.0 + node.total_visits) == expected, trial


@pytest.mark.parametrize("rules", RULES, ids=repr)
@pytest.mark.parametrize("noise", [False, True])
def test_the_root_rule_picks_the_argmax_of_the_root_scores(rules: Gumbel, noise: bool) -> None:
    rng = np.random.default_rng(1)
    for trial in range(300):
        root = random_node(rng, uniform=trial % 5 == 0)
        plan = rules.plan_root(root, rng, noise, simulations=64)
        levels = {0.0, *root.visits.tolist()}
        for level in sorted(levels):
            expected = int(np.argmax(rules.root_scores(root, plan.gumbel, level)))
            assert root_edge(root, plan.gumbel, plan.order, level, rules) == expected, trial
