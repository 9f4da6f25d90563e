"""Cheaper residual blocks: what each candidate tower would gain, through the network's ONNX path.

Usage (from the project root)::

    python -m benchmarks.bench_blocks [--seconds 1] [--rounds 3] [--only NAME ...]

Cheaper blocks (bottleneck or grouped convolutions, fewer channels with more
blocks) are worth having only where they hold strength.  Strength costs a
training run; speed does not, so this measures it first: each candidate is
the shipped network's shape (:class:`agents.network.network.PolicyValueNet`, its
stem and heads) with its tower replaced, exported and run exactly as the
agents run it (:class:`agents.network.onnx_inference.OnnxEvaluator`, one thread, in
float and in int8), and timed in rounds interleaved over the candidates
(the best round, CPU time of this process, pinned to one core).  It prints
each tower's multiply-adds per position, its positions/s at batch 1 (the
agent) and 16 (about self-play's batch), and both as ratios to the shipped
tower (``residual 4x48``) measured in the same run.

A candidate is worth training only where its positions/s ratio is well above
one in int8 at batch 1 (what ``pretrained`` plays): there the network is
about half of a decision (``python -m benchmarks.bench_limit``), so a network
twice as fast makes at most 1.33x the simulations a second.
``python -m benchmarks.distill_blocks`` then trains the fastest candidate
from the shipped network and plays it (docs/studies/speed.md has both
tables).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from agents.network.network import PolicyValueNet, ResidualBlock
from agents.network.onnx_inference import OnnxEvaluator
from benchmarks.bench_limit import multiply_adds
from train.config import NetworkConfig


class BottleneckBlock(nn.Module):
    """1x1 down to ``inner`` channels, two 3x3 convolutions there, 1x1 back up (KataGo's nested
    bottleneck): the 3x3 work at a quarter of the cost when ``inner`` is half the channels."""

    def __init__(self, channels: int, inner: int) -> None:
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(channels, inner, 1, bias=False), nn.BatchNorm2d(inner))
        self.inner = ResidualBlock(inner)
        self.up = nn.Sequential(nn.Conv2d(inner, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x + self.up(self.inner(F.relu(self.down(x)))))


class GroupedBlock(nn.Module):
    """A residual block of two 3x3 convolutions in ``groups`` groups, each followed by a 1x1
    that mixes the groups (ResNeXt's idea; without the mixing the groups never meet)."""

    def __init__(self, channels: int, groups: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for last in (False, True):
            layers += [
                nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=False),
                nn.Conv2d(channels, channels, 1, bias=False),
                nn.BatchNorm2d(channels),
            ]
            if not last:
                layers.append(nn.ReLU())
        self.body = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x + self.body(x))


def _tower(kind: str, blocks: int, channels: int, arg: int) -> nn.Sequential:
    make: Callable[[], nn.Module] = {
        "residual": lambda: ResidualBlock(channels),
        "bottleneck": lambda: BottleneckBlock(channels, arg),
        "grouped": lambda: GroupedBlock(channels, arg),
        "separable": lambda: GroupedBlock(channels, channels),
    }[kind]
    return nn.Sequential(*(make() for _ in range(blocks)))


#: name -> (block kind, blocks, channels, inner channels or groups).
CANDIDATES: dict[str, tuple[str, int, int, int]] = {
    "residual 4x48": ("residual", 4, 48, 0),  # the shipped tower: the reference
    "residual 9x32": ("residual", 9, 32, 0),  # fewer channels, more blocks, the same work
    "residual 4x32": ("residual", 4, 32, 0),
    "residual 3x48": ("residual", 3, 48, 0),
    "bottleneck 4x48 (inner 24)": ("bottleneck", 4, 48, 24),
    "bottleneck 8x48 (inner 24)": ("bottleneck", 8, 48, 24),
    "grouped 4x48 (4 groups)": ("grouped", 4, 48, 4),
    "grouped 4x96 (8 groups)": ("grouped", 4, 96, 8),
    "separable 8x48 (depthwise 3x3 + 1x1)": ("separable", 8, 48, 0),
}
REFERENCE = "residual 4x48"


def candidate(name: str, seed: int = 0, value_hidden: int = 64) -> PolicyValueNet:
    """The shipped network's stem and heads around the candidate tower ``name`` (seeded)."""
    if name not in CANDIDATES:
        raise ValueError(f"tower {name!r}: expected one of {', '.join(CANDIDATES)}")
    kind, blocks, channels, arg = CANDIDATES[name]
    torch.manual_seed(seed)
    model = PolicyValueNet(
        NetworkConfig(blocks=blocks, channels=channels, value_hidden=value_hidden)
    )
    model.tower = _tower(kind, blocks, channels, arg)
    return model.eval()


def _rate(session: Any, chunks: list[np.ndarray], seconds: float) -> float:
    """Positions per CPU second of one round."""
    count, start = 0, time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        for chunk in chunks:
            session.run(None, {"planes": chunk})
        count += sum(len(c) for c in chunks)
    return count / elapsed


def measure(names: list[str], seconds: float, rounds: int) -> dict[tuple[str, str, int], float]:
    """(tower, precision, batch) -> best positions/s over ``rounds`` interleaved rounds."""
    from benchmarks.interleave import ring_move_positions
    from yinsh_env.envs.observation import encode

    planes = np.stack([encode(s) for s in ring_move_positions(64, 0)])
    batches = {b: [planes[i : i + b] for i in range(0, len(planes), b)] for b in (1, 16)}
    sessions = {
        (name, precision): OnnxEvaluator(candidate(name), precision=precision).session
        for name in names
        for precision in ("fp32", "int8")
    }
    best: dict[tuple[str, str, int], float] = {}
    for _ in range(rounds):
        for (name, precision), session in sessions.items():
            for batch, chunks in batches.items():
                key = (name, precision, batch)
                best[key] = max(best.get(key, 0.0), _rate(session, chunks, seconds))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_blocks")
    parser.add_argument("--seconds", type=float, default=1.0, help="per figure per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="candidates (quoted names)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be positive and --rounds at least 1")
    names = [REFERENCE] + [n for n in (args.only or CANDIDATES) if n != REFERENCE]
    for name in names:
        if name not in CANDIDATES:
            parser.error(f"--only {name!r}: expected one of {', '.join(CANDIDATES)}")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    torch.set_num_threads(1)
    rates = measure(names, args.seconds, args.rounds)
    print(
        "| tower | M multiply-adds | fp32 b1 | fp32 b16 | int8 b1 | int8 b16 "
        "| vs 4x48: ops | fp32 b1 | int8 b1 | int8 b16 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    macs = {name: multiply_adds(candidate(name)) for name in names}
    for name in names:
        r = {(p, b): rates[(name, p, b)] for p in ("fp32", "int8") for b in (1, 16)}
        ref = {(p, b): rates[(REFERENCE, p, b)] for p in ("fp32", "int8") for b in (1, 16)}
        print(
            f"| {name} | {macs[name] / 1e6:.1f} | {r['fp32', 1]:,.0f} | {r['fp32', 16]:,.0f} "
            f"| {r['int8', 1]:,.0f} | {r['int8', 16]:,.0f} "
            f"| {macs[REFERENCE] / macs[name]:.2f}x fewer "
            f"| {r['fp32', 1] / ref['fp32', 1]:.2f}x | {r['int8', 1] / ref['int8', 1]:.2f}x "
            f"| {r['int8', 16] / ref['int8', 16]:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
