"""The search core on small positions: wins, per-player backup, proofs, selection rules."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from agents.base import RandomAgent
from agents.baselines.mcts import MCTSAgent
from agents.network.search_rules import search_rules
from agents.search import (
    PUCT,
    UCT,
    UNPROVEN,
    Gumbel,
    Leaf,
    Node,
    RolloutEvaluator,
    Search,
    run_searches,
)
from agents.search.rules import RootPlan, uct_scores
from agents.search.tree import backup_proofs
from train.config import SearchConfig
from yinsh_env import Player, State, str_to_action

#: White wins in three consecutive decisions: C7-D7, xC3-C7, then a ring.
FORCED_WIN = "4/1m3rr/2MMMMRr/4m2r1/5mr3/3M5/2R2m4/6R2/8/7/4 w move - 2-0 42 0 3"
#: White's B5-D5 gives Black a row, which Black resolves before moving.
OPPONENT_ROW = "4/4R2/2mmMmm1/8r/4m2R2/2M1r4/2R7/6R2/r4r2/1R5/r3 w move - 0-0 44 0 3"


def node(player: int, n: int, prior: Sequence[float] | None = None, value: float = 0.0) -> Node:
    p = np.full(n, 1.0 / n) if prior is None else np.asarray(prior, dtype=float)
    return Node(player, np.arange(n, dtype=np.int64), np.log(p), value)


def white_favoured(leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
    """Uniform priors; every position is worth +0.5 to White (-0.5 to Black)."""
    logits = [np.zeros(len(leaf.actions)) for leaf in leaves]
    return logits, np.array([0.5 if leaf.player == Player.WHITE else -0.5 for leaf in leaves])


def rollout_search(text: str, sims: int, seed: int = 0) -> Search:
    evaluator = RolloutEvaluator(random.Random(seed))
    search = Search(
        State.from_text(text),
        UCT(),
        sims,
        np.random.default_rng(0),
        make_leaf=evaluator.leaf,
        solver=True,
    )
    run_searches([search], evaluator)
    return search


def test_solver_proves_the_forced_win_and_stops() -> None:
    search = rollout_search(FORCED_WIN, 5000)
    root = search.root
    assert root is not None and root.proven == Player.WHITE
    assert search.done_simulations < 5000  # stopped once proven
    assert search.best_action() == str_to_action("C7-D7")
    analysis = search.analysis()
    assert analysis.proven == Player.WHITE and analysis.pv[0] == str_to_action("C7-D7")
    state = State.from_text(FORCED_WIN)
    for action in analysis.pv[:3]:
        state.apply(action)
    assert state.winner == Player.WHITE  # the principal variation is the win


def test_proofs_climb_by_player_not_by_ply() -> None:
    # White to act at a and b (two White decisions in a row), Black at c.
    a, b, c = node(Player.WHITE, 2), node(Player.WHITE, 2), node(Player.BLACK, 1)
    won = Node(Player.WHITE, np.zeros(0, dtype=np.int64), np.zeros(0), 1.0, proven=Player.WHITE)
    a.children[0], b.children[1] = b, won
    backup_proofs([(a, 0), (b, 1)])
    assert b.proven == Player.WHITE and a.proven == Player.WHITE  # one winning child is enough
    lost = Node(Player.BLACK, np.zeros(0, dtype=np.int64), np.zeros(0), 1.0, proven=Player.BLACK)
    c2 = node(Player.WHITE, 2)
    c2.children[0] = lost
    backup_proofs([(c2, 0)])
    assert c2.proven == UNPROVEN  # one losing child proves nothing while another is open
    c2.children[1] = lost
    backup_proofs([(c2, 1)])
    assert c2.proven == Player.BLACK  # every child lost
    c.children[0] = c2
    backup_proofs([(c, 0)])
    assert c.proven == Player.BLACK


def test_uct_expands_in_order_then_maximises_ucb_and_skips_proven_losses() -> None:
    n = node(Player.WHITE, 3)
    rules = UCT(c=2.0)
    assert rules.select(n, 0.0) == 0
    n.visits[:] = [1.0, 1.0, 0.0]
    assert rules.select(n, 2.0) == 2  # the unexplored action first
    n.visits[:] = [4.0, 2.0, 2.0]
    n.value_sum[:] = [2.0, 1.0, -2.0]
    scores = uct_scores(n, 2.0, 8.0)
    expected = n.value_sum / n.visits + 2.0 * np.sqrt(np.log(8.0) / n.visits)
    assert np.allclose(scores, expected) and rules.select(n, 8.0) == 1
    n.child_proven = np.array([UNPROVEN, Player.BLACK, UNPROVEN], dtype=np.int8)
    assert rules.select(n, 8.0) == 0  # edge 1 is proven lost for White


def test_puct_follows_prior_then_value() -> None:
    rules = PUCT(c_puct=1.5, fpu_reduction=0.2)
    n = node(Player.WHITE, 3, prior=[0.2, 0.7, 0.1])
    assert rules.select(n, 0.0) == 1  # nothing visited: the prior decides
    n.visits[:] = [1.0, 10.0, 0.0]
    n.value_sum[:] = [0.9, -5.0, 0.0]
    assert rules.select(n, 11.0) == 0  # a good, little visited edge beats a bad favourite
    plan = rules.plan_root(n, np.random.default_rng(0), noise=True, simulations=8)
    assert plan.prior.sum() == pytest.approx(1.0) and not np.allclose(plan.prior, n.prior)


def test_puct_forced_playouts_visit_noised_moves_and_the_target_prunes_them() -> None:
    forcing = PUCT(c_puct=1.5, fpu_reduction=0.2, forced_playouts=2.0)
    root = node(Player.WHITE, 3, prior=[0.8, 0.15, 0.05])
    root.visits[:] = [30.0, 2.0, 0.0]
    root.value_sum[:] = [15.0, -1.8, 0.0]  # edge 1 looked bad
    noised, quiet = RootPlan(root.prior, noise=True), RootPlan(root.prior)
    assert PUCT(c_puct=1.5, fpu_reduction=0.2).select_root(root, noised, 32) == 0
    assert forcing.select_root(root, quiet, 32) == 0  # forced playouts only with noise
    # Both others lag behind sqrt(2 P N) visits: one of them is visited next.
    assert forcing.select_root(root, noised, 32) in (1, 2)
    # The target prunes the forced visits of the bad edge away entirely ...
    root.visits[:] = [30.0, 4.0, 0.0]
    root.value_sum[:] = [15.0, -3.6, 0.0]
    assert forcing.policy_target(root, noised).tolist() == [1.0, 0.0, 0.0]
    assert forcing.policy_target(root, quiet)[1] == pytest.approx(4 / 34)
    # ... and keeps most of those of an edge the search wanted anyway.
    root.visits[:] = [30.0, 10.0, 0.0]
    root.value_sum[:] = [15.0, 4.5, 0.0]
    target = forcing.policy_target(root, noised)
    assert target.sum() == pytest.approx(1.0) and 0.1 < target[1] < 10 / 40
    assert search_rules(SearchConfig(algorithm="puct", forced_playouts=2.0)) == forcing


def test_gumbel_root_halves_and_interior_follows_the_improved_policy() -> None:
    rules = Gumbel(considered=4)
    root = node(Player.WHITE, 6, prior=[0.3, 0.25, 0.2, 0.15, 0.05, 0.05])
    plan = rules.plan_root(root, np.random.default_rng(0), noise=False, simulations=8)
    assert plan.schedule == (0, 0, 0, 0, 1, 1, 2, 2)
    chosen = []
    for sim in range(4):
        i = rules.select_root(root, plan, sim)
        chosen.append(i)
        root.visits[i] += 1.0
    assert sorted(chosen) == [0, 1, 2, 3]  # without noise: the top four priors, once each
    root.value_sum[:4] = [-1.0, 1.0, -1.0, 0.5]
    later = rules.select_root(root, plan, 4)
    assert later == 1  # the best Q of the considered
    inner = node(Player.BLACK, 3, prior=[0.5, 0.3, 0.2])
    inner.visits[:] = [3.0, 0.0, 0.0]
    inner.value_sum[:] = [-3.0, 0.0, 0.0]
    # The first edge loses for Black: the improved policy moves away from it.
    assert rules.select(inner, 3.0) != 0
    assert rules.improved_policy(inner).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("rules", [UCT(), PUCT(), Gumbel(considered=64)], ids=type)
def test_every_rule_backs_up_per_player_through_multi_decision_turns(rules: object) -> None:
    state = State.from_text(OPPONENT_ROW)
    assert isinstance(rules, UCT | PUCT | Gumbel)
    search = Search(state, rules, 300, np.random.default_rng(0))
    run_searches([search], white_favoured)
    assert search.root is not None
    stack, same_player, handover = [search.root], 0, 0
    while stack:
        parent = stack.pop()
        for i, child in enumerate(parent.children):
            if child is None:
                continue
            q = parent.value_sum[i] / parent.visits[i]
            assert q >= 0.5 - 1e-9 if parent.player == Player.WHITE else q <= -0.5 + 1e-9
            same_player += parent.player == child.player and not child.terminal
            handover += parent.player == Player.WHITE and child.player == Player.BLACK
            stack.append(child)
    assert same_player and handover


def test_agents_analyse_through_one_hook() -> None:
    state = State.from_text(OPPONENT_ROW)
    mcts = MCTSAgent(seed=0, sims=120)
    analysis = mcts.analyse(state)
    assert analysis.player == Player.WHITE and analysis.simulations == 120
    assert [line.action for line in analysis.lines] == state.legal_actions()
    assert sum(line.visits for line in analysis.lines) == 120
    assert analysis.value is not None and -1.0 <= analysis.value <= 1.0
    assert analysis.action in state.legal_actions() and analysis.pv[0] == analysis.action
    assert MCTSAgent(seed=0, sims=120).act(state) == analysis.action  # the move it plays
    data = analysis.to_json()
    assert data["player"] == "W" and len(data["lines"]) == len(state.legal_actions())
    plain = RandomAgent(seed=0).analyse(state)
    assert plain.action in state.legal_actions() and plain.value is None and not plain.lines


def test_the_evaluation_alone_values_a_leaf_without_a_rollout() -> None:
    from agents.search.rollout import eval_odds

    state = State.from_text(OPPONENT_ROW)
    rng = random.Random(3)
    before = rng.getstate()
    heuristic = RolloutEvaluator(rng, rollout_limit=10, eval_weight=1.0)
    assert heuristic.white_result(state.copy()) == eval_odds(state)
    assert rng.getstate() == before  # no random decision was played
    mixed = RolloutEvaluator(rng, rollout_limit=10, eval_weight=0.5)
    mixed.white_result(state.copy())
    assert rng.getstate() != before  # the default mixes in a rollout
