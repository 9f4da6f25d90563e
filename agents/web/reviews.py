"""A game review started from the browser: one bounded, cancellable job per game.

The page's **Review** asks the analysis agent (admitted by the server's
:class:`~agents.web.policy.AgentPolicy` like any analysis: the whitelist and
its ceilings on simulations) to review the game on the board
(:func:`agents.review.reviewer.review_game`).  The review runs as a
:class:`~agents.web.jobs.Job` on the server's bounded pool, never on the
request path.  One review's work is bounded: it covers the game's decisions
when it was asked for, and stops after :data:`REVIEW_SECONDS` seconds,
keeping what it reviewed (``status: "stopped"`` with the ply and the reason).
A new review, a cancel (``{"cancel": true}``), undo, load, new players or
closing the game end it (their review is dropped, a cancel's is kept as far
as it went).  While it runs the game's view says how many positions are done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agents.base import Agent
from agents.params import clip
from agents.review import check_values, review_game
from agents.web.jobs import Job
from yinsh_env import State

#: Seconds one review started from the browser may take; then it stops and keeps its part.
REVIEW_SECONDS = 120.0

Report = Callable[[Job, dict[str, Any]], None]


def review_job(
    job: Job, agent: Agent, start: State, actions: list[int], seed: int, report: Report
) -> None:
    """Review the game on the pool; ``report(job, info)`` with progress, then the result."""
    job.started = time.monotonic()
    done = 0

    def progress(n: int) -> None:
        nonlocal done
        done += n
        report(job, {"status": "running", "done": done})

    try:
        check_values(agent, start.rings_to_win)
        review = review_game(
            start,
            actions,
            agent,
            seed=seed,
            time_limit=REVIEW_SECONDS,
            should_stop=job.cancelled.is_set,
            progress=progress,
        )
    except Exception as exc:  # reported in the page, never fatal to the server
        report(job, {"status": "error", "error": f"{job.spec}: {clip(str(exc), 300)}"})
        return
    info = review.to_json()
    info.update(
        status="done" if review.complete else "stopped",
        done=done,
        values=review.values(),
        seconds=round(job.seconds(), 3),
    )
    report(job, info)


def running(spec: str, total: int) -> dict[str, Any]:
    """The view of a review just started: nothing done of ``total + 1`` positions."""
    return {"spec": spec, "status": "running", "done": 0, "positions": total + 1}
