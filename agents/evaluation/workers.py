"""What a worker does: builds a match's agents from their specs and plays its games.

A worker is a process of :class:`~agents.evaluation.runners.PoolRunner` or a
Ray actor (:mod:`agents.evaluation.ray_runner`).  :func:`init_worker` sets it
up with the match's entries (spec strings, or objects of your own that
travelled, :mod:`agents.evaluation.travel`) and the registry entries they
name; :func:`play_task` plays one game, building an agent the first time a
game needs it (seeded by its index, as the calling process builds it).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from .. import spec as spec_module
from ..base import Agent
from ..byo import as_agent
from ..spec import make_agent
from .games import GameResult, GameTask, play_game

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


def init_worker(
    specs: list[Any], registry: dict[str, Any], rings_to_win: int, limit: float | None
) -> None:
    """Set up a worker (a process, a Ray actor) to build ``specs``' agents on demand."""
    for name, factory in registry.items():
        spec_module.register_agent(name, factory, replace=False)
    # Build the agents lazily: a worker only needs the ones its games use.
    _WORKER.update(specs=specs, agents={}, rings_to_win=rings_to_win, limit=limit)


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
    return play_game(
        _worker_agent(task.white),
        _worker_agent(task.black),
        task,
        rings_to_win=_WORKER["rings_to_win"],
        move_time_limit=_WORKER["limit"],
    )
