"""Growing a trained network into a bigger one with the same outputs (train.grow)."""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import load_yaml_config
from test_train_continue import source_run  # noqa: F401  (a module-scoped fixture)
from test_train_run import TINY, metrics

from agents.network.network import NetOutput, PolicyValueNet
from train.config import NetworkConfig, OptimConfig
from train.cpu_clock import CPU_KEY
from train.grow import grow_state_dict, why_not_grown
from train.init_weights import InitWeightsError
from train.learner import Learner, carry_optimizer_state
from train.run_checkpoint import checkpoint_path, config_of, list_checkpoints, load_model, read_file
from train.trainer import RunError, run
from yinsh_env.envs.observation import GRID, N_PLANES

pytestmark = pytest.mark.usefixtures("torch_one_thread")

SMALL = NetworkConfig(blocks=2, channels=6, value_hidden=8)
BIG = NetworkConfig(blocks=4, channels=10, value_hidden=8, opponent_policy=True)


def trained_small() -> PolicyValueNet:
    """A small network whose batch norms hold non-trivial statistics and affine terms."""
    torch.manual_seed(1)
    net = PolicyValueNet(SMALL)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.3, 0.3)
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    return net


def planes(batch: int = 5, seed: int = 0) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.integers(0, 2, (batch, GRID, GRID, N_PLANES)).astype(np.float32))


def assert_same_outputs(a: NetOutput, b: NetOutput) -> None:
    for name in ("policy", "value", "margin", "ownership"):
        torch.testing.assert_close(getattr(a, name), getattr(b, name), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_a_grown_network_computes_what_the_small_one_did(mode: str) -> None:
    small = trained_small()
    big = PolicyValueNet(BIG)
    big.load_state_dict(grow_state_dict(small.state_dict(), SMALL, BIG, seed=3))
    for net in (small, big):
        net.train(mode == "train")
    x = planes()
    with torch.no_grad():
        assert_same_outputs(small(x), big(x))


def test_the_new_channels_and_blocks_learn() -> None:
    """Zero outgoing weights, not dead channels: the first gradient reaches them."""
    grown = grow_state_dict(trained_small().state_dict(), SMALL, BIG, seed=3)
    big = PolicyValueNet(BIG)
    big.load_state_dict(grown)  # copies: ``grown`` stays as grown
    big.train()
    out = big(planes())
    loss = out.value.square().mean() + out.policy.logsumexp(1).mean() + out.ownership.mean()
    loss.backward()
    grads = dict(big.named_parameters())
    c = SMALL.channels
    assert grads["tower.0.conv1.weight"].grad[:c, c:].abs().sum() > 0  # new -> old channel
    assert grads["policy_planes.weight"].grad[:, c:].abs().sum() > 0  # new channel -> head
    assert grads["value_fc.0.weight"].grad[:, c : BIG.channels].abs().sum() > 0
    assert grads["tower.3.bn2.weight"].grad.abs().sum() > 0  # a new block's silenced scale
    # ... and before that step, the weights carrying new channels into old ones were zero.
    assert not grown["tower.0.conv1.weight"][:c, c:].any()
    assert grown["tower.0.conv1.weight"][c:].any()  # what feeds a new channel is random


def test_growth_is_seeded_and_leaves_the_global_random_state_alone() -> None:
    state = trained_small().state_dict()
    torch.manual_seed(9)
    before = torch.rand(3)
    torch.manual_seed(9)
    a = grow_state_dict(state, SMALL, BIG, seed=3)
    assert torch.equal(torch.rand(3), before)
    b = grow_state_dict(state, SMALL, BIG, seed=3)
    c = grow_state_dict(state, SMALL, BIG, seed=4)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["tower.3.conv1.weight"], c["tower.3.conv1.weight"])


@pytest.mark.parametrize(
    ("big", "reason"),
    [
        (NetworkConfig(blocks=1, channels=6, value_hidden=8), "can only grow"),
        (NetworkConfig(blocks=2, channels=4, value_hidden=8), "can only grow"),
        (NetworkConfig(blocks=2, channels=6, value_hidden=16), "value_hidden must stay 8"),
    ],
)
def test_a_network_cannot_shrink_or_change_its_value_head(big: NetworkConfig, reason: str) -> None:
    assert reason in (why_not_grown(SMALL, big) or "")
    with pytest.raises(ValueError, match=reason):
        grow_state_dict(trained_small().state_dict(), SMALL, big)
    assert why_not_grown(SMALL, SMALL) is None
    with_head = NetworkConfig(blocks=2, channels=6, value_hidden=8, opponent_policy=True)
    assert "dropped" in (why_not_grown(with_head, SMALL) or "")


