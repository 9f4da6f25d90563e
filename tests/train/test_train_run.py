"""Training runs end to end: the CLI smoke run, exact resume, corrupt checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import load_yaml_config

from agents import AgentSpecError, make_agent
from train.config import Config, load_config
from train.run_checkpoint import (
    CheckpointError,
    checkpoint_path,
    latest_checkpoint,
    list_checkpoints,
    read_file,
    replay_path,
    resolve_checkpoint,
)
from train.train_cli import main
from train.trainer import RunError, run
from yinsh_env import State

TINY = """\
seed: 3
iterations: 2
backend: inprocess
network: {blocks: 1, channels: 8, value_hidden: 8}
search: {simulations: 6, gumbel_considered: 4}
selfplay: {games_per_iteration: 3, games_in_flight: 3, fast_simulations: 2,
           full_search_prob: 0.5}
replay: {window: 5000, min_positions: 8}
optim: {batch_size: 16, steps_per_iteration: 2, warmup_steps: 1}
eval: {every: 0, games: 2, opponents: [random], simulations: 2, search_games: 2}
"""


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def tiny_config(tmp_path: Path, *overrides: str) -> Config:
    return load_yaml_config(tmp_path, TINY, *overrides)


def metrics(run_dir: Path) -> list[dict[str, float]]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_two_iteration_run_through_the_cli(tmp_path: Path) -> None:
    config_file = tmp_path / "tiny.yaml"
    config_file.write_text(TINY)
    run_dir = tmp_path / "run"
    args = ["--config", str(config_file), "--run-dir", str(run_dir), "--no-progress"]
    assert main([*args, "optim.lr=0.001"]) == 0
    saved = load_config(run_dir / "config.yaml")
    assert saved.optim.lr == pytest.approx(0.001) and saved.iterations == 2
    assert [p.name for p in list_checkpoints(run_dir)] == [
        "iter_000000.pt",
        "iter_000001.pt",
        "iter_000002.pt",
    ]
    latest = latest_checkpoint(run_dir)
    assert latest == checkpoint_path(run_dir, 2) and replay_path(latest).exists()
    assert not replay_path(checkpoint_path(run_dir, 1)).exists()  # only the newest keeps one
    data = read_file(latest)
    assert data["iteration"] == 2 and data["learner"]["step"] == 4
    assert set(data["rng"]) == {"python", "numpy", "torch", "cuda"}
    records = metrics(run_dir)
    assert [r["iteration"] for r in records] == [0, 1, 2]
    assert records[1]["selfplay/games"] == 3 and "loss/policy" in records[1]
    assert 0.0 <= records[-1]["eval/raw_vs_random/score"] <= 1.0
    assert (run_dir / "best.pt").exists()
    assert list((run_dir / "tb").iterdir())
    # A second fresh run into the same directory is refused, files untouched.
    before = latest.read_bytes()
    assert main(args) == 2
    assert latest.read_bytes() == before


class Interrupt(Exception):
    pass


@pytest.mark.slow
def test_resume_continues_exactly_like_an_uninterrupted_run(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, "iterations=3")
    straight = tmp_path / "straight"
    run(config, straight, progress=False)

    broken = tmp_path / "broken"

    def stop_after_first(iteration: int, _: dict[str, float]) -> None:
        if iteration == 1:
            raise Interrupt

    with pytest.raises(Interrupt):
        run(config, broken, progress=False, on_iteration=stop_after_first)
    assert latest_checkpoint(broken) == checkpoint_path(broken, 1)
    run(config, broken, resume=True, progress=False)

    a, b = metrics(straight), metrics(broken)
    assert [r["iteration"] for r in b] == [0, 1, 2, 3]
    for key in ("loss/total", "loss/policy", "loss/value", "selfplay/positions"):
        assert [r.get(key) for r in a] == [r.get(key) for r in b]
    model_a = read_file(checkpoint_path(straight, 3))["model"]
    model_b = read_file(checkpoint_path(broken, 3))["model"]
    assert model_a.keys() == model_b.keys()
    assert all(torch.equal(model_a[k], model_b[k]) for k in model_a)


def test_resume_needs_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="holds no checkpoint"):
        run(tiny_config(tmp_path), tmp_path / "empty", resume=True, progress=False)


@pytest.mark.parametrize(
    ("names", "listed"),
    [(["metrics.jsonl", "config.yaml"], "config.yaml, metrics.jsonl"), (["tb/events"], "tb")],
)
def test_a_fresh_run_in_a_folder_with_an_earlier_runs_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], names: list[str], listed: str
) -> None:
    run_dir = tmp_path / "run"
    for name in names:
        (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / name).write_text(f"an earlier run's {name}\n")
    (tmp_path / "tiny.yaml").write_text(TINY)
    argv = ["--config", str(tmp_path / "tiny.yaml"), "--run-dir", str(run_dir), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"yinsh-train: error: run directory {run_dir} already holds an earlier run's files "
        f"({listed}) but no checkpoint to resume: they are not replaced; "
        "choose another --run-dir\n"
    )
    for name in names:
        assert (run_dir / name).read_text() == f"an earlier run's {name}\n"
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(listed.split(", "))


@pytest.mark.slow
def test_corrupt_checkpoint_gives_a_clear_error_and_stays_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_config(tmp_path, "iterations=1")
    run_dir = tmp_path / "run"
    run(config, run_dir, progress=False)
    latest = latest_checkpoint(run_dir)
    assert latest is not None
    damaged = latest.read_bytes()[:1000]
    latest.write_bytes(damaged)
    with pytest.raises(CheckpointError, match=str(latest)):
        read_file(latest)
    with pytest.raises(AgentSpecError, match="corrupt"):
        make_agent(f"net:path={run_dir}")
    code = main(["--config", str(tmp_path / "tiny.yaml"), "--run-dir", str(run_dir), "--resume"])
    assert code == 2 and str(latest) in capsys.readouterr().err
    assert latest.read_bytes() == damaged
    not_a_checkpoint = tmp_path / "x.pt"
    torch.save({"weights": torch.zeros(2)}, not_a_checkpoint)
    with pytest.raises(CheckpointError, match="not a yinsh training checkpoint"):
        read_file(not_a_checkpoint)
    with pytest.raises(CheckpointError, match="does not exist"):
        resolve_checkpoint(tmp_path / "missing.pt")
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        resolve_checkpoint(tmp_path)


def test_a_checkpoint_whose_weights_do_not_fit_is_refused_on_resume_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Readable, but a weight of the wrong shape: the error names it, nothing changes."""
    run_dir = tmp_path / "run"
    run(tiny_config(tmp_path, "iterations=1"), run_dir, progress=False)
    latest = latest_checkpoint(run_dir)
    assert latest is not None
    data = read_file(latest)
    data["model"]["stem.0.weight"] = torch.zeros(2)
    torch.save(data, latest)
    before = latest.read_bytes()
    code = main(["--config", str(tmp_path / "tiny.yaml"), "--run-dir", str(run_dir), "--resume"])
    err = capsys.readouterr().err
    assert code == 2 and str(latest) in err and "stem.0.weight" in err
    assert latest.read_bytes() == before and len(metrics(run_dir)) == 2
    data = read_file(latest)
    data["model"] = read_file(checkpoint_path(run_dir, 0))["model"]
    data["learner"]["optimizer"] = {"state": "garbage"}
    torch.save(data, latest)
    code = main(["--config", str(tmp_path / "tiny.yaml"), "--run-dir", str(run_dir), "--resume"])
    err = capsys.readouterr().err
    assert code == 2 and str(latest) in err and "optimizer" in err


