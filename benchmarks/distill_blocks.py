"""A cheaper tower trained from the shipped network: does it hold strength?

Usage (from the project root; the replay file is only read)::

    python -m benchmarks.distill_blocks --replay RUN/checkpoints/iter_N.replay.pt \\
        --student "bottleneck 4x48 (inner 24)" --steps 1500 --out runs/blocks/bottleneck.pt
    python -m agents.evaluation.eval_cli pretrained:sims=16 --games 200 --workers 2 \\
        "py:benchmarks.distill_blocks:student_agent,path=runs/blocks/bottleneck.pt,sims=16"

``python -m benchmarks.bench_blocks`` says which candidate towers run faster
than the shipped one; this trains one of them by distillation, the cheapest
honest test of its strength: the student (a :func:`benchmarks.bench_blocks.candidate`
tower between the shipped network's stem and heads, whose weights it starts
from wherever the shapes agree) learns the shipped network's policy over the
legal actions (cross-entropy) and its value (squared error) on the positions
of a training run's replay window, each under a random board symmetry, on one
thread for ``--steps`` batches.  Games of the window's last tenth are held
out: on them it prints the student's top-1 agreement with the teacher, the
policy's KL divergence and the value's squared error, in float and in int8,
beside the teacher's own int8 graph against its float one (the scale: what
the shipped int8 network already gives up).  ``student_agent`` plays a saved
student as ``pretrained`` plays the shipped network (``py:`` spec).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.network.agent import NetAgent
from agents.network.network import PolicyValueNet
from agents.network.onnx_inference import OnnxEvaluator
from agents.network.pretrained import weights_path
from agents.search.cache import EvaluationCache
from benchmarks.bench_blocks import CANDIDATES, BottleneckBlock, candidate
from train.replay import ReplayBuffer, make_batch
from train.run_checkpoint import load_model
from train.tools.distill import split_games
from yinsh_env.util.atomic_write import write_file


def split_replay(path: str, held_out: float = 0.1) -> tuple[ReplayBuffer, ReplayBuffer]:
    """The replay window of ``path`` as (training, held-out) buffers, by whole games."""
    data = torch.load(path, map_location="cpu", weights_only=True)
    games = data.get("replay", data)
    whole = ReplayBuffer(1)
    whole.load_state_dict(games)
    return split_games(whole, held_out)


def warm_student(name: str, teacher: PolicyValueNet) -> PolicyValueNet:
    """Candidate ``name`` with every teacher weight whose name and shape agree (stem, heads,
    residual blocks that fit); a bottleneck block starts as the identity."""
    student = candidate(name)
    own = student.state_dict()
    fits = {k: v for k, v in teacher.state_dict().items() if k in own and own[k].shape == v.shape}
    own.update(fits)
    student.load_state_dict(own)
    for module in student.modules():
        if isinstance(module, BottleneckBlock):
            torch.nn.init.zeros_(module.up[1].weight)
    return student


def distill_loss(
    student: PolicyValueNet, teacher: PolicyValueNet, planes: torch.Tensor, legal: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy to the teacher's legal policy plus the value's squared error."""
    with torch.no_grad():
        target = teacher(planes, legal)
    out = student(planes, legal)
    p = F.softmax(target.policy, dim=1)
    logp = F.log_softmax(out.policy, dim=1).masked_fill(~legal, 0.0)
    return -(p * logp).sum(dim=1).mean() + F.mse_loss(out.value, target.value)


def agreement(
    run: Any, teacher: PolicyValueNet, buffer: ReplayBuffer, count: int = 2048
) -> dict[str, float]:
    """Top-1 agreement, policy KL and value squared error of ``run`` (planes -> logits, values)
    against the float teacher on ``count`` held-out positions (no symmetry)."""
    items = [(g, i) for g in buffer.games for i in range(len(g))][:count]
    batch = make_batch(items, np.zeros(len(items), np.int64))
    planes, legal = torch.from_numpy(batch.planes), torch.from_numpy(batch.legal)
    with torch.no_grad():
        target = teacher(planes, legal)
        logits, values = run(planes)
        logits = logits.masked_fill(~legal, float("-inf"))
        p = F.softmax(target.policy, dim=1)
        kl = p * (F.log_softmax(target.policy, 1) - F.log_softmax(logits, 1))
        kl = kl.masked_fill(~legal, 0.0).sum(dim=1).mean()
        top1 = (logits.argmax(1) == target.policy.argmax(1)).float().mean()
        mse = F.mse_loss(values, target.value)
    return {"top1": float(top1), "kl": float(kl), "value_mse": float(mse)}


