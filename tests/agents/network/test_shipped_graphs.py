"""The shipped networks' ONNX graphs: made from the shipped checkpoints, played without torch.

``pip install yinsh`` brings no torch: ``pretrained`` plays the graphs shipped beside
its checkpoint in ONNX Runtime.  These tests check that the graphs still give the
checkpoints' policy and value (a replaced checkpoint cannot keep stale graphs
silently), that the base install's commands import nothing of the ``train`` extra,
and that every network agent takes the same default precision.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import BLOCK_NON_BASE_PACKAGES, NOT_IN_BASE_INSTALL

from agents import make_agent
from agents.network.agent import NetAgent
from agents.network.checkpoint import CheckpointError, load_network
from agents.network.export_onnx import (
    BOUNDS,
    Agreement,
    compare,
    graph_agreement,
    positions,
)
from agents.network.export_onnx import main as export_main
from agents.network.graphs import SHIPPED_PRECISIONS, GraphEvaluator, file_sha256, shipped_graphs
from agents.network.pretrained import WEIGHTS_DIR, PretrainedAgent, shipped_weights, weights_path

ROOT = Path(__file__).resolve().parents[3]


def test_every_shipped_checkpoint_has_graphs_made_from_it() -> None:
    assert {"pretrained", "anchor-v1"} <= set(shipped_weights())
    for name in shipped_weights():
        graphs = shipped_graphs(weights_path(name))
        assert graphs is not None, f"{name}: run python -m agents.network.export_onnx"
        for precision in SHIPPED_PRECISIONS:
            described = graphs.info["graphs"][precision]
            assert file_sha256(graphs.graph(precision)) == described["sha256"], name
        assert graphs.play.rings_to_win in (1, 2, 3)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pretrained", "anchor-v1", "long2-365", "long2-557"])
def test_the_shipped_graphs_give_the_checkpoints_policy_and_value(name: str) -> None:
    """Held to each precision's own error against the float32 network, not to a re-make:
    an int8 graph calibrated on another CPU's float kernels differs while as good."""
    pytest.importorskip("torch", reason="the float32 network needs the train extra")
    found = graph_agreement(weights_path(name))
    assert set(found) == set(SHIPPED_PRECISIONS)
    for agreement in found.values():
        assert agreement.positions == 200
        assert agreement.misses() == [], (name, str(agreement))


def test_the_bounds_are_looser_for_int8_and_can_be_missed() -> None:
    fp32, int8 = BOUNDS["fp32"], BOUNDS["int8"]
    assert fp32.agree > int8.agree and fp32.values < int8.values and fp32.policy < int8.policy
    logits = [np.array([0.0, 1.0, 2.0]), np.array([3.0, 0.0])]
    same = compare(logits, np.array([0.5, -0.5]), (logits, np.array([0.5, -0.5])), "int8")
    assert same == Agreement("int8", 2, 2, 0.0, 0.0, 0.0) and same.misses() == []
    flipped = [np.array([2.0, 1.0, 0.0]), np.array([0.0, 3.0])]
    far = compare(flipped, np.array([0.9, 0.5]), (logits, np.array([0.5, -0.5])), "int8")
    assert far.agree == 0 and far.values == pytest.approx(1.0)
    assert [m.split(" ")[0] for m in far.misses()] == ["most", "values", "a"]
    nudged = [row + 2e-3 for row in logits]
    assert compare(nudged, np.zeros(2), (logits, np.zeros(2)), "fp32").misses() == [
        "logits differ by 0.002 > 0.001"
    ]


def _copy_shipped(name: str, folder: Path) -> Path:
    for path in WEIGHTS_DIR.glob(f"{name}.*"):
        shutil.copy(path, folder / path.name)
    return folder / f"{name}.pt"


