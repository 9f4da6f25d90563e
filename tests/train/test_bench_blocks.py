"""Issue 22's experiment benchmarks: bench_blocks' candidate towers, distill_blocks' warm start
and loss, bench_int8's dynamic quantisation, bench_limit's CPU-timed splits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import random_positions, replay_file

from agents.network.pretrained import weights_path
from benchmarks import bench_blocks, bench_limit, distill_blocks
from train.run_checkpoint import load_model
from yinsh_env import State
from yinsh_env.envs.observation import GRID, encode

CELLS = GRID * GRID
pytestmark = pytest.mark.usefixtures("torch_one_thread")


def needs_onnx() -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')


@pytest.fixture(scope="module")
def teacher() -> torch.nn.Module:
    return load_model(weights_path())[0]


def test_every_candidate_tower_builds_and_answers_in_the_networks_shapes() -> None:
    planes = torch.from_numpy(np.stack([encode(s) for s in random_positions(3)]))
    for name in bench_blocks.CANDIDATES:
        out = bench_blocks.candidate(name)(planes)
        assert out.policy.shape == (3, 2142) and out.value.shape == (3,), name


def test_an_unknown_tower_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'residual 5x5'"):
        bench_blocks.candidate("residual 5x5")
    with pytest.raises(SystemExit):
        bench_blocks.main(["--only", "residual 5x5"])


def test_multiply_adds_count_each_towers_convolutions() -> None:
    ref = bench_limit.multiply_adds(bench_blocks.candidate("residual 4x48"))
    fewer = bench_limit.multiply_adds(bench_blocks.candidate("residual 3x48"))
    assert ref - fewer == 2 * CELLS * 48 * 48 * 9  # one block: two 3x3 convolutions
    bottleneck = bench_limit.multiply_adds(bench_blocks.candidate("bottleneck 4x48 (inner 24)"))
    block = CELLS * (48 * 24 + 2 * 24 * 24 * 9 + 24 * 48)
    assert ref - bottleneck == 4 * (2 * CELLS * 48 * 48 * 9 - block)
    grouped = bench_limit.multiply_adds(bench_blocks.candidate("grouped 4x48 (4 groups)"))
    assert ref - grouped == 4 * 2 * (CELLS * 48 * 48 * 9 - CELLS * (48 * 48 * 9 // 4 + 48 * 48))


@pytest.mark.slow
def test_the_speed_table_compares_each_tower_with_the_shipped_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    needs_onnx()
    assert bench_blocks.main(["--seconds", "0.01", "--rounds", "1", "--only", "residual 3x48"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| residual")]
    assert [row.split(" | ")[0] for row in rows] == ["| residual 4x48", "| residual 3x48"]
    assert "| 1.00x fewer | 1.00x | 1.00x | 1.00x |" in rows[0]
    assert "| 1.30x fewer |" in rows[1]


def test_a_warm_student_takes_every_teacher_weight_that_fits(teacher: torch.nn.Module) -> None:
    student = distill_blocks.warm_student("residual 3x48", teacher)
    ours, theirs = student.state_dict(), teacher.state_dict()
    assert all(torch.equal(ours[k], theirs[k]) for k in ours if not k.startswith("tower.3"))
    assert not any(k.startswith("tower.3") for k in ours)


def test_a_warm_bottleneck_tower_starts_as_the_identity(teacher: torch.nn.Module) -> None:
    student = distill_blocks.warm_student("bottleneck 4x48 (inner 24)", teacher).eval()
    assert torch.equal(student.stem[0].weight, teacher.stem[0].weight)
    x = torch.relu(torch.randn(2, 48, GRID, GRID))
    with torch.no_grad():
        assert torch.allclose(student.tower(x), x)


def test_the_distillation_loss_of_the_teacher_itself_is_its_policys_entropy(
    teacher: torch.nn.Module,
) -> None:
    states = random_positions(4, seed=3)
    planes = torch.from_numpy(np.stack([encode(s) for s in states]))
    legal = torch.zeros(4, 2142, dtype=torch.bool)
    for i, s in enumerate(states):
        legal[i, s.legal_actions()] = True
    with torch.no_grad():
        loss = distill_blocks.distill_loss(teacher, teacher, planes, legal)
        p = torch.softmax(teacher(planes, legal).policy, dim=1)
        entropy = -(p * torch.log(p.clamp_min(1e-30))).sum(dim=1).mean()
    assert float(loss) == pytest.approx(float(entropy), rel=1e-5)


def test_a_replay_splits_by_whole_games_a_tenth_held_out(tmp_path: Path) -> None:
    training, held_out = distill_blocks.split_replay(str(replay_file(tmp_path)))
    assert (len(training.games), len(held_out.games)) == (9, 1)
    assert (len(training), len(held_out)) == (54, 6)


@pytest.mark.slow
def test_distilling_saves_a_student_that_plays_as_an_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    needs_onnx()
    out = tmp_path / "student.pt"
    args = ["--replay", str(replay_file(tmp_path)), "--student", "residual 3x48"]
    assert distill_blocks.main([*args, "--steps", "2", "--batch", "4", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| teacher int8 |" in text and "| student int8 |" in text
    agent = distill_blocks.student_agent(seed=0, path=str(out), sims=4, precision="fp32")
    state = State()
    assert agent.act(state) in state.legal_actions()
    assert agent.files() == [str(out)]


def test_distilling_refuses_bad_numbers_and_a_folder_for_out(tmp_path: Path) -> None:
    args = ["--replay", "x.pt", "--student", "residual 3x48"]
    with pytest.raises(SystemExit):
        distill_blocks.main([*args, "--steps", "0", "--out", str(tmp_path / "s.pt")])
    with pytest.raises(SystemExit):
        distill_blocks.main([*args, "--out", str(tmp_path)])


def test_cpu_timed_passes_calls_through_and_adds_their_time() -> None:
    calls: list[int] = []

    def work(n: int) -> int:
        calls.append(n)
        if n < 0:
            raise ValueError("negative")
        return sum(range(n))

    timed = bench_limit.CpuTimed(work)
    assert timed(10) == 45 and timed.run(4) == 6
    with pytest.raises(ValueError):
        timed(-1)
    assert calls == [10, 4, -1] and timed.seconds >= 0.0


def test_dynamic_int8_quantises_the_convolutions_and_stays_close_to_float() -> None:
    needs_onnx()
    import onnx

    from agents.network.onnx_inference import export_onnx
    from benchmarks import bench_int8

    model = bench_blocks.candidate("residual 3x48")
    graph = export_onnx(model)
    dynamic = bench_int8.dynamic_int8(graph)
    ops = {n.op_type for n in onnx.load_from_string(dynamic).graph.node}
    assert "ConvInteger" in ops and "DynamicQuantizeLinear" in ops
    planes = torch.from_numpy(np.stack([encode(s) for s in random_positions(8, seed=2)]))
    (_, exact), (_, fast) = bench_int8.runner(graph), bench_int8.runner(dynamic)
    (p, v), (q, w) = exact(planes), fast(planes)
    # Dynamic quantisation's error on values: 3e-4 with AMX and on AVX2 (qemu -cpu Haswell).
    assert torch.allclose(v, w, atol=0.05) and not torch.equal(p, q)
