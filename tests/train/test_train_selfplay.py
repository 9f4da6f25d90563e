"""Batched self-play: independent games, playout caps, resignation, recorded targets."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from agents.search import Leaf
from train.config import SearchConfig, SelfPlayConfig
from train.replay import unpack_planes
from train.selfplay import play_games, temperature_at
from yinsh_env import N_ACTIONS, State, env
from yinsh_env.envs.observation import decode

SEARCH = SearchConfig(simulations=6, gumbel_considered=4)
SELFPLAY = SelfPlayConfig(
    games_in_flight=4, fast_simulations=2, full_search_prob=0.5, resign_threshold=-1.0
)


def hashed(leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
    """Deterministic per-position logits and values (no dependence on the batch)."""
    logits, values = [], []
    for leaf in leaves:
        rng = np.random.default_rng(int(leaf.planes.sum() * 1000) + len(leaf.actions))
        logits.append(rng.normal(size=len(leaf.actions)))
        values.append(rng.uniform(-0.5, 0.5))
    return logits, np.array(values)


def black_wins(leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
    """Every position looks lost for White (and won for Black)."""
    logits = [np.zeros(len(leaf.actions)) for leaf in leaves]
    return logits, np.array([-0.99 if leaf.player == 0 else 0.99 for leaf in leaves])


def test_temperature_schedule() -> None:
    schedule = [(0, 1.0), (10, 0.5), (30, 0.0)]
    assert [temperature_at(schedule, p) for p in (0, 9, 10, 29, 30, 99)] == [
        1.0,
        1.0,
        0.5,
        0.5,
        0.0,
        0.0,
    ]


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_games_do_not_depend_on_their_batch_mates(algorithm: str) -> None:
    search = dataclasses.replace(SEARCH, algorithm=algorithm)
    seeds = [11, 12, 13]
    together = play_games(hashed, seeds, search, SELFPLAY)
    alone = play_games(hashed, seeds, search, dataclasses.replace(SELFPLAY, games_in_flight=1))
    assert [s.index for s in together.stats] == [0, 1, 2]
    assert [s.actions for s in together.stats] == [s.actions for s in alone.stats]
    for stats in together.stats:
        final = State().apply_all(stats.actions)
        assert final.is_terminal and stats.result == final.result
        assert stats.plies == final.ply
    other = play_games(hashed, [14], search, SELFPLAY)
    assert other.stats[0].actions != together.stats[0].actions


def test_recorded_positions_and_targets() -> None:
    result = play_games(hashed, [5], SEARCH, dataclasses.replace(SELFPLAY, full_search_prob=1.0))
    game, stats = result.games[0], result.stats[0]
    assert stats.fast_searches == 0 and stats.full_searches > 0
    # Every decision is recorded: searched ones and forced ones.
    assert len(game) == stats.plies
    planes = unpack_planes(game.bits, game.plane_values)
    replay = State()
    movers: list[int] = []
    for i, action in enumerate(stats.actions):
        assert decode(planes[i]) == replay
        lo, hi = game.policy_offsets[i], game.policy_offsets[i + 1]
        assert game.policy_actions[lo:hi].tolist() == replay.legal_actions()
        assert game.policy_probs[lo:hi].sum() == pytest.approx(1.0, abs=1e-5)
        assert game.players[i] == replay.to_act
        # The search's value where a search ran; none for a forced move.
        searched = game.search_values[i]
        assert np.isnan(searched) == (hi - lo == 1)
        assert np.isnan(searched) or -1.0 <= searched <= 1.0
        movers.append(replay.to_act)
        replay.apply(action)
    assert game.returns.tolist() == list(replay.returns())
    # The opponent's next action after each position (-1 once the game is over).
    for i, me in enumerate(movers):
        later = [a for a, p in zip(stats.actions[i:], movers[i:]) if p != me]
        assert game.opponent_actions[i] == (later[0] if later else -1)
    assert game.opponent_actions[-1] == -1 and (game.opponent_actions >= 0).sum() > len(game) // 2


def test_forced_playouts_give_pruned_targets_that_are_distributions() -> None:
    """PUCT self-play with KataGo's forced playouts: each (pruned) target sums to one
    (pruning itself: tests/agents/search/test_search.py); the games differ from those without."""
    search = SearchConfig(algorithm="puct", simulations=24, forced_playouts=2.0)
    selfplay = dataclasses.replace(SELFPLAY, full_search_prob=1.0)
    game = play_games(hashed, [5], search, selfplay).games[0]
    plain = play_games(hashed, [5], dataclasses.replace(search, forced_playouts=0.0), selfplay)
    for g in (game, plain.games[0]):
        sums = np.add.reduceat(g.policy_probs, g.policy_offsets[:-1])
        assert np.allclose(sums, 1.0, atol=1e-5) and (g.policy_probs >= 0).all()
    assert not np.array_equal(game.policy_probs, plain.games[0].policy_probs)


@pytest.mark.parametrize("rings_to_win", [3, 1])
def test_recorded_inputs_masks_and_result_are_the_envs(rings_to_win: int) -> None:
    """Replayed through a fresh ``env()``: every recorded input and mask byte for byte."""
    config = dataclasses.replace(SELFPLAY, full_search_prob=1.0, rings_to_win=rings_to_win)
    result = play_games(hashed, [8], SEARCH, config)
    game, stats = result.games[0], result.stats[0]
    planes = unpack_planes(game.bits, game.plane_values)
    e = env(rings_to_win=rings_to_win)
    e.reset()
    rewards = {agent: 0.0 for agent in e.possible_agents}
    recorded = 0
    for agent in e.agent_iter():
        observation, reward, termination, truncation, _ = e.last()
        rewards[agent] += reward
        if termination or truncation:
            e.step(None)
            continue
        assert observation is not None
        lo, hi = game.policy_offsets[recorded], game.policy_offsets[recorded + 1]
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        mask[game.policy_actions[lo:hi]] = 1
        assert planes[recorded].tobytes() == observation["observation"].tobytes()
        assert mask.tobytes() == observation["action_mask"].tobytes()
        e.step(stats.actions[recorded])
        recorded += 1
    assert recorded == len(game) == stats.plies
    assert game.returns.tolist() == [rewards["player_0"], rewards["player_1"]]
    assert game.rings_to_win == rings_to_win and game.finished


def test_playout_cap_records_only_full_searches() -> None:
    config = dataclasses.replace(SELFPLAY, full_search_prob=0.0, record_forced=False)
    result = play_games(hashed, [5], SEARCH, config)
    assert len(result.games[0]) == 0 and result.stats[0].full_searches == 0
    assert result.stats[0].simulations == SELFPLAY.fast_simulations * result.stats[0].fast_searches


def test_resignation_and_its_check_games() -> None:
    resigning = dataclasses.replace(
        SELFPLAY, resign_threshold=-0.9, resign_moves=2, resign_disabled_fraction=0.0
    )
    result = play_games(black_wins, [1, 2], SEARCH, resigning)
    for game, stats in zip(result.games, result.stats):
        assert stats.end_reason == "resign" and stats.result == "B"
        assert game.returns.tolist() == [-1.0, 1.0] and not game.finished
    never = dataclasses.replace(resigning, resign_disabled_fraction=1.0)
    result = play_games(black_wins, [1], SEARCH, never)
    stats = result.stats[0]
    assert stats.resign_disabled and stats.would_resign and stats.end_reason != "resign"
    assert stats.false_resign == (stats.result != "B")


@pytest.mark.slow
def test_worker_processes_play_the_same_games_as_one_process() -> None:
    import torch

    from agents.network.network import PolicyValueNet
    from train.config import Config, NetworkConfig
    from train.selfplay_workers import InProcessExecutor, ProcessExecutor, split

    assert split([1, 2, 3, 4, 5], 2) == [(0, [1, 2, 3]), (3, [4, 5])]
    config = Config(
        backend="process",
        workers=2,
        network=NetworkConfig(blocks=1, channels=8, value_hidden=8),
        search=SEARCH,
        selfplay=SELFPLAY,
    )
    torch.manual_seed(0)
    weights = PolicyValueNet(config.network).state_dict()
    seeds = [21, 22, 23]
    local = InProcessExecutor(config).play(weights, seeds, first_index=6)
    pool = ProcessExecutor(config)
    try:
        remote = pool.play(weights, seeds, first_index=6)
    finally:
        pool.close()
    assert [s.index for s in remote.stats] == [6, 7, 8]
    assert [s.actions for s in remote.stats] == [s.actions for s in local.stats]
    assert remote.network_positions == local.network_positions
    # Workers report their own CPU time; the trainer's process counts its own.
    assert remote.cpu_seconds > 0 and local.cpu_seconds == 0
