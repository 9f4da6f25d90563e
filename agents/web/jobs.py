"""Agents' work off the request path: jobs on a bounded pool, each one cancellable.

Every agent decision and every analysis the web app starts is a :class:`Job`
run by :class:`Workers`, a pool of at most ``max_workers`` threads (more jobs
wait their turn).  A job carries an event: :meth:`Job.cancel` sets it (the
game moved on, a new analysis replaced it, the game was closed) and removes
the job if it has not started.  While it runs, the agent's searches ask
:meth:`Job.should_stop` between simulations (:mod:`agents.search.stopping`),
which also turns True once the job's ``ceiling`` seconds have passed, so a
search ends with its best move so far rather than running on; no thread is
ever killed, and no timer thread is started per decision.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from agents.base import Agent
from agents.search.stopping import stop_when

#: Threads the agents of one server think on at most.
THINK_WORKERS = 8


@dataclass(eq=False)
class Job:
    """Work for one generation of a game: an agent's move, an analysis or a review."""

    kind: str  # "move", "analysis" or "review"
    spec: str
    ply: int
    generation: int
    #: Seconds the job may think before its searches are told to stop (None: no ceiling).
    ceiling: float | None = None
    #: When the agent started thinking (None while the job waits for a thread).
    started: float | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    future: Future[None] | None = None

    def cancel(self) -> None:
        """Ask the job to stop (it returns its best so far, which is then dropped)."""
        self.cancelled.set()
        future = self.future
        if future is not None:
            future.cancel()

    def should_stop(self) -> bool:
        """The search's stop hook: cancelled, or past the ceiling."""
        if self.cancelled.is_set():
            return True
        started, ceiling = self.started, self.ceiling
        return ceiling is not None and started is not None and time.monotonic() >= started + ceiling

    def seconds(self) -> float:
        """Seconds spent thinking so far."""
        return 0.0 if self.started is None else time.monotonic() - self.started


class Workers:
    """The pool agents think on: at most ``max_workers`` threads, started as needed."""

    def __init__(self, max_workers: int = THINK_WORKERS) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="yinsh-think")
        self._lock = threading.Lock()
        self._running = 0

    @property
    def running(self) -> int:
        """Jobs running now (a cancelled search still counts until it has stopped)."""
        with self._lock:
            return self._running

    def run(self, job: Job, work: Callable[..., None], *args: Any) -> None:
        """Run ``work(job, *args)`` on the pool, inside the job's stop hook."""
        job.future = self._pool.submit(self._call, job, work, args)

    def _call(self, job: Job, work: Callable[..., None], args: tuple[Any, ...]) -> None:
        if job.cancelled.is_set():
            return
        with self._lock:
            self._running += 1
        try:
            with stop_when(job.should_stop):
                work(job, *args)
        finally:
            with self._lock:
                self._running -= 1

    def close(self) -> None:
        """Drop the jobs not started; running ones finish (cancel them first)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def close_agent_later(agent: Agent) -> None:
    """Release an agent that holds something (a process) without waiting on it.

    Agents without a ``close`` of their own hold nothing: no thread is started
    for them.
    """
    if type(agent).close is Agent.close:
        return
    threading.Thread(target=_quiet_close, args=(agent,), daemon=True).start()


def _quiet_close(agent: Agent) -> None:
    try:
        agent.close()
    except Exception:  # closing is best effort
        return
