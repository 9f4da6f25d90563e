"""The shipped network (``pretrained``), slim exports, and the strength curve of a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import tiny_training_run

from agents import make_agent
from agents.evaluation.arena import MatchSettings, run_arena
from agents.network import pretrained
from train.run_checkpoint import CheckpointError, checkpoint_path, latest_checkpoint, read_file
from train.tools import ship_network as pretrained_tool
from train.tools.curve import (
    CurvePoint,
    branch_start,
    format_curve,
    load_curve,
    strength_curve,
    train_hours,
)
from train.tools.curve import main as curve_main

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tiny iterations, each evaluated (and rated against the one before)."""
    overrides = ["iterations=2", "eval.every=1", "eval.elo_checkpoints=1"]
    return tiny_training_run(tmp_path_factory.mktemp("pretrained"), *overrides)


def test_the_package_ships_a_network_with_its_making_of() -> None:
    meta = pretrained.metadata()
    for key in ("command", "machine", "iteration", "cpu_hours", "wall_hours", "torch"):
        assert key in meta, key
    assert "yinsh-train" in meta["command"]
    data = read_file(pretrained.weights_path())
    assert set(data) >= {"config", "model", "metadata"} and "learner" not in data
    assert pretrained.weights_path().stat().st_size < 5_000_000


@pytest.mark.slow
def test_pretrained_specs_play_legal_games_in_the_arena() -> None:
    raw = make_agent("pretrained:sims=0")
    searching = make_agent("pretrained:sims=4")
    assert raw.sims == 0 and searching.sims == 4  # type: ignore[attr-defined]
    assert make_agent("pretrained").sims == pretrained.DEFAULT_SIMS  # type: ignore[attr-defined]
    result = run_arena(
        ["pretrained:sims=0", "pretrained:sims=4"], 2, MatchSettings(seed=3), progress=False
    )
    pairing = result.pairings[0]
    assert pairing.games == 2 and pairing.a_forfeits == pairing.b_forfeits == 0
    assert all(g.termination != "forfeit" for g in result.games)  # every move legal


