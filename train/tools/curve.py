"""Strength against training time: one Elo fit over a whole run, on the fixed scale.

The in-run ``eval/elo`` of an iteration comes from the fit made at that
iteration, so early values shift as later games arrive.  This module refits
every pairing the run ever played (kept in the newest checkpoint's history)
once, with the baselines that are anchors of the fixed rating scale
(:mod:`agents.evaluation.scale`: ``random`` at 0, ``greedy``,
``alphabeta``, ...) held at their frozen ratings, so every evaluated
checkpoint of every run sits on one axis (runs older than the scale too:
their histories hold every pairing; a run whose baselines hold no anchor is
rated with its first baseline at 0, and says so), and puts each checkpoint
at the training time it took to reach it: the CPU seconds of
self-play and learning that the trainer records (``time/cpu_s`` in
``metrics.jsonl``; all processes: trainer, self-play workers or Ray actors),
or for runs that predate it the wall-clock seconds of self-play and learning.
Evaluation is excluded either way, so the curve does not depend on how often
a run evaluates.

Usage::

    python -m train.tools.curve runs/long          # the table, and where each anchor is crossed
    python -m train.tools.curve runs/long --out curve.png   # the plot too (needs matplotlib)
    # a training in stretches, one after another:
    python -m train.tools.curve docs/studies/runs/long/curve.json docs/studies/runs/long2 \\
        --out all.png
    python -m train.tools.curve runs/a runs/b --out both.png  # two runs on one axis
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.evaluation.scale import Scale, default_scale
from agents.infra.cli_args import any_path, image_file, input_dir, input_file, output_file
from train.evaluate import checkpoint_name, ladder_ratings, ladder_scale
from train.run_checkpoint import CheckpointError, latest_checkpoint, read_file
from train.trainer import METRICS_NAME
from yinsh_env.util.atomic_write import write_file, write_text


@dataclass(frozen=True)
class CurvePoint:
    """One evaluated checkpoint on the run's common Elo scale."""

    iteration: int
    train_hours: float  # self-play + learning time up to this checkpoint
    elo: float
    ci95: tuple[float, float]


