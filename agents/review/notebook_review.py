"""A game review in a notebook: one call gives the table of decisions and draws the graph.

``review("game.sgf", "pretrained")`` reviews the record, draws the value
graph inline (when matplotlib and IPython are there) and returns the
decisions as a pandas DataFrame, one row per decision, or as a list of dicts
without pandas.  The :class:`~agents.review.reviewer.Review` itself is kept in
the DataFrame's ``attrs["review"]`` (for its ``summary()``).
"""

from __future__ import annotations

import os
from typing import Any

from agents.review.reviewer import Review, check_values, review_record
from agents.spec import make_agent
from yinsh_env import GameRecord, load_record


def review(
    record: GameRecord | str | os.PathLike[str],
    spec: str = "pretrained:sims=0",
    *,
    seed: int = 0,
    time_limit: float | None = None,
    draw: bool = True,
) -> Any:
    """Review ``record`` (a record or its file) with the agent ``spec``; see the module."""
    game = record if isinstance(record, GameRecord) else load_record(record)
    agent = make_agent(spec)
    try:
        check_values(agent, game.rings_to_win)
        result = review_record(game, agent, seed=seed, time_limit=time_limit)
    finally:
        agent.close()
    if draw:
        _draw(result)
    return table(result)


def table(result: Review) -> Any:
    """The decisions as a DataFrame (``attrs["review"]`` holds the review), else dicts."""
    rows = [d.to_json() for d in result.decisions]
    try:
        import pandas as pd
    except ImportError:
        return rows
    frame = pd.DataFrame(rows, columns=list(rows[0]) if rows else None).set_index("ply")
    frame.attrs["review"] = result
    return frame


def _draw(result: Review) -> None:
    """Show the value graph in the notebook's output (nothing without matplotlib/IPython)."""
    try:
        import matplotlib.pyplot as plt
        from IPython.display import display
    except ImportError:
        return
    from agents.review.output import plot_values

    figure = plot_values(result)
    figure.tight_layout()
    display(figure)
    plt.close(figure)
