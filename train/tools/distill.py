"""A supervised start from search games: a teacher's searches, a student fitted to them.

Self-play teaches a network with its own search, so a bigger tower pays twice: its
games are slower and its steps are. Distillation separates the two questions. A
fixed *teacher* (the shipped network by default) plays search games once, every
move searched with ``--sims`` simulations (the trainer's own self-play, so the
targets are the same Gumbel improved policies and outcomes a run learns from); a
*student* of any size, grown from the teacher where its shape allows, is fitted to
those games with the trainer's own loss. Games of the data's last tenth are held
out, and the fit reports on them the policy's cross-entropy to the search targets
and its top-1 agreement: a student that fits the searches better there than the
teacher's own raw policy does has the capacity the teacher lacks. The student is
saved as a slim checkpoint (``net:path=...``; ``init.weights`` of a run that
carries on in self-play).

Usage (from the project root; each step writes only its ``--out``)::

    python -m train.tools.distill generate --teacher pretrained --sims 96 --games 400 \\
        --workers 2 --out runs/distill/games.pt
    python -m train.tools.distill fit --data runs/distill/games.pt --teacher pretrained \\
        --blocks 6 --channels 64 --steps 3000 --out runs/distill/student-6x64.pt

``generate`` writes after every chunk of games (``--chunk``), so a stopped run
keeps what it played, and a second run with the same ``--out`` adds to it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.infra.cli_args import input_file, int_in, number_in, output_file
from agents.network.network import PolicyValueNet
from agents.network.pretrained import weights_path
from train.config import Config, NetworkConfig, config_from_dict
from train.grow import grow_state_dict, why_not_grown
from train.learner import Learner
from train.replay import Batch, ReplayBuffer, make_batch
from train.run_checkpoint import (
    FORMAT,
    VERSION,
    CheckpointError,
    atomic_save,
    load_model,
    read_file,
    slim_checkpoint,
)
from train.selfplay_workers import InProcessExecutor, ProcessExecutor

#: What a games file says it is, beside the checkpoint format (``read_games`` refuses others).
GAMES_KIND = "distillation games"


def teacher_path(teacher: str) -> Path:
    """A shipped network's name (``pretrained``, ``anchor-v1``...) or a checkpoint's path."""
    path = Path(teacher)
    return path if path.exists() else weights_path(teacher)


def generation_config(teacher: Config, sims: int, workers: int, seed: int) -> Config:
    """The teacher's own config, every move a full search of ``sims`` simulations."""
    data = teacher.to_dict()
    data["seed"] = seed
    data["workers"] = workers
    data["backend"] = "process" if workers > 1 else "inprocess"
    data["device"] = "cpu"
    data["inference_precision"] = "int8"  # as ``pretrained`` plays it: 2x the positions/s
    data["search"]["simulations"] = sims
    data["selfplay"]["full_search_prob"] = 1.0
    return config_from_dict(data, source="distillation games")


