"""What a worker does: builds a match's agents from their specs and plays its games.

A worker is a process of :class:`~agents.evaluation.runners.PoolRunner` or a
Ray actor (:mod:`agents.evaluation.ray_runner`).  :func:`init_worker` sets it
up with the match's entries (spec strings, or objects of your own that
travelled, :mod:`agents.evaluation.travel`) and the registry entries they
name; :func:`play_task` plays one game, building an agent the first time a
game needs it (seeded by its index, as the calling process builds it).

A worker process that dies (an agent calling ``os._exit``, a crash in native
code, the kernel's out-of-memory killer) cannot say why.  So each worker of a
pool notes on a :class:`TurnBoard` in shared memory which game it plays and
which agent is thinking; the pool reads it when a worker is gone and scores
that game a forfeit by that agent.

An agent may also copy its worker (``os.fork()``): the copy returns from
the agent's ``act`` as the worker does, and would play on and answer the
pool's tasks beside it.  A copy is no worker: it ends itself at its next
decision, or when its game ends (:func:`play_task` knows the worker's pid).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import Any

import agents.spec as spec_module
from agents.base import Agent
from agents.byo import as_agent
from agents.evaluation.games import GameResult, GameTask, play_game
from agents.spec import make_agent

_WORKER: dict[str, Any] = {}


def registry_snapshot(specs: Sequence[Any] = ()) -> dict[str, Any]:
    """The registry entries the match's spec strings name, as they travel to a worker.

    Only those: an entry the match does not use is not sent, so it cannot
    break a worker that could not unpickle it.  Entries that pickle will not
    are left out here (:mod:`agents.evaluation.travel` refuses them first).
    """
    registry = spec_module.registered_agents()
    names = {spec_module.parse_spec(s)[0] for s in specs if isinstance(s, str)}
    snapshot = {}
    for name in names & set(registry):
        try:
            pickle.dumps(registry[name])
        except Exception:
            continue
        snapshot[name] = registry[name]
    return snapshot


@dataclass(frozen=True)
class Turn:
    """What a worker was doing: its process id, its game (task index) and the agent thinking."""

    pid: int
    game: int
    agent: int | None


class TurnBoard:
    """Shared memory where each worker of a pool notes its game and the agent thinking.

    Made by the pool's process, handed to its workers when they start
    (``initargs``); a worker claims a slot, then writes ``pid, game + 1,
    agent + 1`` (0: none) around every decision.
    """

    def __init__(self, context: BaseContext, workers: int) -> None:
        self.slots = context.Array("q", 3 * workers)
        self.claimed = context.Value("i", 0)
        self.workers = workers

    def claim(self) -> int:
        """In a worker: a slot of its own, marked with its pid."""
        with self.claimed.get_lock():
            slot = self.claimed.value % self.workers
            self.claimed.value += 1
        self.slots[3 * slot : 3 * slot + 3] = [os.getpid(), 0, 0]
        return slot

    def note(self, slot: int, game: int | None, agent: int | None) -> None:
        self.slots[3 * slot + 1 : 3 * slot + 3] = [
            0 if game is None else game + 1,
            0 if agent is None else agent + 1,
        ]

    def pids(self) -> list[int]:
        """The process id of every worker that claimed a slot."""
        values = self.slots[:]
        return [pid for pid in values[0::3] if pid]

    def turns(self) -> list[Turn]:
        """What every worker was last doing (those playing a game)."""
        values = self.slots[:]
        found = []
        for slot in range(self.workers):
            pid, game, agent = values[3 * slot : 3 * slot + 3]
            if pid and game:
                found.append(Turn(pid, game - 1, agent - 1 if agent else None))
        return found


def init_worker(
    specs: list[Any],
    registry: dict[str, Any],
    rings_to_win: int,
    limit: float | None,
    board: TurnBoard | None = None,
) -> None:
    """Set up a worker (a process, a Ray actor) to build ``specs``' agents on demand."""
    for name, factory in registry.items():
        spec_module.register_agent(name, factory, replace=False)
    # Build the agents lazily: a worker only needs the ones its games use.
    _WORKER.update(
        specs=specs,
        agents={},
        rings_to_win=rings_to_win,
        limit=limit,
        board=board,
        pid=os.getpid(),
    )
    if board is not None:
        _WORKER["slot"] = board.claim()


def build(entry: Any, index: int) -> Agent:
    """The agent of a match's entry: a spec built (seeded by its index), or an object wrapped."""
    return make_agent(entry, seed=index) if isinstance(entry, str) else as_agent(entry)


def _worker_agent(index: int) -> Agent:
    agents: dict[int, Agent] = _WORKER["agents"]
    if index not in agents:
        agents[index] = build(_WORKER["specs"][index], index)
    return agents[index]


def play_task(task: GameTask) -> GameResult:
    """Play one task in a worker set up by :func:`init_worker`."""
    board: TurnBoard | None = _WORKER.get("board")
    slot = _WORKER.get("slot", 0)

    def on_turn(agent: int | None) -> None:
        _end_if_copy()
        if board is not None:
            board.note(slot, task.index, agent)

    on_turn(None)
    try:
        result = play_game(
            _worker_agent(task.white),
            _worker_agent(task.black),
            task,
            rings_to_win=_WORKER["rings_to_win"],
            move_time_limit=_WORKER["limit"],
            in_worker=True,
            on_turn=on_turn,
        )
    finally:
        _end_if_copy()
        if board is not None:
            board.note(slot, None, None)
    return result


def _end_if_copy() -> None:
    """In an ``os.fork()`` copy of a worker (an agent's): end it, before it acts as one."""
    if _WORKER.get("pid", os.getpid()) != os.getpid():
        os._exit(0)
