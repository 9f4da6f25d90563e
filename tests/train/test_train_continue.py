"""Training further: a run from earlier weights, a run kept in git and resumed elsewhere."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import torch
from helpers import load_yaml_config
from test_train_run import TINY, Interrupt, metrics

from train.config import Config
from train.init_weights import InitWeightsError, sha256_of
from train.run_checkpoint import (
    CheckpointError,
    checkpoint_path,
    list_checkpoints,
    read_file,
    replay_path,
)
from train.tools.curve import strength_curve
from train.tools.run_archive import main as archive_main
from train.tools.run_archive import restore, save
from train.tools.ship_network import export
from train.train_cli import main
from train.trainer import RunError, run

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def tiny(tmp_path: Path, *overrides: str) -> Config:
    return load_yaml_config(tmp_path, TINY, *overrides)


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-iteration run, evaluated after each iteration (the Elo ladder has pairings)."""
    tmp = tmp_path_factory.mktemp("source")
    run_dir = tmp / "run"
    run(tiny(tmp, "eval.every=1", "eval.elo_checkpoints=1"), run_dir, progress=False)
    return run_dir


@pytest.mark.slow
def test_a_run_starts_from_a_checkpoints_weights_and_its_cpu_clock(
    tmp_path: Path, source_run: Path
) -> None:
    source = checkpoint_path(source_run, 2)
    source_data = read_file(source)
    source_cpu = source_data["history"]["cpu_s"]
    assert source_cpu > 0
    run_dir = tmp_path / "continued"
    config = tiny(tmp_path, "iterations=1", "eval.every=1", f"init.weights={source}")
    run(config, run_dir, progress=False)
    start = read_file(checkpoint_path(run_dir, 0))
    assert all(torch.equal(start["model"][k], source_data["model"][k]) for k in start["model"])
    assert start["history"]["init"] == {
        "path": str(source),
        "sha256": sha256_of(source),
        "iteration": 2,
        "cpu_s": source_cpu,
    }
    records = metrics(run_dir)
    assert records[0]["time/cpu_s"] == source_cpu
    assert records[1]["time/cpu_s"] > source_cpu
    # The curve starts where the weights' training stopped.
    curve = strength_curve(run_dir)
    assert curve.points[0].train_hours == pytest.approx(source_cpu / 3600)
    # A fresh optimizer and schedule: the learner counts its own steps from 0.
    assert read_file(checkpoint_path(run_dir, 1))["learner"]["step"] == 2