@pytest.mark.slow
def test_a_run_grows_a_checkpoint_into_its_bigger_network_when_asked(
    tmp_path: Path,
    source_run: Path,  # noqa: F811
) -> None:
    bigger = ["network.blocks=2", "network.channels=12", f"init.weights={source_run}"]
    refused = load_yaml_config(tmp_path, TINY, *bigger)
    with pytest.raises(InitWeightsError, match=r"set init.grow=true"):
        run(refused, tmp_path / "refused", progress=False)
    assert not list_checkpoints(tmp_path / "refused")

    config = load_yaml_config(tmp_path, TINY, *bigger, "init.grow=true", "iterations=1")
    run(config, tmp_path / "grown", progress=False)
    small, _, _ = load_model(source_run)
    big, big_config, _ = load_model(checkpoint_path(tmp_path / "grown", 0))
    assert (big_config.network.blocks, big_config.network.channels) == (2, 12)
    with torch.no_grad():
        assert_same_outputs(small(planes()), big(planes()))

    shrink = load_yaml_config(
        tmp_path, TINY, "network.channels=4", f"init.weights={source_run}", "init.grow=true"
    )
    with pytest.raises(InitWeightsError, match=r"cannot grow into it: blocks and channels"):
        run(shrink, tmp_path / "shrink", progress=False)


@pytest.mark.slow
def test_a_resumed_run_grows_and_keeps_its_window_schedule_clock_and_moments(
    tmp_path: Path,
    source_run: Path,  # noqa: F811
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(source_run, run_dir)
    before = sorted(p.name for p in run_dir.rglob("*"))
    bigger = ["iterations=3", "network.channels=12", "network.opponent_policy=true"]
    with pytest.raises(RunError, match=r"set init.grow=true"):
        run(load_yaml_config(tmp_path, TINY, *bigger), run_dir, resume=True, progress=False)
    assert sorted(p.name for p in run_dir.rglob("*")) == before  # nothing written

    config = load_yaml_config(tmp_path, TINY, *bigger, "init.grow=true")
    run(config, run_dir, resume=True, progress=False)
    old, new = read_file(checkpoint_path(run_dir, 2)), read_file(checkpoint_path(run_dir, 3))
    assert new["history"]["grown"] == [
        {
            "iteration": 2,
            "from": asdict(config_of(old, run_dir).network),
            "to": asdict(config.network),
        }
    ]
    steps = config.optim.steps_per_iteration
    assert new["learner"]["step"] == old["learner"]["step"] + steps  # the schedule went on
    assert new["history"][CPU_KEY] > old["history"][CPU_KEY]
    record = metrics(run_dir)[-1]
    assert record["iteration"] == 3 and "replay/restarted" not in record
    assert record["replay/positions"] > record["selfplay/positions"]  # the old window kept
    assert load_model(checkpoint_path(run_dir, 3))[1].network.opponent_policy


@pytest.mark.parametrize(
    "big",
    [
        NetworkConfig(blocks=3, channels=6, value_hidden=8, opponent_policy=True),
        NetworkConfig(blocks=2, channels=8, value_hidden=8),
    ],
    ids=["deeper-with-head", "wider"],
)
def test_growing_keeps_the_moments_of_every_unchanged_weight_and_none_of_the_rest(
    big: NetworkConfig,
) -> None:
    small = trained_small()
    optim = OptimConfig(batch_size=4, steps_per_iteration=1, warmup_steps=0)
    learner = Learner(small, optim, total_steps=10, device=torch.device("cpu"))
    loss = torch.stack([p.square().sum() for p in small.parameters()]).sum()
    loss.backward()
    learner.optimizer.step()
    old = {name: learner.optimizer.state[p] for name, p in small.named_parameters()}
    net = PolicyValueNet(big)
    grown = Learner(net, optim, total_steps=10, device=torch.device("cpu"))
    grown.optimizer.load_state_dict(
        carry_optimizer_state(learner.optimizer.state_dict(), small, net)
    )
    kept = 0
    for name, parameter in net.named_parameters():
        state = grown.optimizer.state.get(parameter, {})
        if name in old and old[name]["exp_avg"].shape == parameter.shape:
            assert torch.equal(state["exp_avg"], old[name]["exp_avg"]), name
            assert torch.equal(state["exp_avg_sq"], old[name]["exp_avg_sq"]), name
            kept += 1
        else:  # new or reshaped: AdamW starts it afresh
            assert not state, name
    assert 0 < kept < len(list(net.parameters()))
