"""Learning curves of a run from its ``metrics.jsonl``: losses, scores, Elo.

Usage::

    python -m train.tools.plot runs/quick --out curve.png

Needs matplotlib (``pip install 'yinsh[plot]'``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.infra.cli_args import check_writable_file, image_file, input_dir
from train.trainer import METRICS_NAME, RunError, read_metrics
from yinsh_env.util.atomic_write import write_file


def load_metrics(run_dir: str | Path) -> list[dict[str, float]]:
    """The run's metrics, one dict per iteration, in order."""
    path = Path(run_dir) / METRICS_NAME
    if not path.is_file():
        raise FileNotFoundError(f"no {METRICS_NAME} in {run_dir}")
    return read_metrics(path)


def series(records: list[dict[str, float]], key: str) -> tuple[list[float], list[float]]:
    """(iterations, values) of the records that hold ``key``."""
    points = [(r["iteration"], r[key]) for r in records if key in r]
    return [p[0] for p in points], [p[1] for p in points]


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> Any:
    """A figure with the losses, the scores against baselines and the Elo; saved to ``out``."""
    try:
        import matplotlib

        if out is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'yinsh[plot]'") from None
    records = load_metrics(run_dir)
    fig, (losses, scores, elo) = plt.subplots(1, 3, figsize=(15, 4))
    for key, label, style in [
        ("loss/policy", "policy", "C0-"),
        ("loss/policy_entropy", "policy entropy", "C0:"),
        ("loss/value", "value", "C1-"),
        ("loss/value_baseline", "value: variance of the targets", "C1:"),
        ("loss/margin", "margin (aux)", "C2-"),
    ]:
        x, y = series(records, key)
        if x:
            losses.plot(x, y, style, label=label)
    losses.set(title="training losses", xlabel="iteration")
    losses.legend(fontsize=8)
    score_keys = sorted({k[: -len("/score")] for r in records for k in r if k.endswith("/score")})
    for prefix in score_keys:
        x, y = series(records, f"{prefix}/score")
        _, low = series(records, f"{prefix}/ci95_low")
        _, high = series(records, f"{prefix}/ci95_high")
        name = prefix.removeprefix("eval/").replace("_vs_", " vs ")
        (line,) = scores.plot(x, y, marker="o", label=name)
        if len(low) == len(x):
            scores.fill_between(x, low, high, color=line.get_color(), alpha=0.15)
    scores.axhline(0.5, color="grey", lw=0.8, ls="--")
    scores.set(title="score (95% interval)", xlabel="iteration", ylim=(-0.02, 1.02))
    if score_keys:
        scores.legend(fontsize=8)
    x, y = series(records, "eval/elo")
    elo.plot(x, y, marker="o")
    elo.set(title="Elo of the raw policy (fixed scale, random = 0)", xlabel="iteration")
    fig.suptitle(str(run_dir))
    fig.tight_layout()
    if out is not None:
        fmt = Path(out).suffix[1:].lower() or "png"
        write_file(out, lambda handle: fig.savefig(handle, format=fmt, dpi=110))
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.tools.plot", description=__doc__)
    parser.add_argument("run_dir", type=input_dir)
    parser.add_argument("--out", type=image_file, help="image file (default RUN_DIR/curve.png)")
    args = parser.parse_args(argv)
    out = args.out or args.run_dir / "curve.png"
    if args.out is None:
        try:
            check_writable_file(out)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"the default --out: {exc}")
    try:
        plot_run(args.run_dir, out)
    except (FileNotFoundError, ImportError, RunError) as exc:
        print(f"train.tools.plot: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
