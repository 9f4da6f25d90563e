"""The network's heads and the learner: masking, the policy layout, losses that fall."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import game_of
from helpers import random_positions as positions

from train.config import NetworkConfig, OptimConfig
from train.learner import Learner, lr_factor
from train.network import PolicyValueNet, policy_gather
from train.replay import make_batch
from yinsh_env import N_ACTIONS, State
from yinsh_env.observation import encode

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
