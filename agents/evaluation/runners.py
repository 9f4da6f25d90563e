"""Where arena games are played: in this process, in worker processes, on Ray
actors.

A runner holds the match's agent specs and plays game tasks
(:class:`~agents.evaluation.games.GameTask`), yielding each
:class:`~agents.evaluation.games.GameResult` as its game finishes. It lives
for a whole evaluation, so that an adaptive one (``--rate`` picks its next
opponents from the results so far) starts its workers once. Workers build
their agents from the spec strings (lazily: only those their games need), so
nothing but text travels to them, and every game draws its randomness from its
task's seed: the same tasks give the same games on every runner.

Closing a :meth:`Runner.play` iterator before it is exhausted (an SPRT that
has decided, Ctrl-C) abandons the games still running: worker processes are
killed at once rather than left to finish them.

A worker process that dies in a game (an agent calling ``os._exit``, a crash
in native code) loses that game for the agent that was thinking, with a
reason naming the exit status; the pool is restarted and the other games
go on (:class:`~agents.evaluation.match_worker.TurnBoard`).  A death that no
agent's turn explains stops the match with :class:`WorkerDied`.

A ``py:`` agent (your own code) always plays in worker processes, one worker
or more, never in this process: an ``os._exit`` or a ``KeyboardInterrupt`` of
its own then forfeits its game, whatever the worker count, and what it starts
ends with the worker (:mod:`agents.infra.worker_pool`).  The built-in agents play
here with one worker, as before."""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait
from typing import Any, Protocol

from agents.base import Agent
from agents.evaluation.games import GameResult, GameTask, WorkerDied, forfeit_result, play_game
from agents.evaluation.match_worker import (
    TurnBoard,
    build,
    init_worker,
    play_task,
    registry_snapshot,
)
from agents.evaluation.settings import MatchSettings
from agents.infra.worker_pool import (
    end_group,
    guarded_pool,
    kill_workers,
    results_as_finished,
    signals_deferred,
)
from agents.spec import is_py_spec

#: Seconds the pool is given to reap its workers after one died.
REAP_SECONDS = 10.0


class Runner(Protocol):
    """Plays game tasks; see the module docstring."""

    def play(self, tasks: Sequence[GameTask]) -> Iterator[GameResult]:
        """Results in the order the games finish."""
        ...

    def close(self) -> None:
        """Stop the workers and release the agents."""
        ...


class LocalRunner:
    """Games one after another in this process.

    ``built`` agents (by index) are used as they are; the others are built
    from their specs when a game first needs them, as a worker would.
    """

    def __init__(
        self,
        specs: Sequence[Any],
        built: Mapping[int, Agent],
        rings_to_win: int = 3,
        limit: float | None = None,
    ) -> None:
        self.specs = list(specs)
        self.agents = dict(built)
        self.rings_to_win = rings_to_win
        self.limit = limit

    def _agent(self, index: int) -> Agent:
        if index not in self.agents:
            self.agents[index] = build(self.specs[index], index)
        return self.agents[index]

    def play(self, tasks: Sequence[GameTask]) -> Iterator[GameResult]:
        for task in tasks:
            white, black = self._agent(task.white), self._agent(task.black)
            yield play_game(white, black, task, self.rings_to_win, self.limit)

    def close(self) -> None:
        for agent in self.agents.values():
            agent.close()


