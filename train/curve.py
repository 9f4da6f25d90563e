"""Strength against training time: one Elo fit over a whole run, against fixed anchors.

The in-run ``eval/elo`` of an iteration comes from the fit made at that
iteration, so early values shift as later games arrive.  This module refits
every pairing the run ever played (kept in the newest checkpoint's history)
once, so every evaluated checkpoint and every baseline anchor (``random`` at
0, ``greedy``, ``alphabeta``, ...) sits on one scale, and puts each
checkpoint at the training time it took to reach it: the CPU seconds of
self-play and learning that the trainer records (``time/cpu_s`` in
``metrics.jsonl``; all processes: trainer, self-play workers or Ray actors),
or for runs that predate it the wall-clock seconds of self-play and learning.
Evaluation is excluded either way, so the curve does not depend on how often
a run evaluates.

Usage::

    python -m train.curve runs/long                 # the table, and where each anchor is crossed
    python -m train.curve runs/long --out curve.png # the plot too (needs matplotlib)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.cli_args import image_file, input_dir, output_file

from .checkpoint import CheckpointError, latest_checkpoint, read_file
from .evaluate import checkpoint_name, ladder_ratings
from .trainer import METRICS_NAME


@dataclass(frozen=True)
class CurvePoint:
    """One evaluated checkpoint on the run's common Elo scale."""

    iteration: int
    train_hours: float  # self-play + learning time up to this checkpoint
    elo: float
    ci95: tuple[float, float]


@dataclass(frozen=True)
class StrengthCurve:
    points: list[CurvePoint]
    anchors: dict[str, float]  # baseline name -> Elo on the same scale
    #: "cpu" (CPU hours recorded by the trainer) or "wall" (older runs).
    clock: str = "cpu"

    def crossing(self, anchor: str) -> CurvePoint | None:
        """The first checkpoint rated above ``anchor``, or None."""
        level = self.anchors[anchor]
        return next((p for p in self.points if p.elo > level), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [asdict(p) for p in self.points],
            "anchors": self.anchors,
            "clock": self.clock,
        }


def train_hours(run_dir: Path) -> tuple[dict[int, float], str]:
    """Cumulative self-play + learning hours at the end of each iteration, and the clock.

    CPU hours where every record has ``time/cpu_s``; wall-clock hours otherwise.
    """
    path = run_dir / METRICS_NAME
    if not path.is_file():
        raise FileNotFoundError(f"no {METRICS_NAME} in {run_dir}")
    total = 0.0
    wall = {0: 0.0}
    cpu: dict[int, float] | None = {0: 0.0}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            break  # a last line cut by a crash: the curve ends before it
        if not isinstance(record, dict) or "iteration" not in record:
            raise ValueError(f"{path}:{number}: not a metrics record")
        iteration = int(record["iteration"])
        total += float(record.get("time/selfplay_s", 0.0)) + float(record.get("time/learn_s", 0.0))
        wall[iteration] = total / 3600
        if cpu is not None:
            if "time/cpu_s" in record:
                # Iteration 0 too: a run from earlier weights starts where they stopped.
                cpu[iteration] = float(record["time/cpu_s"]) / 3600
            elif iteration > 0:
                cpu = None  # an older run (or one resumed across versions)
    return (cpu, "cpu") if cpu is not None and len(cpu) > 1 else (wall, "wall")


def strength_curve(run_dir: str | Path) -> StrengthCurve:
    """Refit the run's whole evaluation history; see the module docstring."""
    run_dir = Path(run_dir)
    newest = latest_checkpoint(run_dir)
    if newest is None:
        raise CheckpointError(f"run directory {run_dir} holds no checkpoint")
    data = read_file(newest)
    history = data["history"]
    baselines = list(data["config"]["eval"]["opponents"])
    ratings = ladder_ratings(history, baselines)
    if not ratings:
        return StrengthCurve([], {})
    hours, clock = train_hours(run_dir)
    points = [
        CurvePoint(i, hours.get(i, float("nan")), ratings[name].elo, ratings[name].ci95)
        for i in history["evaluated"]
        if (name := checkpoint_name(i)) in ratings
    ]
    anchors = {b: ratings[b].elo for b in baselines if b in ratings}
    return StrengthCurve(points, anchors, clock)


def format_curve(curve: StrengthCurve) -> str:
    """A Markdown table of the curve and a line per anchor crossing."""
    unit = "CPU hours" if curve.clock == "cpu" else "training hours (wall)"
    lines = [f"| iteration | {unit} | Elo | 95% CI |", "|---|---|---|---|"]
    for p in curve.points:
        lines.append(
            f"| {p.iteration} | {p.train_hours:.2f} | {p.elo:.0f} | "
            f"[{p.ci95[0]:.0f}, {p.ci95[1]:.0f}] |"
        )
    lines.append("")
    for name, level in curve.anchors.items():
        hit = curve.crossing(name)
        where = (
            f"first above it at iteration {hit.iteration} ({hit.train_hours:.2f} h)"
            if hit
            else "not crossed"
        )
        lines.append(f"- anchor {name}: Elo {level:.0f}; {where}")
    return "\n".join(lines)


def plot_curve(
    curve: StrengthCurve,
    out: str | Path,
    title: str = "",
    xlabel: str = "",
) -> None:
    """Elo against training hours, with each anchor as a horizontal line."""
    if not xlabel:
        kind = "CPU hours" if curve.clock == "cpu" else "wall-clock hours"
        xlabel = f"training time, {kind} (self-play + learning)"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'yinsh[plot]'") from None
    fig, ax = plt.subplots(figsize=(7, 4))
    x = [p.train_hours for p in curve.points]
    ax.plot(x, [p.elo for p in curve.points], "o-", color="C0", label="raw policy")
    ax.fill_between(
        x, [p.ci95[0] for p in curve.points], [p.ci95[1] for p in curve.points], alpha=0.15
    )
    for k, (name, level) in enumerate(curve.anchors.items()):
        ax.axhline(level, ls="--", lw=1, color=f"C{k + 1}", label=f"{name} ({level:.0f})")
    ax.set(xlabel=xlabel, ylabel="Elo (random = 0)")
    ax.set_title(title or "strength against training time")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.curve", description=__doc__)
    parser.add_argument("run_dir", type=input_dir)
    parser.add_argument("--out", type=image_file, help="also draw the curve to this image file")
    parser.add_argument("--json", type=output_file(), help="also write the curve as JSON")
    parser.add_argument("--title", default="", help="the plot's title (default: the run dir)")
    args = parser.parse_args(argv)
    try:
        curve = strength_curve(args.run_dir)
        if args.out is not None:
            plot_curve(curve, args.out, args.title or str(args.run_dir))
    except (FileNotFoundError, ImportError, ValueError) as exc:
        print(f"train.curve: {exc}", file=sys.stderr)
        return 2
    print(format_curve(curve))
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(curve.to_dict(), indent=1))
        except OSError as exc:
            print(f"train.curve: cannot write {args.json}: {exc.strerror}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
