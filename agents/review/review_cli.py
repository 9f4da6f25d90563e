"""``yinsh-review``: review game records with an agent, into JSON, annotated records and graphs.

Examples::

    yinsh-review game.sgf --agent pretrained --out reviews/
    yinsh-review games/*.yinsh games/*.json --agent mcts:sims=400 --workers 2

For each record ``NAME.*`` it writes ``DIR/NAME.review.json``,
``DIR/NAME.review.yinsh`` and ``DIR/NAME.png`` (:mod:`agents.review.output`)
and prints each player's accuracy, mean loss and marks.  Every record is read
before the agent is built and before anything is written, so a malformed
record is reported (naming its file and line) with nothing written; two
records with the same name are refused likewise, and so is a review file
already in ``DIR`` (an earlier review, a link): reviews are never replaced.
The exit status is 0 when every review is complete, 1 when one stopped early
(the agent failed, or ``--time-limit`` passed: its files are written with the
decisions reviewed so far, and a line says where it stopped), 2 for bad
arguments or records, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.evaluation.match_worker import registry_snapshot
from agents.infra.cli_args import agent_spec, input_file, int_in, number_in, output_dir
from agents.infra.worker_pool import exit_on_signals, guarded_pool, kill_workers
from agents.learned import MODEL_FILES_NOTE
from agents.params import MAX_SEED
from agents.review.output import outputs, save_review
from agents.review.reviewer import Review, check_values, review_record
from agents.spec import AgentSpecError, available_agents, make_agent, register_agent
from yinsh_env import GameRecord, RecordError, load_record

MAX_WORKERS = 256
MAX_RECORDS = 100_000


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yinsh-review",
        description=(
            "Review game records (.yinsh, boardspace .sgf, BGA .json) with an agent: its value "
            "before every decision, its preferred action, each decision's loss, inaccuracies, "
            "mistakes and blunders marked, and a summary per player."
        ),
        epilog=f"agents: {', '.join(available_agents())}; those with a value review "
        f"(mcts, pretrained, net).  {MODEL_FILES_NOTE}",
    )
    parser.add_argument("records", nargs="+", metavar="RECORD", type=input_file)
    parser.add_argument(
        "--agent", required=True, type=agent_spec, metavar="SPEC", help="e.g. pretrained"
    )
    parser.add_argument(
        "--out",
        type=output_dir,
        default=Path("."),
        metavar="DIR",
        help="folder for the files (created if missing; default: here)",
    )
    parser.add_argument(
        "--workers", "-w", type=int_in(1, MAX_WORKERS), default=1, help="records reviewed at once"
    )
    parser.add_argument("--seed", type=int_in(0, MAX_SEED), default=0, help="the agent's seed")
    parser.add_argument(
        "--time-limit",
        type=number_in(0, 1e7, above=True),
        metavar="SECONDS",
        help="stop a record's review after this long (what was reviewed is kept)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def load_all(paths: Sequence[Path], out: Path = Path(".")) -> list[GameRecord]:
    """Every record, or RecordError naming the first bad one (nothing is written).

    Also refused: two records whose reviews would write the same files, a
    record that another's review (in ``out``) would overwrite, and a review
    file already in ``out`` (an earlier review, or a link planted there): it is
    never replaced.
    """
    if len(paths) > MAX_RECORDS:
        raise RecordError(f"{len(paths)} records (at most {MAX_RECORDS})")
    names: dict[str, Path] = {}
    for path in paths:
        clash = names.setdefault(path.stem, path)
        if clash != path:
            raise RecordError(f"{clash} and {path} would write the same files ({path.stem}.*)")
    inputs = {path.resolve(): path for path in paths}
    for path in paths:
        for written in outputs(path, out).values():
            if written.resolve() in inputs:
                raise RecordError(
                    f"the review of {path} would overwrite the record {inputs[written.resolve()]}"
                    " (give another --out)"
                )
    for path in paths:
        for written in outputs(path, out).values():
            if os.path.lexists(written):
                raise RecordError(
                    f"{written} already exists: a review is never replaced"
                    " (give another --out, or move it away)"
                )
    records = [load_record(path) for path in paths]
    for path, record in zip(paths, records):
        if not record.actions:
            raise RecordError(f"{path}: no moves to review")
    return records


def report(name: str, review: Review) -> str:
    """A few lines per record: completeness, then each player's figures."""
    state = "complete" if review.complete else f"stopped at ply {review.stopped_at}"
    lines = [f"{name}: {len(review.decisions)} of {review.total} decisions ({state})"]
    lines.append(
        f"  {'':6}{'player':24}{'accuracy':>9}{'mean loss':>10}"
        f"{'inaccuracies':>13}{'mistakes':>9}{'blunders':>9}"
    )
    for side, row in review.summary().items():
        accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.1f}"
        loss = "-" if row["mean_loss"] is None else f"{row['mean_loss']:.3f}"
        lines.append(
            f"  {side:6}{str(row['player'])[:23]:24}{accuracy:>9}{loss:>10}"
            f"{row['inaccuracy']:>13}{row['mistake']:>9}{row['blunder']:>9}"
        )
    if not review.complete:
        lines.append(f"  stopped: {review.reason}")
    return "\n".join(lines)