def _graphs_of(other: str, checkpoint: Path) -> None:
    """``other``'s graphs under ``checkpoint``'s names, described with their own hashes."""
    described = checkpoint.with_suffix(".json")
    info = json.loads(described.read_text())
    for precision in SHIPPED_PRECISIONS:
        graph = checkpoint.with_suffix(f".{precision}.onnx")
        shutil.copy(WEIGHTS_DIR / f"{other}.{precision}.onnx", graph)
        info["graphs"][precision]["sha256"] = file_sha256(graph)
    described.write_text(json.dumps(info))


@pytest.mark.slow
def test_graphs_of_other_weights_are_found_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch", reason="the float32 network needs the train extra")
    checkpoint = _copy_shipped("pretrained", tmp_path)
    _graphs_of("anchor-v1", checkpoint)
    found = graph_agreement(checkpoint)
    assert found["fp32"].logits > 100 * BOUNDS["fp32"].logits  # type: ignore[operator]
    assert all(agreement.misses() for agreement in found.values()), found
    assert export_main(["--check", str(checkpoint)]) == 1
    assert "STALE (fp32: most likely action kept in" in capsys.readouterr().out


def test_a_graph_file_not_the_one_described_is_refused(tmp_path: Path) -> None:
    checkpoint = _copy_shipped("pretrained", tmp_path)
    shutil.copy(WEIGHTS_DIR / "anchor-v1.int8.onnx", checkpoint.with_suffix(".int8.onnx"))
    with pytest.raises(CheckpointError, match=r"pretrained\.int8\.onnx: not the graph"):
        graph_agreement(checkpoint)
    assert export_main(["--check", str(checkpoint)]) == 1


