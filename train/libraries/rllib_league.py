"""Self-play with frozen snapshots for RLlib: the learner against its past selves.

:mod:`train.libraries.rllib_example` ``--snapshots L`` uses this.  The learner's module
plays both seats of some games (shared-policy self-play); in the others it
meets one of ``L`` frozen copies of itself, taken every ``--snapshot-every``
iterations, the newest met most (:func:`~yinsh_env.envs.matchmaking.label_league`
picks, its members the modules' ids: the snapshots a pool with the ``"recent"``
strategy).
A small league can add fixed opponents (``--league-opponents random``): modules
that play an agent spec (:class:`~train.libraries.rllib_example.BaselineModule`), met in
``fixed_share`` of the episodes from the first iteration on, each equally often (or
by ``fixed_weights``).

The snapshots are ``L`` extra modules of the same class, never trained
(``policies_to_train`` names the learner only); a snapshot is the learner's
state copied into the next slot, round-robin, in the learner group and in
every env runner.  The
mapping of agents to modules is a pure function of the episode's id and of
the filled slots, so both seats of an episode agree and remote env runners
compute the same; after every snapshot, the new mapping goes to the
algorithm and every env runner (as ``Algorithm.add_module`` does); episodes
under way finish with the mapping they began with.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from yinsh_env.envs.env_base import AGENTS
from yinsh_env.envs.matchmaking import SnapshotSlots, label_league

SNAPSHOT_PREFIX = "snapshot_"
FIXED_PREFIX = "fixed_"


def snapshot_ids(count: int) -> list[str]:
    """The module ids of ``count`` snapshot slots."""
    return [f"{SNAPSHOT_PREFIX}{i}" for i in range(count)]


def fixed_ids(count: int) -> list[str]:
    """The module ids of ``count`` fixed opponents (agent specs) of a small league."""
    return [f"{FIXED_PREFIX}{i}" for i in range(count)]


def league_mapping(
    learner: str,
    snapshots: Sequence[str],
    self_share: float,
    recency: float = 0.8,
    fixed: Sequence[str] = (),
    fixed_share: float = 0.0,
    fixed_weights: Sequence[float] | None = None,
) -> Callable[..., str]:
    """An agent-to-module mapping: each episode's opponent picked by
    :func:`~yinsh_env.envs.matchmaking.label_league` (``fixed_share`` of the episodes one
    of the ``fixed`` modules; of the others, ``self_share`` learner against learner and
    the rest the learner against a snapshot drawn by recency), the learner's side drawn
    per episode.

    ``snapshots`` lists the filled slots, oldest first; none: self-play instead.
    """
    league = label_league(
        learner, snapshots, self_share, recency, fixed, fixed_share, fixed_weights
    )

    def mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
        rng = np.random.default_rng(zlib.crc32(str(episode.id_).encode()))
        opponent = league.sample(rng).name
        if opponent == learner:
            return learner
        side = AGENTS[int(rng.integers(2))]
        return learner if agent_id == side else opponent

    return mapping


class SnapshotLeague:
    """Copies the learner into the next snapshot slot every ``every`` iterations
    (:class:`~yinsh_env.envs.matchmaking.SnapshotSlots` says which)."""

    def __init__(
        self,
        learner: str,
        slots: int,
        every: int,
        self_share: float = 0.5,
        fixed: Sequence[str] = (),
        fixed_share: float = 0.0,
        fixed_weights: Sequence[float] | None = None,
    ) -> None:
        if slots < 0 or every < 1:
            raise ValueError(f"slots must be at least 0 and every at least 1, not {slots}, {every}")
        self.learner = learner
        self.slots = SnapshotSlots(snapshot_ids(slots))
        self.every = every
        self.self_share = self_share
        self.fixed = list(fixed)
        self.fixed_share = fixed_share
        self.fixed_weights = fixed_weights
        #: ``(iteration, slot)`` of every snapshot, for the run's output.
        self.history: list[tuple[int, str]] = []

    @property
    def filled(self) -> list[str]:
        """The slots holding a snapshot, oldest first."""
        return self.slots.filled

    def mapping(self) -> Callable[..., str]:
        return league_mapping(
            self.learner,
            self.filled,
            self.self_share,
            fixed=self.fixed,
            fixed_share=self.fixed_share,
            fixed_weights=self.fixed_weights,
        )

    def snapshot(self, algo: Any, iteration: int) -> str:
        """Freeze the learner into the next slot (now), and map episodes to the league."""
        slot = self.slots.take()
        state = algo.learner_group.get_state(components=f"learner/rl_module/{self.learner}")
        state = state["learner"]["rl_module"][self.learner]
        algo.learner_group.set_state({"learner": {"rl_module": {slot: state}}})
        self.history.append((iteration, slot))
        # The slots or their order by age changed; the env runners get the weights here,
        # as Algorithm.set_state's sync skips runners whose weights' sequence number is current.
        install(algo, self.mapping(), {slot: state})
        return slot

    def after_iteration(self, algo: Any, iteration: int) -> str | None:
        """Take a snapshot when ``iteration`` is a multiple of ``every`` (and there are slots)."""
        if not self.slots or iteration % self.every:
            return None
        return self.snapshot(algo, iteration)


def install(algo: Any, mapping: Callable[..., str], states: dict[str, Any]) -> None:
    """Module ``states`` and ``mapping`` (from the next episode on) into every env runner."""
    algo.config._is_frozen = False  # as Algorithm.add_module does
    algo.config.multi_agent(policy_mapping_fn=mapping)
    algo.config.freeze()

    def update(runner: Any) -> None:
        for module_id, state in states.items():
            runner.module[module_id].set_state(state)
        runner.config.multi_agent(policy_mapping_fn=mapping)

    algo.env_runner_group.foreach_env_runner(update)


__all__ = [
    "FIXED_PREFIX",
    "SNAPSHOT_PREFIX",
    "SnapshotLeague",
    "fixed_ids",
    "install",
    "league_mapping",
    "snapshot_ids",
]
