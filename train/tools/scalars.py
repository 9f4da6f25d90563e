"""A library run's TensorBoard scalars as a small CSV, to keep beside the docs.

The library trainers (:mod:`train.libraries`) write their curves to TensorBoard: a
folder of binary event files that is neither reviewable text nor small.  A study keeps
the few curves it cites as CSV in ``docs/studies/runs/``: one row per step that has any
of the chosen scalars, its seconds since the run's first event, one column per tag.
Usage::

    python -m train.tools.scalars runs/sb3-s1/tb check/greedy score/greedy \\
        --out docs/studies/runs/libraries-60cpu/sb3-s1.csv

Reading needs ``tensorboard`` (in the ``sb3`` extra).  A folder with no event file, or
tags it never wrote, is an error naming them, and nothing is written.
"""

from __future__ import annotations

import argparse
import csv
import io
from collections.abc import Sequence
from pathlib import Path

from yinsh_env.util.atomic_write import write_text

#: Where the event files may sit below the folder given (SB3 adds its own sub-folder).
EVENT_GLOB = "**/events.out.tfevents.*"


def read_scalars(folder: Path, tags: Sequence[str]) -> dict[str, list[tuple[int, float, float]]]:
    """Each of ``tags`` as ``(step, wall_time, value)`` in step order, from every event
    file under ``folder``.  ValueError names a folder without events or a missing tag."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError('reading TensorBoard files needs it: pip install -e ".[sb3]"') from exc
    files = sorted(Path(folder).glob(EVENT_GLOB))
    if not files:
        raise ValueError(f"{str(folder)!r} holds no TensorBoard event files")
    found: dict[str, list[tuple[int, float, float]]] = {tag: [] for tag in tags}
    for file in files:
        events = EventAccumulator(str(file), size_guidance={"scalars": 0})
        events.Reload()
        present = set(events.Tags()["scalars"])
        for tag in tags:
            if tag in present:
                found[tag] += [(e.step, e.wall_time, e.value) for e in events.Scalars(tag)]
    missing = [tag for tag, rows in found.items() if not rows]
    if missing:
        raise ValueError(f"{str(folder)!r} has no scalars tagged {', '.join(missing)}")
    return {tag: sorted(rows) for tag, rows in found.items()}


def scalars_csv(scalars: dict[str, list[tuple[int, float, float]]]) -> str:
    """The CSV text: ``step,seconds,TAG...``, seconds since the first event of all.

    >>> print(scalars_csv({"check/greedy": [(10, 100.0, 0.25), (20, 130.0, 0.5)]}), end="")
    step,seconds,check/greedy
    10,0,0.25
    20,30,0.5
    """
    start = min(wall for rows in scalars.values() for _, wall, _ in rows)
    table: dict[int, dict[str, float]] = {}
    seconds: dict[int, float] = {}
    for tag, rows in scalars.items():
        for step, wall, value in rows:
            table.setdefault(step, {})[tag] = value
            seconds[step] = max(seconds.get(step, 0.0), wall - start)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["step", "seconds", *scalars])
    for step in sorted(table):
        values = [f"{table[step][tag]:.4g}" if tag in table[step] else "" for tag in scalars]
        writer.writerow([step, f"{seconds[step]:.0f}", *values])
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.tools.scalars", description=__doc__.splitlines()[0]
    )
    parser.add_argument("folder", type=Path, help="the run's TensorBoard folder")
    parser.add_argument("tags", nargs="+", help="scalar tags, e.g. check/greedy")
    parser.add_argument("--out", type=Path, default=None, help="the CSV file (default: print)")
    args = parser.parse_args(argv)
    try:
        text = scalars_csv(read_scalars(args.folder, args.tags))
    except ValueError as exc:
        parser.error(str(exc))
    if args.out is None:
        print(text, end="")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
