"""Averaging a run's checkpoints into one network (train.tools.average)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers import load_yaml_config
from test_train_continue import source_run  # noqa: F401  (a module-scoped fixture)
from test_train_run import TINY

from agents.network.network import PolicyValueNet
from agents.spec import make_agent
from train.cpu_clock import CPU_KEY
from train.run_checkpoint import (
    CheckpointError,
    atomic_save,
    checkpoint_path,
    load_model,
    read_file,
    replay_path,
)
from train.tools.average import average_checkpoints, main
from yinsh_env.engine.state import State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def two_checkpoints(run_dir: Path) -> tuple[Path, Path]:
    return checkpoint_path(run_dir, 1), checkpoint_path(run_dir, 2)


@pytest.mark.slow
def test_the_average_holds_the_mean_weights_and_measures_batch_norm_on_the_replay(
    source_run: Path,  # noqa: F811
) -> None:
    first, second = two_checkpoints(source_run)
    a, b = read_file(first)["model"], read_file(second)["model"]
    data = average_checkpoints([first, second], bn_positions=64)
    weights = data["model"]
    weight = "stem.0.weight"
    assert not torch.equal(a[weight], b[weight])  # the two differ: the mean is news
    for name in ("stem.0.weight", "tower.0.conv1.weight", "value_out.bias"):
        if name in weights:
            torch.testing.assert_close(weights[name], (a[name] + b[name]) / 2)
    # Statistics measured on the newest checkpoint's replay: not the mean of the two.
    mean = "stem.1.running_mean"
    assert not torch.allclose(weights[mean], (a[mean] + b[mean]) / 2)
    info = data["metadata"]["average"]
    assert info["iterations"] == [1, 2]
    assert str(replay_path(second)) in info["batch_norm"]
    assert data["iteration"] == 2
    assert data["history"][CPU_KEY] == read_file(second)["history"][CPU_KEY]


def test_without_a_replay_file_the_statistics_are_averaged_and_said_to_be(
    source_run: Path,  # noqa: F811
) -> None:
    first, _ = two_checkpoints(source_run)  # iteration 1 keeps no replay file
    zero = checkpoint_path(source_run, 0)
    a, b = read_file(zero)["model"], read_file(first)["model"]
    data = average_checkpoints([first, zero])
    mean = "stem.1.running_mean"
    torch.testing.assert_close(data["model"][mean], (a[mean] + b[mean]) / 2)
    assert "averaged" in data["metadata"]["average"]["batch_norm"]
    assert data["iteration"] == 1


@pytest.mark.slow
def test_the_averaged_file_plays_and_loads_as_any_checkpoint(
    tmp_path: Path,
    source_run: Path,  # noqa: F811
) -> None:
    out = tmp_path / "runs" / "avg.pt"  # its folder made when the file is written
    assert main([*map(str, two_checkpoints(source_run)), "--out", str(out)]) == 0
    _, config, _ = load_model(out)
    assert config.network == load_model(source_run)[1].network
    state = State()
    agent = make_agent(f"net:path={out},sims=0", seed=1)
    assert agent.act(state.copy()) in state.legal_actions()


def test_checkpoints_of_other_networks_or_named_twice_are_refused(
    tmp_path: Path,
    source_run: Path,  # noqa: F811
) -> None:
    source = read_file(checkpoint_path(source_run, 1))
    wider = load_yaml_config(tmp_path, TINY, "network.channels=12")
    other = tmp_path / "wider.pt"
    model = PolicyValueNet(wider.network).state_dict()
    atomic_save({**source, "config": wider.to_dict(), "model": model}, other)
    with pytest.raises(CheckpointError, match=rf"{other} holds another network"):
        average_checkpoints([checkpoint_path(source_run, 2), other])
    with pytest.raises(CheckpointError, match="named twice"):
        average_checkpoints([checkpoint_path(source_run, 2), source_run])
    with pytest.raises(CheckpointError, match="no checkpoints"):
        average_checkpoints([])


def test_bad_input_is_refused_by_name_and_writes_nothing(
    tmp_path: Path,
    source_run: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = two_checkpoints(source_run)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint")
    out = tmp_path / "avg.pt"
    assert main([str(first), str(corrupt), "--out", str(out)]) == 2
    assert f"{corrupt}" in capsys.readouterr().err
    assert not out.exists()
    assert corrupt.read_bytes() == b"not a checkpoint"

    not_replay = tmp_path / "not_replay.pt"
    atomic_save(read_file(first), not_replay)  # a checkpoint, not a replay file
    assert main([str(first), str(second), "--replay", str(not_replay), "--out", str(out)]) == 2
    assert "holds no replay window" in capsys.readouterr().err
    assert not out.exists()

    before = second.read_bytes()
    with pytest.raises(SystemExit):
        main([str(first), str(second), "--out", str(second)])
    assert "is one of the checkpoints" in capsys.readouterr().err
    assert second.read_bytes() == before