@dataclass(frozen=True)
class StrengthCurve:
    """A run's ratings against its training clock, and the baselines' ratings on the same scale."""

    points: list[CurvePoint]
    anchors: dict[str, float]  # baseline name -> Elo on the same scale
    #: "cpu" (CPU hours recorded by the trainer) or "wall" (older runs).
    clock: str = "cpu"
    #: The fixed scale the ratings are on, or None: relative to the first baseline.
    scale: str | None = None

    def scale_label(self) -> str:
        """``Elo (yinsh-v1 scale, random = 0)`` or ``Elo (this run's own fit: FIRST = 0)``."""
        if self.scale is not None:
            return f"Elo ({self.scale} scale, random = 0)"
        first = next(iter(self.anchors), "its first baseline")
        return f"Elo (this run's own fit: {first} = 0)"

    def crossing(self, anchor: str) -> CurvePoint | None:
        """The first checkpoint rated above ``anchor``, or None."""
        level = self.anchors[anchor]
        return next((p for p in self.points if p.elo > level), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [asdict(p) for p in self.points],
            "anchors": self.anchors,
            "clock": self.clock,
            "scale": self.scale,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "curve") -> StrengthCurve:
        """The inverse of :meth:`to_dict` (a ``--json`` file); ValueError naming ``source``."""
        try:
            points = [
                CurvePoint(
                    int(p["iteration"]),
                    float(p["train_hours"]),
                    float(p["elo"]),
                    (float(p["ci95"][0]), float(p["ci95"][1])),
                )
                for p in data["points"]
            ]
            anchors = {str(k): float(v) for k, v in data["anchors"].items()}
            scale = data.get("scale")
            return cls(
                points,
                anchors,
                str(data.get("clock", "cpu")),
                None if scale is None else str(scale),
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise ValueError(
                f"{source} is not a strength curve ({type(exc).__name__}: {exc})"
            ) from None


def load_curve(source: str | Path) -> StrengthCurve:
    """A run directory's (or a run archive's) curve, or one saved with ``--json``."""
    source = Path(source)
    if source.is_file():
        try:
            data = json.loads(source.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{source} is not a strength curve ({exc})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{source} is not a strength curve (not a JSON object)")
        return StrengthCurve.from_dict(data, str(source))
    return strength_curve(source)


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


def strength_curve(run_dir: str | Path, scale: Scale | None = None) -> StrengthCurve:
    """Refit the run's whole evaluation history; see the module docstring.

    ``scale``: the fixed scale (default: the shipped one, for runs of its variant).
    """
    run_dir = Path(run_dir)
    newest = latest_checkpoint(run_dir)
    if newest is None:
        raise CheckpointError(f"run directory {run_dir} holds no checkpoint")
    data = read_file(newest)
    history = data["history"]
    baselines = list(data["config"]["eval"]["opponents"])
    scale = scale if scale is not None else default_scale()
    rings = int(data["config"].get("selfplay", {}).get("rings_to_win", 3))
    on: Scale | None = scale if scale.rings_to_win == rings else None
    ratings = ladder_ratings(history, baselines, on)
    scale_name = ladder_scale(baselines, on)
    if not ratings:
        return StrengthCurve([], {}, scale=scale_name)
    hours, clock = train_hours(run_dir)
    points = [
        CurvePoint(i, hours.get(i, float("nan")), ratings[name].elo, ratings[name].ci95)
        for i in history["evaluated"]
        if (name := checkpoint_name(i)) in ratings
    ]
    anchors = {b: ratings[b].elo for b in baselines if b in ratings}
    return StrengthCurve(points, anchors, clock, scale_name)


def format_curve(curve: StrengthCurve) -> str:
    """A Markdown table of the curve and a line per anchor crossing."""
    unit = "CPU hours" if curve.clock == "cpu" else "training hours (wall)"
    lines = [f"| iteration | {unit} | {curve.scale_label()} | 95% CI |", "|---|---|---|---|"]
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


def branch_start(points: list[CurvePoint], earlier: list[list[CurvePoint]]) -> int:
    """Where a run stops repeating an earlier one: the index of its last shared checkpoint.

    A run copied from another at some checkpoint (a lever tried from a shared
    start) holds the same checkpoints before it, at the same iteration and
    training time; drawn again they would hide the first run's line.  0 when
    nothing is shared.
    """

    def key(p: CurvePoint) -> tuple[int, float]:
        return p.iteration, round(p.train_hours, 9)

    seen = {key(p) for run in earlier for p in run}
    shared = next((i for i, p in enumerate(points) if key(p) not in seen), len(points))
    return max(0, shared - 1)


def plot_curve(
    curve: StrengthCurve | list[tuple[str, StrengthCurve]],
    out: str | Path,
    title: str = "",
    xlabel: str = "",
) -> None:
    """Elo against training hours, with the curves' anchors as horizontal lines.

    Several ``(label, curve)``: the stretches of one training (a run and the
    runs that continued it), or runs to compare; each is its own fit, on one
    axis where they are on the fixed scale (a curve that is not says so).  A
    run that repeats an earlier one's first checkpoints (a copy made to try a
    lever) is drawn from the last checkpoint they share (:func:`branch_start`).
    """
    stretches = curve if isinstance(curve, list) else [("raw policy", curve)]
    last = stretches[-1][1]
    if not xlabel:
        kind = "CPU hours" if last.clock == "cpu" else "wall-clock hours"
        xlabel = f"training time, {kind} (self-play + learning)"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'yinsh[plot]'") from None
    fig, ax = plt.subplots(figsize=(7, 4))
    mixed = len({c.scale for _, c in stretches}) > 1
    for k, (label, stretch) in enumerate(stretches):
        if mixed and stretch.scale is None:
            label += " (own fit, not the fixed scale)"
        start = branch_start(stretch.points, [c.points for _, c in stretches[:k]])
        if start:
            label += f" (from iteration {stretch.points[start].iteration})"
        points = stretch.points[start:]
        x = [p.train_hours for p in points]
        color = f"C{k}"
        ax.plot(x, [p.elo for p in points], "o-", ms=3, color=color, label=label)
        low = [p.ci95[0] for p in points]
        ax.fill_between(x, low, [p.ci95[1] for p in points], color=color, alpha=0.15)
    anchors: dict[str, float] = {}
    for _, stretch in stretches:
        if stretch.scale == last.scale:
            for name, level in stretch.anchors.items():
                anchors.setdefault(name, level)
    for k, (name, level) in enumerate(anchors.items(), start=len(stretches)):
        ax.axhline(level, ls="--", lw=1, color=f"C{k}", label=f"{name} ({level:.0f})")
    ax.set(xlabel=xlabel, ylabel=last.scale_label())
    ax.set_title(title or "strength against training time")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fmt = Path(out).suffix[1:].lower() or "png"
    try:
        write_file(out, lambda handle: fig.savefig(handle, format=fmt, dpi=110))
    finally:
        plt.close(fig)


def _source(text: str) -> Path:
    """An argparse type: a run directory (or archive), or a readable curve JSON file."""
    return input_dir(text) if any_path(text).is_dir() else input_file(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.tools.curve", description=__doc__)
    parser.add_argument(
        "sources",
        type=_source,
        nargs="+",
        metavar="run_dir",
        help="a run directory, a run archive or a curve JSON file; several: the stretches "
        "of one training in order, or runs to compare (each its own fit, on the fixed scale)",
    )
    parser.add_argument("--out", type=image_file, help="also draw the curve to this image file")
    parser.add_argument("--json", type=output_file(), help="also write the (last) curve as JSON")
    parser.add_argument("--title", default="", help="the plot's title (default: the run dir)")
    args = parser.parse_args(argv)
    try:
        curves = [(str(source), load_curve(source)) for source in args.sources]
        if args.out is not None:
            title = args.title or " + ".join(label for label, _ in curves)
            plot_curve(curves if len(curves) > 1 else curves[0][1], args.out, title)
    except (FileNotFoundError, ImportError, ValueError) as exc:
        print(f"train.tools.curve: {exc}", file=sys.stderr)
        return 2
    for label, curve in curves:
        if len(curves) > 1:
            print(f"\n{label}:\n")
        print(format_curve(curve))
    own = [label for label, curve in curves if curve.scale is None]
    if len(curves) > 1 and own:
        print(f"\nnot on the fixed scale (no anchor among their baselines): {', '.join(own)}")
    if args.json is not None:
        try:
            write_text(args.json, json.dumps(curves[-1][1].to_dict(), indent=1))
        except OSError as exc:
            print(f"train.tools.curve: cannot write {args.json}: {exc.strerror}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
