"""The trainer's configuration of the search core: forced wins, per-player backup, Gumbel, reuse."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
import torch

from agents.network.inference import NetworkEvaluator
from agents.network.network import PolicyValueNet
from agents.network.search_rules import network_search, search_rules
from agents.search import (
    Gumbel,
    Leaf,
    Node,
    advance,
    backup,
    considered_visits,
    dirichlet_prior,
    run_searches,
)
from train.config import NetworkConfig, SearchConfig
from yinsh_env import Phase, Player, State, str_to_action

#: White has removed two rings; only C7-D7 completes the row C3-C7, and
#: White then removes it (xC3-C7) and a ring (the third): a win in three
#: consecutive White decisions.  Every other move of the 40 does not win.
FORCED_WIN = "4/1m3rr/2MMMMRr/4m2r1/5mr3/3M5/2R2m4/6R2/8/7/4 w move - 2-0 42 0 3"
#: White's ring B5 may jump the white marker C5, turning it black and giving
#: Black the row C3-C7: Black then resolves it (row, ring) before moving.
OPPONENT_ROW = "4/4R2/2mmMmm1/8r/4m2R2/2M1r4/2R7/6R2/r4r2/1R5/r3 w move - 0-0 44 0 3"


def white_favoured(leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
    """Uniform priors; every position is worth +0.5 to White (-0.5 to Black)."""
    logits = [np.zeros(len(leaf.actions)) for leaf in leaves]
    values = np.array([0.5 if leaf.player == Player.WHITE else -0.5 for leaf in leaves])
    return logits, values


def tiny_evaluator(seed: int = 0) -> NetworkEvaluator:
    torch.manual_seed(seed)
    net = PolicyValueNet(NetworkConfig(blocks=1, channels=8, value_hidden=8))
    return NetworkEvaluator(net, torch.device("cpu"))


def walk(node: Node) -> list[tuple[Node, int, Node]]:
    """Every (parent, edge index, child) of the tree."""
    out = []
    for i, child in enumerate(node.children):
        if child is not None:
            out.append((node, i, child))
            out += walk(child)
    return out


def test_opponent_row_position_is_what_the_tests_assume() -> None:
    state = State.from_text(OPPONENT_ROW)
    state.push("B5-D5")
    assert state.phase == Phase.ROW and state.to_act == Player.BLACK and state.mover == Player.WHITE


def uninformed(leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
    """Uniform priors and zero values: only finished games tell the search anything."""
    return [np.zeros(len(leaf.actions)) for leaf in leaves], np.zeros(len(leaves))


@pytest.mark.parametrize(("algorithm", "simulations"), [("puct", 400), ("gumbel", 800)])
def test_search_finds_the_forced_win(algorithm: str, simulations: int) -> None:
    """Three White decisions deep, through the game's result alone.

    Gumbel gets enough simulations for three visits per root action in its
    first halving phase (the win is the third decision below the root).
    """
    state = State.from_text(FORCED_WIN)
    text = state.to_text()
    config = SearchConfig(algorithm=algorithm, gumbel_considered=64)
    for seed in range(2):
        noise = algorithm == "puct"  # Dirichlet noise; Gumbel plays as the agent does
        search = network_search(
            state, config, simulations, np.random.default_rng(seed), noise=noise
        )
        run_searches([search], uninformed)
        root = search.root
        assert root is not None
        chosen = int(root.actions[search.choose(temperature=0.0)])
        assert chosen == str_to_action("C7-D7")
        win = root.child_index(str_to_action("C7-D7"))
        assert root.value_sum[win] / root.visits[win] > 0.5
    assert state.to_text() == text  # the search leaves the position as it was


def test_search_with_a_network_evaluator_plays_legal_moves() -> None:
    state = State.from_text(OPPONENT_ROW)
    for algorithm in ("puct", "gumbel"):
        search = network_search(
            state, SearchConfig(algorithm=algorithm), 24, np.random.default_rng(0)
        )
        run_searches([search], tiny_evaluator())
        assert search.root is not None and search.done_simulations == 24
        assert int(search.root.actions[search.choose(0.0)]) in state.legal_actions()


@pytest.mark.parametrize("position", [FORCED_WIN, OPPONENT_ROW])
@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_values_are_backed_up_per_player(position: str, algorithm: str) -> None:
    """Every edge holds the values seen by the player who chose it.

    The evaluator values every position +0.5 for White, so any edge chosen by
    White averages at least +0.5 and any edge chosen by Black at most -0.5,
    however many decisions in a row one side makes.  Flipping the sign at
    every ply would break this on White's row and ring removals.
    """
    state = State.from_text(position)
    config = SearchConfig(algorithm=algorithm, gumbel_considered=64)
    search = network_search(state, config, 300, np.random.default_rng(0))
    run_searches([search], white_favoured)
    assert search.root is not None
    edges = walk(search.root)
    same_player = [(p, i, c) for p, i, c in edges if p.player == c.player and not c.terminal]
    handover = [(p, i, c) for p, i, c in edges if p.player != c.player and c.player == Player.BLACK]
    assert same_player and handover, "the tree must hold both kinds of consecutive decisions"
    if position == OPPONENT_ROW:
        # White's B5-D5 hands the resolution to Black: a Black node under a White one.
        b5 = search.root.children[search.root.child_index(str_to_action("B5-D5"))]
        assert b5 is not None and b5.player == Player.BLACK
    for parent, i, child in edges:
        q = parent.value_sum[i] / parent.visits[i]
        if parent.player == Player.WHITE:
            assert q >= 0.5 - 1e-9
        else:
            assert q <= -0.5 + 1e-9
        # Visits and values add up: the edge holds the child's own evaluation
        # and everything backed up through it, in the parent's player's view.
        if child.terminal:
            expected = parent.visits[i] * child.value
        else:
            assert parent.visits[i] == 1 + child.visits.sum()
            expected = child.value + child.value_sum.sum()
        sign = 1.0 if parent.player == child.player else -1.0
        assert parent.value_sum[i] == pytest.approx(sign * expected)


def test_backup_uses_each_nodes_player_not_the_ply_parity() -> None:
    def node(player: int) -> Node:
        return Node(player, np.array([0, 1]), np.log(np.array([0.5, 0.5])), 0.0)

    white_move, white_row, white_ring, black = (
        node(Player.WHITE),
        node(Player.WHITE),
        node(Player.WHITE),
        node(Player.BLACK),
    )
    backup([(white_move, 0), (white_row, 1), (white_ring, 0), (black, 1)], 1.0)
    assert white_move.value_sum[0] == white_row.value_sum[1] == white_ring.value_sum[0] == 1.0
    assert black.value_sum[1] == -1.0
    assert [n.visits.sum() for n in (white_move, white_row, white_ring, black)] == [1, 1, 1, 1]


def test_sequential_halving_schedule() -> None:
    # Four actions, eight simulations: one visit each, then the best two twice more.
    assert considered_visits(4, 8) == (0, 0, 0, 0, 1, 1, 2, 2)
    assert considered_visits(2, 4) == (0, 0, 1, 1)
    assert considered_visits(1, 3) == (0, 1, 2)
    schedule = considered_visits(16, 64)
    assert len(schedule) == 64 and schedule[:16] == (0,) * 16


def test_gumbel_root_spreads_visits_by_sequential_halving() -> None:
    state = State.from_text(FORCED_WIN)
    config = SearchConfig(algorithm="gumbel", gumbel_considered=8)
    search = network_search(state, config, 32, np.random.default_rng(1), noise=True)
    run_searches([search], tiny_evaluator())
    root = search.root
    assert root is not None
    visited = root.visits[root.visits > 0]
    assert len(visited) == 8 and visited.sum() == 32
    policy = search.policy_target()
    assert policy.shape == root.actions.shape and policy.sum() == pytest.approx(1.0)
    rules = search_rules(config)
    assert isinstance(rules, Gumbel)
    assert np.allclose(policy, rules.improved_policy(root))


def test_dirichlet_noise_stays_on_legal_actions() -> None:
    prior = np.array([0.7, 0.2, 0.1])
    noisy = dirichlet_prior(prior, np.random.default_rng(0), alpha=0.3, fraction=0.25)
    assert noisy.shape == prior.shape and noisy.sum() == pytest.approx(1.0)
    assert not np.allclose(noisy, prior)
    single = np.array([1.0])
    assert dirichlet_prior(single, np.random.default_rng(0), 0.3, 0.25) is single


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_tree_reuse_keeps_the_chosen_subtree(algorithm: str) -> None:
    state = State.from_text(OPPONENT_ROW)
    config = SearchConfig(algorithm=algorithm)
    search = network_search(state, config, 64, np.random.default_rng(0))
    run_searches([search], white_favoured)
    root = search.root
    assert root is not None
    index = int(np.argmax(root.visits))
    action = int(root.actions[index])
    child = root.children[index]
    kept = advance(root, action)
    assert kept is child and kept is not None
    before = kept.visits.sum()
    state.apply(action)
    nxt = network_search(state, config, 16, np.random.default_rng(0), root=kept)
    if algorithm == "gumbel":
        assert kept.visits.sum() == 0  # sequential halving restarts the root's tallies
    run_searches([nxt], white_favoured)
    assert nxt.root is kept
    expected = 16 if algorithm == "gumbel" else before + 16
    assert kept.visits.sum() == expected
    unvisited = int(np.flatnonzero(root.visits == 0)[0]) if (root.visits == 0).any() else None
    if unvisited is not None:
        assert advance(root, int(root.actions[unvisited])) is None


def test_searching_a_finished_game_is_an_error() -> None:
    state = State.from_text(FORCED_WIN)
    state.apply_all(["C7-D7", "xC3-C7", "xD7"])
    assert state.is_terminal
    with pytest.raises(ValueError, match="finished game"):
        network_search(state, SearchConfig(), 8, np.random.default_rng(0)).next_leaf()