# --- reviewing, here or in worker processes ------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(spec: str, registry: dict[str, Any]) -> None:
    for name, factory in registry.items():  # agents registered at run time travel too
        register_agent(name, factory, replace=False)
    _WORKER["spec"] = spec


def _worker_review(record: GameRecord, options: dict[str, Any]) -> Review:
    agent = _WORKER.get("agent")
    if agent is None:
        agent = _WORKER["agent"] = make_agent(_WORKER["spec"])
    return review_record(record, agent, **options)


class WorkerDied(RuntimeError):
    """A review worker process died: the records ``left`` (indices) were not reviewed."""

    def __init__(self, spec: str, left: list[int]) -> None:
        super().__init__(f"a worker process reviewing with {spec} died")
        self.spec, self.left = spec, left


def review_all(
    records: list[GameRecord],
    spec: str,
    workers: int,
    options: dict[str, Any],
    done: Callable[[int, Review], None],
    progress: Callable[[int], None],
) -> None:
    """Review every record (in ``workers`` processes if more than 1); ``done(i, review)``."""
    if workers <= 1 or len(records) <= 1:
        agent = make_agent(spec)
        try:
            for i, record in enumerate(records):
                done(i, review_record(record, agent, progress=progress, **options))
        finally:
            agent.close()
        return
    pool = guarded_pool(min(workers, len(records)), _init_worker, (spec, registry_snapshot([spec])))
    try:
        pending: dict[Future[Review], int] = {
            pool.submit(_worker_review, record, options): i for i, record in enumerate(records)
        }
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                i = pending.pop(future)
                try:
                    review = future.result()
                except BrokenProcessPool:  # an agent's os._exit, a native crash: no review
                    raise WorkerDied(spec, sorted([i, *pending.values()])) from None
                progress(review.total + 1)
                done(i, review)
    except BaseException:
        kill_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _check_agent(spec: str, records: list[GameRecord]) -> None:
    """Refuse an agent without values, or of another variant, before any review."""
    agent: Agent = make_agent(spec)
    try:
        for rings in sorted({r.rings_to_win for r in records}):
            check_values(agent, rings)
    finally:
        agent.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    exit_on_signals()
    try:
        records = load_all(args.records, args.out)
        _check_agent(args.agent, records)
    except (RecordError, AgentSpecError, ValueError) as exc:
        print(f"yinsh-review: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    plot = _has_matplotlib()
    if not plot:
        print("yinsh-review: no value graphs (they need matplotlib: pip install 'yinsh[plot]')")
    stopped: list[str] = []
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        total = sum(len(r.actions) + 1 for r in records)
        bar = tqdm(total=total, unit="position", desc="review", dynamic_ncols=True)

    def done(i: int, review: Review) -> None:
        path = args.records[i]
        written = save_review(records[i], review, outputs(path, args.out), plot)
        text = report(path.name, review) + f"\n  written: {', '.join(map(str, written))}"
        if bar is not None:
            bar.write(text)
        else:
            print(text)
        if not review.complete:
            stopped.append(f"{path}: stopped at ply {review.stopped_at}: {review.reason}")

    options = {"seed": args.seed, "time_limit": args.time_limit}
    try:
        review_all(
            records,
            args.agent,
            args.workers,
            options,
            done,
            (lambda n: bar.update(n)) if bar is not None else (lambda n: None),
        )
    except KeyboardInterrupt:
        print("yinsh-review: interrupted", file=sys.stderr)
        return 130
    except WorkerDied as exc:  # the reviews done so far are written
        left = ", ".join(str(args.records[i]) for i in exc.left)
        print(f"yinsh-review: stopped: {exc}; not reviewed: {left}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"yinsh-review: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    for line in stopped:
        print(f"yinsh-review: {line}", file=sys.stderr)
    return 1 if stopped else 0


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