@pytest.mark.slow
def test_the_check_says_ok_for_the_shipped_graphs(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch", reason="the float32 network needs the train extra")
    assert export_main(["--check", str(weights_path("anchor-v1"))]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith(": ok") and "int8: top-1 " in out


def test_a_replaced_checkpoint_is_not_played_with_the_old_graphs(tmp_path: Path) -> None:
    checkpoint = _copy_shipped("pretrained", tmp_path)
    assert shipped_graphs(checkpoint) is not None
    shutil.copy(WEIGHTS_DIR / "anchor-v1.pt", checkpoint)
    assert shipped_graphs(checkpoint) is None
    info = json.loads((WEIGHTS_DIR / "pretrained.json").read_text())
    (tmp_path / "other.json").write_text(json.dumps({**info, "version": 99}))
    shutil.copy(WEIGHTS_DIR / "pretrained.pt", tmp_path / "other.pt")
    assert shipped_graphs(tmp_path / "other.pt") is None  # a description of another format


@pytest.mark.slow
def test_pretrained_plays_the_shipped_graph_as_the_checkpoint_plays() -> None:
    """``pretrained`` plays the shipped graph, ``net:`` the graph it makes from the same
    checkpoint at load: both answer as the float32 network, to their precision's bound.

    Not compared with each other value for value: ``net:``'s int8 graph is calibrated
    on this CPU's float kernels, so it differs from the shipped one from one CPU to the
    next while as good (the same reason as graph_agreement's)."""
    pytest.importorskip("onnx", reason="exporting needs the train extra")
    torch = pytest.importorskip("torch")
    from agents.network.inference import NetworkEvaluator

    leaves = positions(20)
    network, _, _ = load_network(weights_path())
    reference = NetworkEvaluator(network.float(), torch.device("cpu"), amp=False)(leaves)
    for precision in ("auto", "fp32"):
        shipped = make_agent(f"pretrained:sims=0,precision={precision}")
        loaded = make_agent(f"net:path={weights_path()},sims=0,precision={precision}")
        assert isinstance(shipped, NetAgent) and isinstance(loaded, NetAgent)
        assert isinstance(shipped.evaluator, GraphEvaluator)
        assert not isinstance(loaded.evaluator, GraphEvaluator)
        assert shipped.identity() == loaded.identity()
        assert shipped.precision == loaded.precision
        # Per position: the share of most likely actions kept is a rate over
        # graph_agreement's 200 positions, not a bound for 20.
        bound = dataclasses.replace(BOUNDS[shipped.precision], agree=0.0)
        for agent in (shipped, loaded):
            logits, values = agent.evaluator(leaves)
            found = compare(logits, values, reference, agent.precision)
            assert found.misses(bound) == [], (agent.identity(), str(found))
    torch_built = make_agent("pretrained:sims=0,backend=torch")
    assert not isinstance(torch_built.evaluator, GraphEvaluator)  # type: ignore[attr-defined]


def test_every_network_agent_takes_the_same_default_precision() -> None:
    def default(agent: type[NetAgent]) -> object:
        return inspect.signature(agent).parameters["precision"].default

    assert default(NetAgent) == default(PretrainedAgent) == "auto"
    assert make_agent("pretrained:sims=0").precision == "int8"  # type: ignore[attr-defined]


#: Run without the train extra: the base install's agents, commands and the shipped network.
WITHOUT_TRAIN_EXTRA = """
import importlib
import sys
for module in SCRIPT_MODULES:  # every console script but yinsh-train, and the vector envs
    importlib.import_module(module)
from agents import make_agent
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.match import play_match
from agents.play.play_cli import main as play_main

game = play_match([make_agent("pretrained:sims=2", seed=1), make_agent("greedy", seed=2)])
print("result", game.result.value, game.termination.value, game.state.ply)
assert eval_main(["greedy", "random", "--games", "2", "--no-progress"]) == 0
assert play_main(["pretrained:sims=0", "random", "--quiet", "--seed", "3"]) == 0
assert make_agent("pretrained:precision=fp32,sims=0").precision == "fp32"
try:
    make_agent("net:path=CHECKPOINT")
except ValueError as exc:
    print("refused:", exc)
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
print("loaded:", loaded)
"""


def _base_script_modules() -> list[str]:
    """The modules of the console scripts a base install runs (all but ``yinsh-train``)."""
    tomllib = pytest.importorskip("tomllib")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "yinsh-train" in scripts and "yinsh-eval" in scripts
    return [target.partition(":")[0] for name, target in scripts.items() if name != "yinsh-train"]


@pytest.mark.slow
def test_the_base_install_plays_pretrained_without_torch(tmp_path: Path) -> None:
    modules = [*_base_script_modules(), "yinsh_env.vector", "agents.web.server"]
    code = (
        WITHOUT_TRAIN_EXTRA.replace("CHECKPOINT", str(weights_path()))
        .replace("BLOCKED", repr(NOT_IN_BASE_INSTALL))
        .replace("SCRIPT_MODULES", repr(modules))
    )
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_NON_BASE_PACKAGES + code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "result " in done.stdout and "forfeit" not in done.stdout
    assert "needs PyTorch, which is not installed: pip install 'yinsh[train]'" in done.stdout
    assert "loaded: []" in done.stdout


def test_the_blocker_blocks() -> None:
    """The test above can fail: with the blocker, importing torch fails."""
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_NON_BASE_PACKAGES + "import torch"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "No module named 'torch' (blocked)" in done.stderr


def test_the_exporter_refuses_a_missing_checkpoint_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing.pt"
    assert export_main(["--check", str(missing)]) == 1
    assert export_main([str(missing)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("nothing.pt does not exist" in line for line in err)
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_exporting_a_shipped_network_writes_its_graphs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnx", reason="exporting needs the train extra")
    from train.tools import ship_network as pretrained_tool

    monkeypatch.setattr(pretrained_tool, "WEIGHTS", tmp_path / "pretrained.pt")
    assert pretrained_tool.main(["export", str(weights_path("anchor-v1"))]) == 0
    graphs = shipped_graphs(tmp_path / "pretrained.pt")
    assert graphs is not None and graphs.metadata["source"] == str(weights_path("anchor-v1"))
    (tmp_path / "runs").mkdir()
    elsewhere = tmp_path / "runs" / "mine.pt"  # a slim file outside the shipped ones: no graphs
    assert (
        pretrained_tool.main(["export", str(weights_path("anchor-v1")), "--out", str(elsewhere)])
        == 0
    )
    assert elsewhere.is_file() and shipped_graphs(elsewhere) is None