def test_a_network_mismatch_is_refused_before_anything_is_written(
    tmp_path: Path, source_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(tmp_path, "network.channels=4", f"init.weights={source_run}")
    with pytest.raises(InitWeightsError, match=r"init.weights: .* holds a network .*channels=8"):
        run(config, tmp_path / "a", progress=False)
    assert not list_checkpoints(tmp_path / "a")
    missing = tmp_path / "missing.pt"
    args = ["--config", str(tmp_path / "tiny.yaml"), "--run-dir", str(tmp_path / "b")]
    assert main([*args, f"init.weights={missing}"]) == 2
    assert (
        "init.weights" in capsys.readouterr().err and not (tmp_path / "b" / "config.yaml").exists()
    )


@pytest.mark.parametrize("grow", ["false", "true"])
def test_weights_that_do_not_fit_their_own_network_are_refused_by_name(
    tmp_path: Path, source_run: Path, grow: str
) -> None:
    data = read_file(checkpoint_path(source_run, 2))
    data["model"]["tower.0.conv1.weight"] = torch.zeros(3, 3)
    torch.save(data, tmp_path / "bad.pt")
    before = (tmp_path / "bad.pt").read_bytes()
    config = tiny(tmp_path, f"init.weights={tmp_path / 'bad.pt'}", f"init.grow={grow}")
    with pytest.raises(InitWeightsError, match=r"(?s)init.weights: .*bad.pt.*tower.0.conv1.weight"):
        run(config, tmp_path / "a", progress=False)
    assert not list_checkpoints(tmp_path / "a") and (tmp_path / "bad.pt").read_bytes() == before


@pytest.mark.slow
def test_a_slim_file_says_its_cpu_seconds_or_the_config_must(
    tmp_path: Path, source_run: Path
) -> None:
    slim = export(source_run, tmp_path / "slim.pt", {})
    cpu = read_file(source_run / "checkpoints" / "iter_000002.pt")["history"]["cpu_s"]
    assert read_file(slim)["metadata"]["train_cpu_s"] == cpu
    data = read_file(slim)
    del data["metadata"]["train_cpu_s"]
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(InitWeightsError, match=r"set init.cpu_s"):
        run(tiny(tmp_path, f"init.weights={tmp_path / 'old.pt'}"), tmp_path / "a", progress=False)
    run_dir = tmp_path / "b"
    config = tiny(
        tmp_path, "iterations=1", f"init.weights={tmp_path / 'old.pt'}", "init.cpu_s=7200"
    )
    run(config, run_dir, progress=False)
    assert metrics(run_dir)[0]["time/cpu_s"] == 7200


def test_init_weights_names_any_shipped_network_so_a_config_outlives_a_new_pretrained() -> None:
    from agents.network.pretrained import weights_path
    from train.config import load_config
    from train.init_weights import load_init_weights, resolve_init_path

    assert resolve_init_path("anchor-v1") == weights_path("anchor-v1")
    assert resolve_init_path("pretrained") == weights_path()
    root = Path(__file__).resolve().parents[2]
    started = load_init_weights(load_config(root / "configs" / "continue.yaml"))
    assert started is not None and started.cpu_s == 7632  # the first network's 2.12 hours
    assert started.sha256 == sha256_of(weights_path("anchor-v1"))
    with pytest.raises(InitWeightsError, match="anchor-v9"):
        resolve_init_path("anchor-v9")


@pytest.mark.slow
def test_a_run_saved_to_an_archive_resumes_elsewhere_with_an_empty_window(
    tmp_path: Path, source_run: Path
) -> None:
    archive = tmp_path / "archive"
    manifest = save(source_run, archive)
    assert manifest["iteration"] == 2 and manifest["evaluated"] == [0, 1, 2]
    assert sorted(manifest["files"]) == ["checkpoints/iter_000002.pt"]  # evaluated: no slim copy
    assert not list(archive.rglob("*.replay.pt"))
    restored = tmp_path / "restored"
    assert restore(archive, restored)["iteration"] == 2
    assert not replay_path(checkpoint_path(restored, 2)).exists()
    config = tiny(tmp_path, "iterations=4", "eval.every=2", "eval.elo_checkpoints=1")
    run(config, restored, resume=True, progress=False)
    records = metrics(restored)
    assert [r["iteration"] for r in records] == [0, 1, 2, 3, 4]
    assert records[3]["replay/restarted"] == 1.0 and "replay/restarted" not in records[4]
    # The window restarted with iteration 3's games only, then grew.
    assert records[3]["replay/positions"] == records[3]["selfplay/positions"]
    final = read_file(checkpoint_path(restored, 4))["history"]
    assert final["replay_restarts"] == [2]
    assert {"a": "iter_000004", "b": "iter_000002"} in [
        {"a": p["a"], "b": p["b"]} for p in final["pairings"]
    ]
    curve = strength_curve(restored)
    assert [p.iteration for p in curve.points] == [0, 1, 2, 4]


def test_saving_a_later_checkpoint_keeps_slim_copies_for_the_ladder(
    tmp_path: Path, source_run: Path
) -> None:
    run_dir = tmp_path / "run"
    save(source_run, tmp_path / "a")
    restore(tmp_path / "a", run_dir)
    config = tiny(tmp_path, "iterations=5", "eval.every=2", "eval.elo_checkpoints=1")

    def stop_after_third(iteration: int, _: dict[str, float]) -> None:
        if iteration == 3:
            raise Interrupt  # iteration 3 is not evaluated

    with pytest.raises(Interrupt):
        run(config, run_dir, resume=True, progress=False, on_iteration=stop_after_third)
    archive = tmp_path / "archive"
    (archive / "checkpoints").mkdir(parents=True)
    (archive / "checkpoints" / "iter_000001.pt").write_bytes(b"stale")
    manifest = save(run_dir, archive)
    assert manifest["iteration"] == 3
    assert sorted(manifest["files"]) == ["checkpoints/iter_000002.pt", "checkpoints/iter_000003.pt"]
    ladder = read_file(archive / "checkpoints" / "iter_000002.pt")
    assert "learner" not in ladder and "model" in ladder  # slim
    assert [r["iteration"] for r in metrics(archive)] == [0, 1, 2, 3]
    evaluated = save(run_dir, tmp_path / "evaluated", evaluated=True)
    assert evaluated["iteration"] == 2 and len(evaluated["files"]) == 1


def test_restore_refuses_a_damaged_archive_and_a_used_run_dir(
    tmp_path: Path, source_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "archive"
    save(source_run, archive)
    with pytest.raises(RunError, match="already holds checkpoints"):
        restore(archive, source_run)
    manifest_path = archive / "archive.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"] = {"../escape.pt": "0" * 64}
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(RunError, match="escape"):
        restore(archive, tmp_path / "a")
    save(source_run, archive)
    (archive / "checkpoints" / "iter_000002.pt").write_bytes(b"changed")
    with pytest.raises(CheckpointError, match="sha256"):
        restore(archive, tmp_path / "b")
    assert not list_checkpoints(tmp_path / "b")
    with pytest.raises(SystemExit) as info:  # checked when the command line is parsed
        archive_main(["restore", str(tmp_path / "nothing"), str(tmp_path / "c")])
    assert info.value.code == 2
    assert "argument archive" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert archive_main(["restore", str(tmp_path / "empty"), str(tmp_path / "c")]) == 2
    assert "not a run archive" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["random-bytes", "nan-weights", "no-metrics"])
