"""A review's files: its JSON, the record annotated with it, and the graph of its values.

For a record ``NAME.sgf`` (or ``.yinsh``, ``.json``) reviewed into a folder
``DIR``: ``DIR/NAME.review.json`` (:meth:`~agents.review.reviewer.Review.to_json`),
``DIR/NAME.review.yinsh`` (the game in the project's text format with a
``{...}`` note after every marked decision: the mark, the agent's preferred
action, the values before and after, the loss), and
``DIR/NAME.png`` (the value graph, drawn with matplotlib, the ``plot``
extra).  Every file is written whole to a temporary file first, so an error
leaves no half-written file, and is created under its name: a file or a link
already there (an earlier review, a link planted in the folder) is never
replaced nor followed (:func:`~yinsh_env.util.atomic_write.write_new_file`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from agents.review.reviewer import MARKS, Review
from yinsh_env import GameRecord, write_record
from yinsh_env.util.atomic_write import write_file, write_new_file, write_new_text

#: Colours of the marks in the graph and in the web page (Lichess's hues).
MARK_COLOURS = {"inaccuracy": "#56b4e9", "mistake": "#e69f00", "blunder": "#d55e00"}


def outputs(
    record_path: str | os.PathLike[str], out_dir: str | os.PathLike[str]
) -> dict[str, Path]:
    """The files a review of ``record_path`` writes in ``out_dir``: json, record, png."""
    name = Path(record_path).stem
    folder = Path(out_dir)
    return {
        "json": folder / f"{name}.review.json",
        "record": folder / f"{name}.review.yinsh",
        "png": folder / f"{name}.png",
    }


def note(decision: dict[str, Any]) -> str:
    """The comment on one decision in an annotated record ('' unless it is marked)."""
    if not decision["mark"]:
        return ""
    parts = [decision["mark"]]
    parts.append(f"best {decision['best']}")
    if decision["value"] is not None and decision["value_played"] is not None:
        parts.append(f"value {decision['value']:+.2f} -> {decision['value_played']:+.2f}")
    if decision["loss"] is not None:
        parts.append(f"loss {decision['loss']:.2f}")
    return ", ".join(parts)


def annotated_text(record: GameRecord, review: Review) -> str:
    """The record in our text format, with a note on every decision reviewed."""
    data = review.to_json()
    notes = {d["ply"]: note(d) for d in data["decisions"]}
    tags = dict(record.tags)
    tags["Annotator"] = review.agent
    if not review.complete:
        tags["AnnotationStopped"] = f"ply {review.stopped_at}: {review.reason}"
    annotated = GameRecord(
        rings_to_win=record.rings_to_win,
        white=record.white,
        black=record.black,
        result=record.result,
        termination=record.termination,
        actions=list(record.actions),
        tags=tags,
    )
    return write_record(annotated, notes)


def json_text(review: Review) -> str:
    return json.dumps(review.to_json(), indent=2) + "\n"


def plot_values(
    review: Review,
    path: str | os.PathLike[str] | None = None,
    ax: Any = None,
    *,
    writer: Callable[[str | os.PathLike[str], Callable[[BinaryIO], object]], None] = write_file,
) -> Any:
    """Draw the value graph; save it to ``path`` (a PNG) or draw on ``ax``; returns the figure.

    ``writer(path, write)`` puts the PNG's bytes there
    (:func:`~yinsh_env.util.atomic_write.write_file` for a path a person named).

    White's value after every ply, filled above and below 0 like Lichess's
    graph, with the marked decisions as coloured dots.  Needs matplotlib
    (ImportError naming the extra otherwise).
    """
    try:
        import matplotlib

        if path is not None and ax is None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("the value graph needs matplotlib: pip install 'yinsh[plot]'") from None
    figure = None
    if ax is None:
        figure, ax = plt.subplots(figsize=(8, 2.6), dpi=100)
    points = [(ply, v) for ply, v in enumerate(review.values()) if v is not None]
    if points:
        xs, ys = zip(*points)
        ax.fill_between(xs, ys, 0, where=[y >= 0 for y in ys], color="#e8e8e8", interpolate=True)
        ax.fill_between(xs, ys, 0, where=[y <= 0 for y in ys], color="#555555", interpolate=True)
        ax.plot(xs, ys, color="#333333", linewidth=1.2)
    for mark, _ in MARKS:
        marked = [
            (d.ply, d.value_played)
            for d in review.decisions
            if d.mark == mark and d.value_played is not None
        ]
        if marked:
            mx, my = zip(*marked)
            ax.scatter(mx, my, color=MARK_COLOURS[mark], s=28, zorder=3, label=mark)
    ax.axhline(0, color="#999999", linewidth=0.6)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlim(0, max(1, review.total))
    ax.set_xlabel("ply")
    ax.set_ylabel("value for White")
    ax.set_title(f"{review.white} - {review.black}, reviewed by {review.agent}", fontsize=9)
    if any(d.mark for d in review.decisions):
        ax.legend(loc="lower left", fontsize=7, frameon=False, ncol=3)
    fig = ax.figure
    if path is not None:
        fig.tight_layout()
        writer(path, lambda handle: fig.savefig(handle, format="png"))
        if figure is not None:
            plt.close(figure)
    return fig


def save_review(
    record: GameRecord, review: Review, files: dict[str, Path], plot: bool = True
) -> list[Path]:
    """Create the JSON, the annotated record and (``plot``) the graph; returns the paths.

    ``FileExistsError`` naming the file for one that is there already (see above).
    """
    write_new_text(files["json"], json_text(review))
    write_new_text(files["record"], annotated_text(record, review))
    written = [files["json"], files["record"]]
    if plot:
        plot_values(review, files["png"], writer=write_new_file)
        written.append(files["png"])
    return written