@pytest.mark.slow
def test_export_writes_a_slim_checkpoint_that_net_agents_load(
    run_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "slim.pt"
    pretrained_tool.export(run_dir, out, {"command": "yinsh-train tiny", "cpu_hours": 0.01})
    slim = read_file(out)
    full = read_file(checkpoint_path(run_dir, 2))
    assert slim["metadata"]["command"] == "yinsh-train tiny"
    assert slim["metadata"]["iteration"] == 2 and "learner" not in slim
    for key, tensor in full["model"].items():
        assert torch.equal(slim["model"][key], tensor)
    agent = make_agent(f"net:path={out},sims=0")
    assert agent.sims == 0  # type: ignore[attr-defined]
    assert pretrained_tool.main(["info", str(out)]) == 0


def test_export_of_a_missing_checkpoint_fails_naming_it(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"nothing\.pt"):
        pretrained_tool.export(tmp_path / "nothing.pt", tmp_path / "out.pt", {})
    assert not (tmp_path / "out.pt").exists()
    assert pretrained_tool.main(["export", str(tmp_path / "nothing.pt"), "--out", "x.pt"]) == 2


def test_strength_curve_rates_every_evaluation_on_one_scale(run_dir: Path) -> None:
    curve = strength_curve(run_dir)
    assert [p.iteration for p in curve.points] == [0, 1, 2]
    assert curve.anchors == {"random": 0.0}
    hours = [p.train_hours for p in curve.points]
    assert hours[0] == 0.0 and hours[0] < hours[1] < hours[2]
    assert curve.clock == "cpu" and "| iteration | CPU hours |" in format_curve(curve)
    for p in curve.points:
        assert p.ci95[0] <= p.elo <= p.ci95[1]
    text = format_curve(curve)
    assert "anchor random: Elo 0" in text and text.count("\n| ") == 3  # one row per evaluation
    assert curve.scale == "yinsh-v1" and "Elo (yinsh-v1 scale, random = 0)" in text


def test_the_in_run_elo_is_on_the_fixed_scale(run_dir: Path) -> None:
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    last = records[-1]
    assert last["eval/elo_ci95_low"] <= last["eval/elo"] <= last["eval/elo_ci95_high"]
    history = read_file(latest_checkpoint(run_dir))["history"]
    assert history["scale"] == "yinsh-v1"


@pytest.mark.slow
def test_several_runs_share_one_axis(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    out, data = tmp_path / "curves.png", tmp_path / "curve.json"
    assert curve_main([str(run_dir), str(run_dir), "--out", str(out), "--json", str(data)]) == 0
    assert json.loads(data.read_text())["scale"] == "yinsh-v1"
    assert capsys.readouterr().out.count("Elo (yinsh-v1 scale, random = 0)") == 2
    assert out.stat().st_size > 0


def test_train_hours_sums_selfplay_and_learning_and_survives_a_cut_line(tmp_path: Path) -> None:
    lines = [
        {"iteration": 0},
        {"iteration": 1, "time/selfplay_s": 1800.0, "time/learn_s": 1800.0, "time/eval_s": 99.0},
        {"iteration": 2, "time/selfplay_s": 3600.0, "time/learn_s": 0.0},
    ]
    text = "".join(json.dumps(r) + "\n" for r in lines) + '{"iteration": 3, "time/sel'
    (tmp_path / "metrics.jsonl").write_text(text)
    assert train_hours(tmp_path) == ({0: 0.0, 1: 1.0, 2: 2.0}, "wall")  # no CPU times: wall
    (tmp_path / "metrics.jsonl").write_text("[1, 2]\n")
    with pytest.raises(ValueError, match=r"metrics\.jsonl:1"):
        train_hours(tmp_path)


def test_train_hours_reads_the_recorded_cpu_seconds(tmp_path: Path) -> None:
    lines = [
        {"iteration": 0, "time/eval_cpu_s": 50.0},
        {"iteration": 1, "time/selfplay_s": 10.0, "time/learn_s": 5.0, "time/cpu_s": 1800.0},
        {"iteration": 2, "time/selfplay_s": 10.0, "time/learn_s": 5.0, "time/cpu_s": 7200.0},
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert train_hours(tmp_path) == ({0: 0.0, 1: 0.5, 2: 2.0}, "cpu")


def test_the_run_records_cumulative_cpu_seconds(run_dir: Path) -> None:
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    cpu = [r["time/cpu_s"] for r in records if r["iteration"] > 0]
    assert len(cpu) == 2 and 0 < cpu[0] < cpu[1]
    assert all(r["time/eval_cpu_s"] > 0 for r in records)  # every iteration was evaluated


def test_onnx_evaluator_matches_the_torch_evaluator(run_dir: Path) -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    from agents.network.inference import NetworkEvaluator
    from agents.network.onnx_inference import OnnxEvaluator, make_evaluator
    from train.run_checkpoint import load_model
    from yinsh_env.envs.observation import GRID, N_PLANES

    model, _, _ = load_model(run_dir)
    planes = torch.rand(7, GRID, GRID, N_PLANES)
    cpu = torch.device("cpu")
    with torch.inference_mode():
        reference = NetworkEvaluator(model, cpu).forward(planes)
        fast = OnnxEvaluator(model).forward(planes)
    for a, b in zip(reference, fast):  # float32 rounding in other kernels: 2e-7 measured
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5)
    assert isinstance(make_evaluator(model, cpu, "auto"), OnnxEvaluator)
    assert type(make_evaluator(model, cpu, "torch")) is NetworkEvaluator


def test_an_unknown_inference_backend_is_refused_naming_it(run_dir: Path) -> None:
    with pytest.raises(ValueError, match="'tensorrt'"):
        make_agent(f"net:path={run_dir},backend=tensorrt")


def test_a_training_in_stretches_draws_as_one_curve(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A curve saved as JSON loads back; several sources print and draw in order."""
    saved = tmp_path / "first.json"
    assert curve_main([str(run_dir), "--json", str(saved)]) == 0
    assert load_curve(saved) == strength_curve(run_dir)
    capsys.readouterr()
    out = tmp_path / "all.png"
    pytest.importorskip("matplotlib")
    assert curve_main([str(saved), str(run_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("| iteration |") == 2 and f"{saved}:" in printed
    assert out.read_bytes().startswith(b"\x89PNG")
    (tmp_path / "bad.json").write_text('{"points": [{"iteration": 1}], "anchors": {}}')
    assert curve_main([str(tmp_path / "bad.json")]) == 2
    assert "bad.json is not a strength curve" in capsys.readouterr().err


def test_a_run_copied_from_another_is_drawn_from_where_they_part() -> None:
    def points(*pairs: tuple[int, float]) -> list[CurvePoint]:
        return [CurvePoint(i, h, 1000.0 + i, (900.0, 1100.0)) for i, h in pairs]

    control = points((0, 2.0), (20, 2.5), (40, 3.0), (60, 3.5))
    lever = points((0, 2.0), (20, 2.5), (40, 3.0), (60, 3.6), (80, 4.0))
    assert branch_start(lever, [control]) == 2  # from iteration 40
    assert branch_start(control, []) == 0
    later = points((0, 2.2), (20, 2.5))  # the same iteration at another time is not shared
    assert branch_start(later, [control]) == 0
    assert branch_start(control, [control]) == len(control) - 1