def test_restore_loads_every_checkpoint_before_writing_anything(
    damage: str, tmp_path: Path, source_run: Path
) -> None:
    """A sha256 that matches proves nothing about the file: it must load, with finite weights."""
    archive = tmp_path / "archive"
    save(source_run, archive)
    name = "checkpoints/iter_000002.pt"
    if damage == "no-metrics":
        (archive / "metrics.jsonl").unlink()
    else:
        target = archive / name
        if damage == "random-bytes":
            target.write_bytes(os.urandom(4000))
        else:
            data = torch.load(target, weights_only=True)
            first = next(k for k, v in data["model"].items() if v.is_floating_point())
            data["model"][first] = data["model"][first] * float("nan")
            torch.save(data, target)
        manifest_path = archive / "archive.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["files"][name] = hashlib.sha256(target.read_bytes()).hexdigest()
        manifest_path.write_text(json.dumps(manifest))
    problem = {"random-bytes": "not a PyTorch file", "nan-weights": "NaN", "no-metrics": "metrics"}
    with pytest.raises((CheckpointError, RunError), match=problem[damage]):
        restore(archive, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_pruned_checkpoint_is_named_with_the_commit_that_has_it(
    tmp_path: Path, source_run: Path
) -> None:
    """Checkpoints pruned from the tree: restore says which commit has each and how to get
    it back; once back, its sha256 is checked as before."""
    archive = tmp_path / "archive"
    save(source_run, archive)
    name = "checkpoints/iter_000002.pt"
    kept = (archive / name).read_bytes()
    manifest_path = archive / "archive.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["pruned"] = {name: "abc123def456"}
    manifest_path.write_text(json.dumps(manifest))
    (archive / name).unlink()
    with pytest.raises(RunError, match=r"pruned.*commit abc123def456 has it: git checkout abc123"):
        restore(archive, tmp_path / "a")
    assert not list_checkpoints(tmp_path / "a")
    (archive / name).write_bytes(kept[:-1] + bytes([kept[-1] ^ 1]))  # back, but not the same
    with pytest.raises(CheckpointError, match="sha256"):
        restore(archive, tmp_path / "b")
    (archive / name).write_bytes(kept)
    assert restore(archive, tmp_path / "c")["iteration"] == manifest["iteration"]
    manifest["pruned"] = ["not", "a", "mapping"]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(RunError, match="'pruned' must map"):
        restore(archive, tmp_path / "d")


def test_a_missing_checkpoint_that_was_never_pruned_is_named() -> None:
    from train.tools.run_archive import _missing

    text = _missing(Path("arch"), "checkpoints/iter_000001.pt", {"files": {}})
    assert "arch/checkpoints/iter_000001.pt is missing" in text and "git" not in text


@pytest.mark.parametrize(
    ("damage", "kind"),
    [("iteration", "ValueError"), ("history", "AttributeError"), ("rng", "KeyError")],
)
def test_a_checkpoint_with_unusable_state_is_refused_naming_it(
    tmp_path: Path, source_run: Path, damage: str, kind: str
) -> None:
    run_dir = tmp_path / "damaged"
    (run_dir / "checkpoints").mkdir(parents=True)
    last = checkpoint_path(source_run, 2)
    data = read_file(last)
    if damage == "rng":
        del data["rng"]
    else:
        data[damage] = "x" if damage == "iteration" else ["not", "a", "dict"]
    target = checkpoint_path(run_dir, 2)
    torch.save(data, target)
    os.link(replay_path(last), replay_path(target))
    # A damaged history shows where the network grows (the history records it).
    grow = ("network.opponent_policy=true", "init.grow=true") if damage == "history" else ()
    config = tiny(tmp_path, "iterations=3", *grow)
    with pytest.raises(
        CheckpointError, match=f"holds no usable optimizer, RNG or iteration state: {kind}"
    ):
        run(config, run_dir, resume=True, progress=False)
