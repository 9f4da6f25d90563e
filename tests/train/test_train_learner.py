"""The network's heads and the learner: masking, the policy layout, losses that fall."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import game_of
from helpers import random_positions as positions

from agents.network.network import PolicyValueNet, policy_gather
from train.config import Config, NetworkConfig, OptimConfig
from train.learner import Learner, lr_factor, value_targets
from train.replay import make_batch
from yinsh_env import N_ACTIONS, State
from yinsh_env.envs.observation import encode

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def tiny_net() -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet(NetworkConfig(blocks=1, channels=8, value_hidden=8))


def test_every_action_reads_its_own_policy_cells() -> None:
    primary, secondary = policy_gather()
    pairs = set(zip(primary.tolist(), secondary.tolist()))
    assert len(pairs) == N_ACTIONS - 1  # all but pass, which has its own unit


def test_outputs_and_masking() -> None:
    net = tiny_net().eval()
    states = positions(5)
    planes = torch.from_numpy(np.stack([encode(s) for s in states]))
    mask = torch.from_numpy(np.stack([s.legal_mask() for s in states]).astype(bool))
    with torch.no_grad():
        out = net(planes, mask)
    assert out.policy.shape == (5, N_ACTIONS) and out.value.shape == (5,)
    assert out.margin.shape == (5,) and out.ownership.shape == (5, 11, 11)
    assert torch.isinf(out.policy[~mask]).all() and torch.isfinite(out.policy[mask]).all()
    assert (out.value.abs() <= 1).all()
    probs = torch.softmax(out.policy, dim=1)
    assert torch.allclose(probs.sum(1), torch.ones(5))


def test_lr_schedule() -> None:
    config = OptimConfig(lr=1.0, warmup_steps=10, final_lr_fraction=0.1)
    assert lr_factor(0, config, 110) == pytest.approx(0.1)
    assert lr_factor(9, config, 110) == pytest.approx(1.0)
    assert lr_factor(60, config, 110) == pytest.approx(0.55)
    assert lr_factor(110, config, 110) == pytest.approx(0.1)
    constant = OptimConfig(lr_schedule="constant", warmup_steps=0)
    assert lr_factor(50, constant, 100) == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("amp", [False, True])
def test_learner_fits_a_batch(amp: bool) -> None:
    states = positions(24, seed=3)
    game = game_of(states)
    batch = make_batch([(game, i) for i in range(len(states))], np.zeros(len(states), np.int64))
    config = OptimConfig(lr=3e-3, warmup_steps=0, lr_schedule="constant", ownership_weight=0.5)
    learner = Learner(tiny_net(), config, 100, torch.device("cpu"), amp=amp)
    first = learner.train_step(batch)
    for _ in range(40):
        last = learner.train_step(batch)
    assert learner.step == 41
    assert last["loss/total"] < 0.8 * first["loss/total"]
    assert last["loss/value"] < first["loss/value"]
    assert np.isfinite([v for v in last.values()]).all()


def test_learner_state_round_trip() -> None:
    states = positions(8, seed=4)
    game = game_of(states)
    batch = make_batch([(game, i) for i in range(len(states))], np.zeros(len(states), np.int64))
    a = Learner(tiny_net(), OptimConfig(), 50, torch.device("cpu"))
    a.train_step(batch)
    b = Learner(tiny_net(), OptimConfig(), 50, torch.device("cpu"))
    b.model.load_state_dict(a.model.state_dict())
    b.load_state_dict(a.state_dict())
    assert b.step == 1
    ma, mb = a.train_step(batch), b.train_step(batch)
    assert ma == mb
    assert State()  # the engine is untouched by training


def test_a_restored_learner_takes_the_new_configs_learning_rate_and_weight_decay() -> None:
    """A resume with ``optim.lr=...`` must change the rate (torch restores the saved one)."""
    states = positions(8, seed=4)
    game = game_of(states)
    batch = make_batch([(game, i) for i in range(len(states))], np.zeros(len(states), np.int64))
    old = OptimConfig(lr=1e-3, warmup_steps=2, weight_decay=1e-4)
    a = Learner(tiny_net(), old, 50, torch.device("cpu"))
    for _ in range(5):
        a.train_step(batch)
    new = OptimConfig(lr=5e-4, warmup_steps=2, weight_decay=1e-3)
    b = Learner(tiny_net(), new, 50, torch.device("cpu"))
    b.load_state_dict(a.state_dict())
    assert b.step == 5
    assert b.optimizer.param_groups[0]["lr"] == pytest.approx(5e-4 * lr_factor(5, new, 50))
    assert b.train_step(batch)["optim/lr"] == pytest.approx(5e-4 * lr_factor(5, new, 50))
    assert b.lr == pytest.approx(5e-4 * lr_factor(6, new, 50))  # the schedule goes on
    assert [g["weight_decay"] for g in b.optimizer.param_groups] == [1e-3, 0.0]
    # The same config restores the same rate as the run that saved it.
    c = Learner(tiny_net(), old, 50, torch.device("cpu"))
    c.load_state_dict(a.state_dict())
    assert c.lr == a.lr


def test_elo_ladder_across_checkpoints() -> None:
    from train.evaluate import ladder, new_history

    history = new_history()
    history["evaluated"] = [0, 5, 10]
    history["pairings"] = [
        {"a": "iter_000000", "b": "random", "points": 10.0, "games": 20},
        {"a": "iter_000005", "b": "random", "points": 15.0, "games": 20},
        {"a": "iter_000005", "b": "iter_000000", "points": 14.0, "games": 20},
        {"a": "iter_000010", "b": "random", "points": 19.0, "games": 20},
        {"a": "iter_000010", "b": "iter_000005", "points": 15.0, "games": 20},
        {"a": "iter_000010", "b": "greedy", "points": 2.0, "games": 20},
    ]
    elo = ladder(history, ["random", "greedy"])
    assert elo["random"] == 0.0
    assert elo["iter_000000"] < elo["iter_000005"] < elo["iter_000010"]
    assert elo["greedy"] > elo["iter_000010"]
    assert ladder(new_history(), ["random"]) == {}


def test_value_targets_mix_the_search_value_with_the_result_where_a_search_ran() -> None:
    states = positions(6, seed=4)
    game = game_of(states)
    game.search_values = np.array([0.5, np.nan, -0.5, 0.0, 1.0, np.nan], dtype=np.float32)
    me = game.players
    batch = make_batch([(game, i) for i in range(6)], np.zeros(6, np.int64))
    assert np.array_equal(value_targets(batch, 0.0), batch.value)
    result = game.returns[me]
    expected = np.where(
        np.isnan(game.search_values), result, 0.75 * result + 0.25 * game.search_values
    )
    assert np.allclose(value_targets(batch, 0.25), expected)
    assert np.allclose(value_targets(batch, 1.0)[[0, 2]], [0.5, -0.5])
    # Games recorded before search values were kept train on the result alone.
    game.search_values = None
    old = make_batch([(game, i) for i in range(6)], np.zeros(6, np.int64))
    assert np.array_equal(value_targets(old, 1.0), old.value)


@pytest.mark.slow
def test_the_opponent_policy_head_learns_the_opponents_next_action() -> None:
    states = positions(16, seed=5)
    game = game_of(states)
    game.opponent_actions = np.array([s.legal_actions()[0] for s in states], dtype=np.int16)
    game.opponent_actions[::4] = -1  # the game ended before the opponent moved again
    batch = make_batch([(game, i) for i in range(16)], np.zeros(16, np.int64))
    torch.manual_seed(0)
    net = PolicyValueNet(NetworkConfig(blocks=1, channels=8, value_hidden=8, opponent_policy=True))
    config = OptimConfig(
        lr=3e-3, warmup_steps=0, lr_schedule="constant", opponent_policy_weight=1.0
    )
    learner = Learner(net, config, 100, torch.device("cpu"))
    first = learner.train_step(batch)
    for _ in range(30):
        last = learner.train_step(batch)
    assert last["loss/opponent_policy"] < 0.7 * first["loss/opponent_policy"]
    # Without the head there is no such loss, and the config refuses a weight for it.
    assert "loss/opponent_policy" not in Learner(
        tiny_net(), config, 1, torch.device("cpu")
    ).train_step(batch)
    with pytest.raises(ValueError, match=r"network\.opponent_policy"):
        Config(optim=OptimConfig(opponent_policy_weight=0.5))


def test_the_ladder_holds_the_baselines_that_are_anchors_at_their_frozen_ratings() -> None:
    from agents.evaluation.scale import default_scale
    from train.evaluate import ladder, ladder_scale, new_history

    scale = default_scale()
    frozen = {a.spec: a.elo for a in scale.anchors}
    history = new_history()
    history["evaluated"] = [0]
    history["pairings"] = [
        {"a": "iter_000000", "b": "random", "points": 15.0, "games": 20},
        {"a": "iter_000000", "b": "greedy", "points": 5.0, "games": 20},
    ]
    elo = ladder(history, ["random", "greedy"], scale)
    assert elo["random"] == 0.0 and elo["greedy"] == frozen["greedy"]
    assert 0.0 < elo["iter_000000"] < frozen["greedy"]
    assert ladder_scale(["random", "greedy"], scale) == "yinsh-v1"
    # No anchor among the baselines: the first one at 0, and no scale named.
    assert ladder_scale(["greedy:noise=5"], scale) is None