class PoolRunner:
    """Games in ``workers`` processes that die with this one (:func:`guarded_pool`)."""

    def __init__(
        self, specs: Sequence[Any], workers: int, rings_to_win: int = 3, limit: float | None = None
    ) -> None:
        self.workers = workers
        self.specs = list(specs)
        self._args = (self.specs, registry_snapshot(specs), rings_to_win, limit)
        self._start()

    def _start(self) -> None:
        self.board = TurnBoard(multiprocessing.get_context("spawn"), self.workers)
        self.pool = guarded_pool(self.workers, init_worker, (*self._args, self.board))

    def play(self, tasks: Sequence[GameTask]) -> Iterator[GameResult]:
        # results_as_finished: safe to interrupt by a signal (agents.infra.worker_pool).
        todo = {task.index: task for task in tasks}
        try:
            while todo:
                try:
                    calls = [(task,) for task in todo.values()]
                    for _, result in results_as_finished(self.pool, play_task, calls):
                        del todo[result.task.index]
                        yield result
                except BrokenProcessPool:
                    yield from self._after_death(todo)
        finally:
            if todo:  # stopped early: the games still running are abandoned
                with signals_deferred():  # a second signal waits for the workers' end
                    kill_workers(self.pool)

    def _after_death(self, todo: dict[int, GameTask]) -> Iterator[GameResult]:
        """A worker died: its game a forfeit by the agent thinking, the pool started anew."""
        turns = self.board.turns()
        statuses = _exit_statuses(self.pool, {turn.pid for turn in turns})
        dead = [t for t in turns if statuses.get(t.pid) not in (None, -signal.SIGTERM)]
        with signals_deferred():
            kill_workers(self.pool)  # the live ones, and what they started
            self.pool.shutdown(wait=True, cancel_futures=True)
            self._end_groups()
            self._start()
        if not dead or any(t.agent is None or t.game not in todo for t in dead):
            shown = ", ".join(f"game {t.game}" for t in dead) or "no game"
            raise WorkerDied(f"a worker process died outside any agent's turn ({shown})")
        for turn in dead:
            task, agent = todo.pop(turn.game), turn.agent
            assert agent is not None  # checked above
            status = statuses[turn.pid]
            how = f"signal {-status}" if status is not None and status < 0 else f"status {status}"
            yield forfeit_result(task, agent, f"crashed: its worker process died ({how})")

    def close(self) -> None:
        with signals_deferred():
            self.pool.shutdown(wait=True, cancel_futures=True)
            self._end_groups()

    def _end_groups(self) -> None:
        """End what is left of the workers' process groups (a worker that died
        could not end its children)."""
        for pid in self.board.pids():
            end_group(pid)


def _exit_statuses(pool: Any, pids: set[int]) -> dict[int, int | None]:
    """The exit status of each of ``pids`` among the pool's processes (None: still alive),
    waiting up to :data:`REAP_SECONDS` for the pool to end them.

    The pool's own thread reaps its workers at the same time: a process it has
    reaped but not yet given its status reads as alive for a moment, so a process
    whose sentinel shows it ended is asked again until its status arrives.
    """
    processes = {p.pid: p for p in (getattr(pool, "_processes", None) or {}).values()}
    deadline = time.monotonic() + REAP_SECONDS
    statuses: dict[int, int | None] = {}
    for pid in pids:
        process = processes.get(pid)
        if process is None:
            statuses[pid] = None
            continue
        ended = bool(wait([process.sentinel], timeout=max(0.0, deadline - time.monotonic())))
        status = process.exitcode
        while ended and status is None and time.monotonic() < deadline:
            time.sleep(0.01)
            status = process.exitcode
        statuses[pid] = status
    return statuses


def make_runner(
    specs: Sequence[Any],
    built: Mapping[int, Agent],
    settings: MatchSettings,
    workers: int | None = None,
) -> Runner:
    """The runner for ``settings.backend``: ``local`` plays in this process (one
    worker, using the agents ``built`` here, unless a ``py:`` spec is among them)
    or in worker processes; ``ray`` on Ray actors.  ``workers`` (default
    ``settings.workers``) caps them for a match of few games.

    ``built`` agents a runner does not use are closed.
    """
    workers = settings.workers if workers is None else workers
    rings_to_win, limit = settings.rings_to_win, settings.move_time_limit
    backend, address = settings.backend, settings.address
    if backend == "local" and workers == 1 and not any(map(is_py_spec, specs)):
        return LocalRunner(specs, built, rings_to_win, limit)
    for agent in built.values():
        agent.close()
    if backend == "ray":
        from agents.evaluation.ray_runner import RayRunner

        return RayRunner(specs, workers, rings_to_win, limit, address)
    return PoolRunner(specs, workers, rings_to_win, limit)
