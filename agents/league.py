"""Opponent pools and curricula built from agent specs (``greedy``, ``alphabeta:depth=1``...).

:mod:`yinsh_env.envs.matchmaking` samples among opponents without knowing any
agent; this module builds its members from spec strings, each agent seeded
from ``seed`` and its place, named by its spec (a spec given twice keeps the
first).  A bad spec raises :class:`~agents.spec.AgentSpecError` before any
member is built, so nothing is left half made:

>>> from agents.league import curriculum_from_specs, pool_from_specs
>>> ladder = curriculum_from_specs(["random", "greedy", "alphabeta:depth=1"], threshold=0.7)
>>> ladder.current.name
'random'
>>> pool = pool_from_specs(["greedy"], strategy="pfsp")  # snapshots join it later
>>> pool.names
['greedy']
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.base import Agent
from agents.spec import check_spec, make_agent
from yinsh_env.envs.matchmaking import Curriculum, OpponentPool


def spec_opponents(specs: Sequence[str], seed: int | None = 0) -> list[tuple[str, Agent]]:
    """``(spec, agent)`` for each distinct spec, in order; every spec checked first."""
    unique = list(dict.fromkeys(spec.strip() for spec in specs))
    for spec in unique:
        check_spec(spec)
    return [
        (spec, make_agent(spec, seed=None if seed is None else seed + i))
        for i, spec in enumerate(unique)
    ]


def pool_from_specs(
    specs: Sequence[str],
    strategy: str = "uniform",
    max_snapshots: int = 20,
    seed: int | None = 0,
    weights: Sequence[float] | None = None,
    **options: float,
) -> OpponentPool:
    """An :class:`OpponentPool` whose fixed members are the agents ``specs`` name,
    each of ``weights`` in a fixed mix (``strategy="weighted"``; None: 1 each)."""
    if weights is not None and len(weights) != len(specs):
        raise ValueError(f"{len(weights)} weight(s) for {len(specs)} opponent(s): give one each")
    pool = OpponentPool(strategy=strategy, max_snapshots=max_snapshots, **options)
    for i, (name, agent) in enumerate(spec_opponents(specs, seed)):
        pool.add(name, agent, weight=1.0 if weights is None else float(weights[i]))
    return pool


def curriculum_from_specs(
    specs: Sequence[str], threshold: float = 0.7, window: int = 100, seed: int | None = 0
) -> Curriculum:
    """A :class:`Curriculum` over the agents ``specs`` name, weakest first."""
    Curriculum.check_settings(threshold, window)  # before any agent is built
    return Curriculum(spec_opponents(specs, seed), threshold=threshold, window=window)


__all__ = ["curriculum_from_specs", "pool_from_specs", "spec_opponents"]