def _onnx(model: PolicyValueNet, precision: str) -> Any:
    return OnnxEvaluator(model, precision=precision).forward


def train(
    student: PolicyValueNet,
    teacher: PolicyValueNet,
    buffer: ReplayBuffer,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
) -> float:
    """``steps`` Adam steps (cosine-decayed ``lr``); returns the CPU seconds they took."""
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.AdamW(student.parameters(), lr=lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    student.train()
    start = time.process_time()
    for step in range(1, steps + 1):
        sample = buffer.sample(batch, rng)
        loss = distill_loss(
            student, teacher, torch.from_numpy(sample.planes), torch.from_numpy(sample.legal)
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if step % 100 == 0 or step == steps:
            print(f"step {step}: loss {loss.item():.4f}, {time.process_time() - start:.0f} CPU-s")
    student.eval()
    return time.process_time() - start


def student_agent(
    seed: int | None = None,
    path: str = "",
    sims: int = 0,
    time: float = 0.0,
    precision: str = "int8",
) -> NetAgent:
    """``pretrained``'s agent (search settings, cache) playing the saved student at ``path``."""
    data = torch.load(path, map_location="cpu", weights_only=True)
    student = candidate(data["tower"])
    student.load_state_dict(data["model"])
    agent = NetAgent(seed, str(weights_path()), sims, precision="fp32", time=time)
    agent.evaluator = OnnxEvaluator(student.eval(), precision=precision)
    agent.precision = agent.evaluator.precision
    agent.cache = EvaluationCache(agent.evaluator)
    agent.checkpoint = path
    return agent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.distill_blocks")
    parser.add_argument("--replay", required=True, help="a run's iter_N.replay.pt (read only)")
    parser.add_argument("--student", required=True, choices=list(CANDIDATES))
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="where the student is saved (.pt)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch < 1 or args.lr <= 0:
        parser.error("--steps and --batch must be at least 1, --lr positive")
    out = Path(args.out)
    if out.is_dir():
        parser.error(f"--out {args.out!r} is a folder")
    if not Path(args.replay).is_file():
        parser.error(f"--replay {args.replay!r}: no such file")
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    teacher, _, _ = load_model(weights_path())
    training, held_out = split_replay(args.replay)
    print(f"replay: {len(training)} training positions, {len(held_out)} held out")
    student = warm_student(args.student, teacher)
    start = agreement(student_run(student), teacher, held_out)
    print(f"student {args.student!r} at the start: {start}")
    seconds = train(student, teacher, training, args.steps, args.batch, args.lr, args.seed)
    print(f"trained {args.steps} steps of {args.batch} in {seconds / 60:.1f} CPU-minutes")
    print("| network | top-1 agreement | KL | value MSE |")
    print("|---|---|---|---|")
    metrics: dict[str, dict[str, float]] = {}
    for label, model, precision in (
        ("teacher int8", teacher, "int8"),
        ("student fp32", student, "fp32"),
        ("student int8", student, "int8"),
    ):
        m = agreement(_onnx(model, precision), teacher, held_out)
        metrics[label] = m
        print(f"| {label} | {m['top1']:.3f} | {m['kl']:.4f} | {m['value_mse']:.4f} |")
    out.parent.mkdir(parents=True, exist_ok=True)
    saved = {
        "tower": args.student,
        "model": student.state_dict(),
        "steps": args.steps,
        "cpu_seconds": seconds,
        "metrics": metrics,
    }
    write_file(out, lambda handle: torch.save(saved, handle))
    print(f"saved {out}")
    return 0


def student_run(model: PolicyValueNet) -> Any:
    """``model`` in PyTorch as ``agreement`` runs it: planes -> (logits, values)."""

    def run(planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        model.eval()
        out = model(planes)
        return out.policy, out.value

    return run


if __name__ == "__main__":
    raise SystemExit(main())