@pytest.mark.slow
def test_two_seeded_runs_side_by_side_give_identical_metrics(tmp_path: Path) -> None:
    """Two 3-iteration runs at once, in separate processes (worker pools, one evaluation):
    every metric but timings is equal, and so are the final weights."""
    import subprocess
    import sys

    config_file = tmp_path / "tiny.yaml"
    config_file.write_text(TINY)
    overrides = ["iterations=3", "backend=process", "workers=2", "eval.every=3"]
    runs = [tmp_path / "a", tmp_path / "b"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "train.train_cli", "--config", str(config_file), "--run-dir",
             str(run), "--no-progress", *overrides],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        for run in runs
    ]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=1800)  # bounds a hang: about 3 min on a loaded machine
        assert proc.returncode == 0, err

    def timeless(run: Path) -> list[dict[str, float]]:
        timed = ("time/", "_per_s", "selfplay/seconds", "selfplay/network_share")
        return [
            {k: v for k, v in record.items() if not any(t in k for t in timed)}
            for record in metrics(run)
        ]

    first, second = timeless(runs[0]), timeless(runs[1])
    assert len(first) == 4 and "eval/elo" in first[-1]
    assert first == second
    weights = [read_file(checkpoint_path(run, 3))["model"] for run in runs]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.slow
def test_the_levers_off_by_default_run_end_to_end(tmp_path: Path) -> None:
    """Forced playouts (PUCT), search-value mixing and the opponent-policy head, all on."""
    levers = [
        "search.algorithm=puct",
        "search.forced_playouts=2",
        "optim.search_value_weight=0.5",
        "network.opponent_policy=true",
        "optim.opponent_policy_weight=0.5",
    ]
    run_dir = tmp_path / "run"
    run(tiny_config(tmp_path, *levers), run_dir, progress=False)
    last = metrics(run_dir)[-1]
    assert last["loss/opponent_policy"] > 0 and last["loss/value"] >= 0
    model = read_file(checkpoint_path(run_dir, 2))["model"]
    assert "opponent_planes.weight" in model
    agent = make_agent(f"net:path={run_dir},sims=4")  # plays without using the head
    assert agent.act(State()) in State().legal_actions()


@pytest.mark.slow
def test_a_cpu_budget_stops_the_run_and_evaluates_its_last_iteration(tmp_path: Path) -> None:
    # Any iteration costs more than a millionth of a CPU-minute: the first one spends it.
    config = tiny_config(tmp_path, "iterations=50", "cpu_minutes=0.000001", "eval.every=10")
    run_dir = tmp_path / "run"
    last = run(config, run_dir, progress=False)
    assert last == checkpoint_path(run_dir, 1)
    records = metrics(run_dir)
    assert [r["iteration"] for r in records] == [0, 1]
    assert records[1]["time/cpu_s"] >= 60 * 0.000001
    assert "eval/raw_vs_random/score" in records[1]  # the budget's last iteration is rated
    # Resumed with the budget spent, nothing more is played.
    assert run(config, run_dir, resume=True, progress=False) == last


def test_a_negative_cpu_budget_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cpu_minutes"):
        tiny_config(tmp_path, "cpu_minutes=-1")