def read_games(path: str | Path) -> tuple[ReplayBuffer, dict[str, Any]]:
    """The games of a file ``generate`` wrote, and what made them."""
    data = read_file(path, what=GAMES_KIND)
    if data.get("kind") != GAMES_KIND:
        raise CheckpointError(f"{GAMES_KIND} file {path} holds no games (a checkpoint?)")
    buffer = ReplayBuffer(10**9)
    try:
        buffer.load_state_dict(data["replay"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{path} holds no readable games: {exc}") from None
    return buffer, dict(data.get("made_by", {}))


def generate(
    teacher: str, sims: int, games: int, workers: int, out: Path, chunk: int, seed: int
) -> ReplayBuffer:
    """Play ``games`` search games with the teacher, writing ``out`` after every chunk."""
    model, teacher_config, _ = load_model(teacher_path(teacher))
    config = generation_config(teacher_config, sims, workers, seed)
    made_by: dict[str, Any] = {"teacher": teacher, "sims": sims, "seed": seed}
    buffer = ReplayBuffer(10**9)
    if out.exists():
        buffer, earlier = read_games(out)
        if earlier != made_by:
            raise ValueError(f"{out} was made with other settings ({earlier}); use another --out")
    weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    header = {"format": FORMAT, "version": VERSION}
    executor = ProcessExecutor(config) if workers > 1 else InProcessExecutor(config)
    start, before = time.perf_counter(), len(buffer)
    try:
        while buffer.games_added < games:
            first = buffer.games_added
            count = min(chunk, games - first)
            seeds = [
                int(np.random.SeedSequence([seed, first + g]).generate_state(1)[0])
                for g in range(count)
            ]
            result = executor.play(weights, seeds, first)
            for game in result.games:
                buffer.add(game)
            buffer.games_added = first + count
            state = {
                **header,
                "kind": GAMES_KIND,
                "made_by": made_by,
                "replay": buffer.state_dict(),
            }
            atomic_save(state, out)
            rate = (len(buffer) - before) / max(time.perf_counter() - start, 1e-9)
            print(
                f"{buffer.games_added} games, {len(buffer)} positions ({rate:.1f}/s so far)",
                flush=True,
            )
    finally:
        executor.close()
    return buffer


@dataclass
class HeldOut:
    """How well a network fits the held-out searches (the numbers ``fit`` prints)."""

    #: Cross-entropy of the network's policy to the search targets, and that minus
    #: the targets' own entropy (the KL divergence: 0 is a perfect fit).
    policy: float
    policy_kl: float
    #: Share of positions where the network's likeliest action is the search's.
    top1: float
    #: Squared error of the value to the game's result.
    value: float

    def line(self) -> str:
        return (
            f"held-out: policy {self.policy:.4f} (KL {self.policy_kl:.4f}), "
            f"top-1 {self.top1:.3f}, value {self.value:.4f}"
        )


def split_games(buffer: ReplayBuffer, held_out: float) -> tuple[ReplayBuffer, ReplayBuffer]:
    """(training, held-out) buffers, the held-out share of whole games from the end."""
    games = list(buffer.games)
    cut = len(games) - max(1, math.ceil(len(games) * held_out))
    if cut < 1:
        raise ValueError(f"{len(games)} games are too few to hold {held_out:.0%} of them out")
    parts = []
    for chunk in (games[:cut], games[cut:]):
        part = ReplayBuffer(10**9)
        for game in chunk:
            part.add(game)
        parts.append(part)
    return parts[0], parts[1]


def held_out_batches(buffer: ReplayBuffer, size: int = 512) -> list[Batch]:
    """Every held-out position once, untransformed, in batches of ``size``."""
    items = [(game, i) for game in buffer.games for i in range(len(game))]
    return [
        make_batch(items[k : k + size], np.zeros(len(items[k : k + size]), np.int64))
        for k in range(0, len(items), size)
    ]


@torch.no_grad()
def measure(model: PolicyValueNet, batches: list[Batch]) -> HeldOut:
    """:class:`HeldOut` of ``model`` over ``batches`` (evaluation mode)."""
    model.eval()
    sums = np.zeros(4)
    count = 0
    for batch in batches:
        legal = torch.from_numpy(batch.legal)
        target = torch.from_numpy(batch.policy)
        out = model(torch.from_numpy(batch.planes), legal)
        logp = torch.log_softmax(out.policy.float(), dim=1)
        logp = torch.where(legal, logp, torch.zeros_like(logp))
        logt = torch.where(target > 0, target.log(), torch.zeros_like(target))
        masked = torch.where(legal, out.policy.float(), torch.full_like(logp, -torch.inf))
        sums += [
            float(-(target * logp).sum()),
            float((target * (logt - logp)).sum()),
            float((masked.argmax(1) == target.argmax(1)).sum()),
            float(((out.value.float() - torch.from_numpy(batch.value)) ** 2).sum()),
        ]
        count += len(batch.value)
    return HeldOut(*(float(x) for x in sums / max(count, 1)))


def student_config(
    teacher: Config, blocks: int, channels: int, lr: float, steps: int, search_value: float
) -> Config:
    """The teacher's config with the student's tower, the fit's learning rate and value target.

    Each game gives one result to dozens of positions, so a value fitted to results
    alone overfits a few thousand games within an epoch; the teacher's search value
    (``search_value`` of the target) is a new number at every position.
    """
    data = teacher.to_dict()
    data["network"]["blocks"], data["network"]["channels"] = blocks, channels
    data["network"]["opponent_policy"] = False
    data["optim"].update(
        lr=lr,
        lr_schedule="cosine",
        warmup_steps=min(100, steps // 10),
        opponent_policy_weight=0.0,
        search_value_weight=search_value,
    )
    return config_from_dict(data, source="student")


def student_from(
    teacher: PolicyValueNet, small: NetworkConfig, big: NetworkConfig
) -> PolicyValueNet:
    """A ``big`` network with the teacher's outputs (grown), or the teacher's own copy."""
    student = PolicyValueNet(big)
    state = {k: v for k, v in teacher.state_dict().items() if not k.startswith("opponent")}
    plain = NetworkConfig(**{**small.__dict__, "opponent_policy": False})
    if plain == big:
        student.load_state_dict(state)
        return student
    reason = why_not_grown(plain, big)
    if reason is not None:
        raise ValueError(f"the teacher's network cannot grow into the student's: {reason}")
    student.load_state_dict(grow_state_dict(state, plain, big, seed=0))
    return student


def fit(
    data: Path,
    teacher: str,
    blocks: int,
    channels: int,
    steps: int,
    batch_size: int,
    lr: float,
    search_value: float,
    report: int,
    out: Path,
    seed: int,
) -> HeldOut:
    """Fit a student to the games of ``data``; print the held-out fit as it goes; save it."""
    buffer, made_by = read_games(data)
    train_part, held = split_games(buffer, 0.1)
    batches = held_out_batches(held)
    model, teacher_config, teacher_data = load_model(teacher_path(teacher))
    config = student_config(teacher_config, blocks, channels, lr, steps, search_value)
    print(
        f"{len(train_part)} positions to learn, {len(held)} held out "
        f"({made_by}); teacher {measure(model, batches).line()}",
        flush=True,
    )
    student = student_from(model, teacher_config.network, config.network)
    torch.manual_seed(seed)
    learner = Learner(student, config.optim, steps, torch.device("cpu"))
    rng = np.random.default_rng(seed)
    start = time.process_time()
    result = measure(student, batches)
    for step in range(1, steps + 1):
        learner.train_step(train_part.sample(batch_size, rng, True))
        if step % report == 0 or step == steps:
            result = measure(student, batches)
            print(
                f"step {step}: {result.line()} ({time.process_time() - start:.0f} CPU s)",
                flush=True,
            )
    metadata = {
        "distilled": {
            **made_by,
            "data": str(data),
            "steps": steps,
            "batch_size": batch_size,
            "lr": lr,
            "search_value_weight": search_value,
            "held_out": result.__dict__,
        }
    }
    atomic_save(
        slim_checkpoint(
            {
                "iteration": int(teacher_data.get("iteration", 0)),
                "config": config.to_dict(),
                "model": student.state_dict(),
            },
            metadata,
        ),
        out,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    summary = (__doc__ or "").split("\n\n")[0]
    parser = argparse.ArgumentParser(prog="python -m train.tools.distill", description=summary)
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="play the teacher's search games")
    gen.add_argument("--teacher", default="pretrained", help="shipped name or checkpoint")
    gen.add_argument("--sims", type=int_in(1, 100_000), default=96)
    gen.add_argument("--games", type=int_in(1, 10**7), required=True)
    gen.add_argument("--workers", type=int_in(1, 1024), default=1)
    gen.add_argument("--chunk", type=int_in(1, 10**5), default=32)
    gen.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    gen.add_argument("--out", type=output_file((".pt",), parents=True), required=True)
    fitting = commands.add_parser("fit", help="fit a student to the games")
    fitting.add_argument("--data", type=input_file, required=True)
    fitting.add_argument("--teacher", default="pretrained", help="shipped name or checkpoint")
    fitting.add_argument("--blocks", type=int_in(1, 64), default=4)
    fitting.add_argument("--channels", type=int_in(8, 1024), default=48)
    fitting.add_argument("--steps", type=int_in(1, 10**7), default=2000)
    fitting.add_argument("--batch-size", type=int_in(1, 65536), default=256)
    fitting.add_argument("--lr", type=number_in(0, 1, above=True), default=5e-4)
    fitting.add_argument(
        "--search-value-weight",
        type=number_in(0, 1),
        default=0.5,
        help="share of the teacher's search value in the value target (the rest: the result)",
    )
    fitting.add_argument("--report", type=int_in(1, 10**7), default=250)
    fitting.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    fitting.add_argument("--threads", type=int_in(1, 1024), default=1, help="torch threads")
    fitting.add_argument("--out", type=output_file((".pt",), parents=True), required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "generate":
            generate(
                args.teacher,
                args.sims,
                args.games,
                args.workers,
                Path(args.out),
                args.chunk,
                args.seed,
            )
        else:
            torch.set_num_threads(args.threads)
            fit(
                Path(args.data),
                args.teacher,
                args.blocks,
                args.channels,
                args.steps,
                args.batch_size,
                args.lr,
                args.search_value_weight,
                args.report,
                Path(args.out),
                args.seed,
            )
    except (ValueError, OSError) as exc:
        print(f"python -m train.tools.distill: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
