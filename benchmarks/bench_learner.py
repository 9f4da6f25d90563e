"""The learner's gradient step in float and in bfloat16 autocast: its CPU cost, and what it learns.

Usage (from the project root; the files are only read)::

    python -m benchmarks.bench_learner --replay RUN/checkpoints/iter_N.replay.pt \
        [--network RUN/checkpoints/iter_N.pt] [--steps 400] [--rounds 8]

A training iteration is self-play, then ``optim.steps_per_iteration`` gradient
steps; on the 2-core machine the steps took about half of an iteration's CPU.
``amp: true`` runs the network's forward pass (and so its backward) under
``torch.autocast`` in bfloat16, where the CPU has bfloat16 instructions
(``avx512_bf16``, AMX), keeping float master weights and float losses.

From the same checkpoint, two learners take the same ``--steps`` steps on the
same batches of the replay window's first 90% of games (whole games), one per
precision, their steps interleaved in ``--rounds`` rounds so that a loaded
machine slows both alike.  Printed: each one's CPU milliseconds a step (this
process's clock, one thread), their ratio, and each resulting network's
policy cross-entropy, policy KL and value loss on the held-out 10% of games
(in float, no symmetry), beside the starting network's.  The held-out losses
say whether the cheaper step learns the same; the ratio says what it saves.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import time
from pathlib import Path

import numpy as np
import torch

from agents.network.network import PolicyValueNet
from benchmarks.distill_blocks import split_replay
from train.config import OptimConfig
from train.learner import Learner
from train.replay import Batch, ReplayBuffer, make_batch
from train.run_checkpoint import load_model

PRECISIONS = {"float32": False, "bfloat16 autocast": True}


def held_out_losses(model: PolicyValueNet, buffer: ReplayBuffer, count: int) -> dict[str, float]:
    """Policy cross-entropy, policy KL and value loss on ``count`` held-out positions, in float."""
    items = [(g, i) for g in buffer.games for i in range(len(g))][:count]
    batch = make_batch(items, np.zeros(len(items), np.int64))
    learner = Learner(model, OptimConfig(), 1, torch.device("cpu"))
    model.eval()
    with torch.no_grad():
        losses = learner.losses(batch)
    return {k: float(losses[k]) for k in ("policy", "policy_kl", "value")}


def batches(buffer: ReplayBuffer, steps: int, size: int, seed: int) -> list[Batch]:
    rng = np.random.default_rng(seed)
    return [buffer.sample(size, rng) for _ in range(steps)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replay", required=True, help="a checkpoint's .replay.pt file")
    parser.add_argument(
        "--network", help="checkpoint to start from (default: the one beside --replay)"
    )
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-4, help="constant learning rate")
    parser.add_argument("--held-out", type=int, default=4096, help="held-out positions scored")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < args.rounds or args.rounds < 1:
        parser.error("--steps must be at least --rounds, and --rounds at least 1")
    torch.set_num_threads(1)
    network = args.network or str(Path(args.replay).with_suffix("").with_suffix(".pt"))
    start, _, _ = load_model(network)
    train_games, held_out = split_replay(args.replay)
    print(
        f"network {network}; {len(train_games)} training and {len(held_out)} held-out "
        f"positions; {args.steps} steps of {args.batch} at lr {args.lr:g}, one thread"
    )
    optim = OptimConfig(lr=args.lr, lr_schedule="constant", warmup_steps=0)
    work = batches(train_games, args.steps, args.batch, args.seed)
    learners = {}
    for name, amp in PRECISIONS.items():
        torch.manual_seed(args.seed)
        learners[name] = Learner(copy.deepcopy(start), optim, args.steps, torch.device("cpu"), amp)
    cpu = dict.fromkeys(PRECISIONS, 0.0)
    bounds = np.linspace(0, args.steps, args.rounds + 1).astype(int)
    for lo, hi in itertools.pairwise(bounds):
        for name, learner in learners.items():
            begin = time.process_time()
            for batch in work[lo:hi]:
                learner.train_step(batch)
            cpu[name] += time.process_time() - begin
    rows = [("start", None, held_out_losses(copy.deepcopy(start), held_out, args.held_out))]
    for name, learner in learners.items():
        rows.append((name, cpu[name], held_out_losses(learner.model, held_out, args.held_out)))
    reference = cpu["float32"]
    print(f"{'':20} {'ms/step':>8} {'ratio':>6} {'policy':>8} {'KL':>7} {'value':>7}")
    for name, seconds, losses in rows:
        timing = "" if seconds is None else f"{1000 * seconds / args.steps:8.1f}"
        ratio = "" if seconds is None else f"{reference / seconds:6.2f}"
        print(
            f"{name:20} {timing:>8} {ratio:>6} {losses['policy']:8.4f} "
            f"{losses['policy_kl']:7.4f} {losses['value']:7.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
