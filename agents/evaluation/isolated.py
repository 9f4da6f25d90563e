"""An agent of your own in a process of its own: ``yinsh-play``'s ``py:`` agents.

A ``py:`` agent is your code, and it may end the process it runs in
(``os._exit``), raise ``KeyboardInterrupt``, or start processes and leave
them.  The arena plays such agents in worker processes
(:mod:`agents.evaluation.runners`); ``yinsh-play`` plays one game in its own
process and prints it as it goes, so it holds an :class:`IsolatedAgent`
instead: a stand-in that builds the agent in a worker process
(:func:`agents.infra.worker_pool.guard_worker`: it dies with this process, ignores
Ctrl-C, and ends what it starts when it exits) and asks it for each move.

Whatever the agent does, the stand-in answers as an agent that failed does
(:class:`~agents.base.AgentFailure`, the game a forfeit), in the match
loop's words: ``crashed: ValueError: ...``, ``exited: SystemExit(3)``,
``raised KeyboardInterrupt``, and ``crashed: its worker process died
(status 7)`` for a process that ended.  A failure in ``reset`` is told at
the agent's first move (the forfeit is then that side's), and an ``os.fork()``
copy of the worker never answers in its place.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np

from agents.base import Agent, AgentFailure
from agents.evaluation.match import describe_action
from agents.infra.worker_pool import agent_exit, end_group, end_tree, guard_worker
from agents.params import clip
from agents.spec import AgentSpecError, is_py_spec, make_agent
from yinsh_env import State

#: Seconds between looks at whether the worker still lives while waiting for it
#: (its death closes the pipe too, unless a process it started holds the pipe open).
POLL_SECONDS = 0.1
#: Seconds the worker has to exit when the agent is closed, before it is killed.
CLOSE_SECONDS = 10.0


class IsolatedAgent(Agent):
    """The agent ``spec`` names, built and played in a worker process (see the module)."""

    def __init__(self, spec: str, seed: int | None = None) -> None:
        super().__init__(seed)
        self.spec = spec.strip()
        self._seed: int | None = None
        self._reset_due = False
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process: BaseProcess | None = context.Process(
            target=_serve, args=(child, os.getpid(), self.spec, seed), name="yinsh-agent"
        )
        self._process.start()
        child.close()
        try:
            kind, *rest = self._ask(None)
        except AgentFailure as exc:  # its process died while building it
            raise AgentSpecError(f"agent spec {clip(self.spec)}: {exc.reason}") from None
        if kind == "refused":
            self.close()
            raise AgentSpecError(rest[0])
        self.rings_to_win = rest[0]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._seed = seed
        self._reset_due = True

    def act(self, state: State) -> int:
        due, self._reset_due = self._reset_due, False
        kind, value = self._ask(("act", state, due, self._seed))
        if kind == "failed":
            raise AgentFailure(value)
        return value

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):  # gone already
            self._conn.send(None)
        process.join(CLOSE_SECONDS)
        _stop(process)
        self._conn.close()

    def _ask(self, request: Any) -> Any:
        """Send ``request`` (None: only wait for the first answer) and wait for the answer."""
        process = self._process
        if process is None:
            raise AgentFailure("its worker process was stopped")
        try:
            if request is not None:
                self._conn.send(request)
            while not wait([self._conn, process.sentinel], POLL_SECONDS):
                if not process.is_alive():
                    break
            if self._conn.poll():
                return self._conn.recv()
        except (OSError, EOFError):
            pass  # the pipe broke: the worker is gone
        except BaseException:  # Ctrl-C, a move's time limit: the agent is in an unknown state
            self._process = None
            _stop(process)
            raise
        self._process = None
        _stop(process)
        status = process.exitcode
        how = f"signal {-status}" if status is not None and status < 0 else f"status {status}"
        raise AgentFailure(f"crashed: its worker process died ({how})")


def _stop(process: BaseProcess) -> None:
    """End ``process`` and every process below it (what is left of its process group,
    if it died first), and reap it."""
    if process.pid is None:
        return
    if process.is_alive():
        end_tree(process.pid, with_root=True)
    process.join(CLOSE_SECONDS)
    end_group(process.pid)


def _serve(conn: Connection, parent: int, spec: str, seed: int | None) -> None:
    """The worker: build the agent, then answer each ``(act, state, reset?, seed)``
    until told to stop."""
    guard_worker(parent)
    worker = os.getpid()

    def answer(message: Any) -> None:
        if os.getpid() != worker:  # an os.fork() copy of this process: not the agent's voice
            os._exit(0)
        conn.send(message)

    try:
        agent = make_agent(spec, seed=seed)
    except AgentSpecError as exc:
        answer(("refused", str(exc)))
        return
    answer(("built", agent.rings_to_win))
    try:
        while True:
            try:
                request = conn.recv()
            except EOFError:
                return
            if request is None:
                return
            _, state, due, game_seed = request
            answer(_move(agent, state, due, game_seed))
    finally:
        agent.close()


def _move(agent: Agent, state: State, reset: bool, seed: int | None) -> tuple[str, Any]:
    """``("ok", action)``, or ``("failed", reason)`` in the match loop's words."""
    step = " in reset" if reset else ""
    try:
        if reset:
            agent.reset(seed=seed)
        step = ""
        action = agent.act(state)
    except AgentFailure as exc:
        return "failed", exc.reason
    except Exception as exc:
        return "failed", f"crashed{step}: {type(exc).__name__}: {clip(str(exc), 200)}"
    except SystemExit as exc:
        return "failed", f"exited{step}: {agent_exit(exc)}"
    except KeyboardInterrupt:  # Ctrl-C never reaches this process: the agent's own
        return "failed", f"raised KeyboardInterrupt{step}"
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return "ok", int(action)
    return "failed", f"illegal action {describe_action(action)}"


def make_player(spec: str, seed: int | None = None) -> Agent:
    """The agent ``spec`` names; a ``py:`` one (your code) in a process of its own."""
    return IsolatedAgent(spec, seed) if is_py_spec(spec) else make_agent(spec, seed=seed)
