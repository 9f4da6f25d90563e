"""Opponents for a learner: a pool that grows with it, a fixed mix, a curriculum, leagues.

Self-play as OpenSpiel, AlphaStar's league and PettingZoo's tutorials do it
needs the environment side to pick, at each episode, *whom* the learner
plays.  This module does that without knowing any agent or network: an
opponent is whatever :class:`~yinsh_env.envs.gym_env.YinshGymEnv` takes (``None``
for uniformly random moves, an object with ``act(state)`` or
``act_observation(observation)``, or a callable), or, for a multi-agent
library, any label such as an RLlib module id.  Building opponents from agent
specs (:mod:`agents.league`) and freezing copies of a learner
(:mod:`train.libraries.sb3_selfplay`, :mod:`train.libraries.rllib_league`,
:mod:`train.libraries.ppo`) live downstream: the three library trainers pick here.

Three samplers share one small interface (:class:`OpponentSampler`):
``sample(rng)`` returns an :class:`Entry` (a name, the opponent, its record),
``record(entry, reward)`` tells it how the learner did (+1 / 0 / -1):

>>> from yinsh_env.envs.gym_env import YinshGymEnv
>>> from yinsh_env.envs.matchmaking import Curriculum, League, OpponentPool
>>> def first_legal(observation):  # stands for any opponent YinshGymEnv takes
...     return int(observation["action_mask"].argmax())
>>> pool = OpponentPool(strategy="pfsp", max_snapshots=20)
>>> fixed = pool.add("random", None)  # fixed members stay
>>> ladder = Curriculum([("random", None), ("first", first_legal)], threshold=0.7)
>>> env = YinshGymEnv(opponent=League([(0.5, ladder), (0.5, pool)]))  # samples at every reset()
>>> obs, info = env.reset(seed=0)
>>> "opponent" in info
True
>>> snapshot = pool.add_snapshot(first_legal, step=100_000)  # a frozen learner, every K steps
>>> for reward in (1.0, 1.0, 1.0):  # the learner beat "random" three times
...     pool.record(fixed, reward)
>>> pool.names, pool.weights().round(2).tolist()  # PFSP: the snapshot is met most
(['random', 'snapshot@100000'], [0.14, 0.86])

* :class:`OpponentPool`: fixed members plus snapshots of the learner, the
  oldest snapshots dropped beyond ``max_snapshots``.  ``strategy``:
  ``"uniform"``; ``"recent"``, the ``k``-th newest member weighted
  ``recency**k``; ``"pfsp"``, prioritised fictitious self-play (AlphaStar),
  each member weighted ``(1 - p)**power`` where ``p`` is the learner's
  smoothed score against it, ``(score + 1) / (games + 2)``, so that the
  opponents it beats least are met most and none is ever starved.
  A fixed mix: ``"weighted"``, each member by its own ``weight``;
  ``"variance"``, the members that are not snapshots reweighted by
  ``p (1 - p) + 0.05``, ``p`` the learner's smoothed score over the last
  :data:`WINDOW` results :meth:`~OpponentPool.note` gave (AlphaStar's "variance"
  prioritisation: most games against opponents it beats about half the time),
  their total share kept.
* :class:`SnapshotSlots`: a fixed number of slots for copies of the learner,
  rewritten round-robin, the oldest first (the single-file PPO's snapshot
  opponents, RLlib's snapshot modules).
* :class:`Curriculum`: graded opponents met one at a time; once the learner
  scores at least ``threshold`` over the last ``window`` games against the
  current stage, it moves to the next (``promotions`` records when).
* :class:`League`: samplers mixed with fixed weights (a curriculum and a
  snapshot pool, say); results go back to the sampler that chose.
  :func:`label_league` makes one whose members are labels (RLlib module ids):
  fixed opponents, the learner itself and its snapshots, each in its share.

Sampling draws only from the ``rng`` passed in (the environment's own
``np_random``, seeded by ``reset(seed=...)``), so a seeded run repeats;
several environments stepped in one process (SB3's ``DummyVecEnv``) can
share one sampler, and then share its statistics.  A sampler's state is
plain Python, so each process of a multiprocess vector environment would
keep its own.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

#: How a pool of the learner's snapshots samples (the SB3 trainer's ``--pool-strategy``).
STRATEGIES: Final = ("uniform", "recent", "pfsp")
#: How a fixed mix samples: by the members' weights, or those reweighted by variance.
MIXES: Final = ("weighted", "variance")
#: The learner's last results against a member that the ``"variance"`` strategy reads.
WINDOW: Final = 200

T = TypeVar("T")


def learner_score(reward: float) -> float:
    """The learner's game score from its final reward: 1 win, 0.5 draw, 0 loss."""
    return 1.0 if reward > 0 else 0.0 if reward < 0 else 0.5


@dataclass(eq=False)
class Entry:
    """One opponent and the learner's record against it.

    ``snapshot`` marks a frozen copy of the learner (dropped when the pool is
    full); ``added`` orders members by age (larger is newer); ``weight`` is
    its weight in a fixed mix; ``recent`` the learner's last scores against it
    that :meth:`OpponentPool.note` gave.
    """

    name: str
    opponent: Any
    snapshot: bool = False
    added: int = 0
    games: int = 0
    score: float = 0.0  # the learner's points against it (1 a win, 0.5 a draw)
    weight: float = 1.0
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))

    @property
    def win_rate(self) -> float:
        """The learner's smoothed score against this opponent: ``(score + 1) / (games + 2)``."""
        return (self.score + 1.0) / (self.games + 2.0)

    def record(self, reward: float) -> None:
        self.games += 1
        self.score += learner_score(reward)


@runtime_checkable
class OpponentSampler(Protocol):
    """Chooses the learner's opponent for each episode and hears how it went."""

    def sample(self, rng: np.random.Generator) -> Entry: ...

    def record(self, entry: Entry, reward: float) -> None: ...

    def __contains__(self, entry: object) -> bool: ...

    @property
    def entries(self) -> list[Entry]:
        """The opponents it can choose now, with their records."""
        ...


def is_sampler(value: Any) -> bool:
    """Whether ``value`` chooses opponents (callable ``sample`` and ``record``, and ``in``)."""
    return all(
        callable(getattr(value, name, None)) for name in ("sample", "record", "__contains__")
    )


def _close(opponent: Any) -> None:
    close = getattr(opponent, "close", None)
    if callable(close):
        close()


class OpponentPool:
    """Fixed opponents and snapshots of the learner, sampled by ``strategy``.

    Args:
        strategy: one of :data:`STRATEGIES` or :data:`MIXES` (module docstring).
        max_snapshots: snapshots kept; adding one more drops (and closes) the oldest.
        recency: the ``"recent"`` weight ratio between consecutive ages, in (0, 1].
        power: the ``"pfsp"`` exponent, at least 0 (0 is uniform).
    """

    def __init__(
        self,
        strategy: str = "uniform",
        max_snapshots: int = 20,
        recency: float = 0.8,
        power: float = 2.0,
    ) -> None:
        if strategy not in STRATEGIES + MIXES:
            raise ValueError(
                f"unknown pool strategy {strategy!r}; expected one of {STRATEGIES + MIXES}"
            )
        if isinstance(max_snapshots, bool) or not isinstance(max_snapshots, int):
            raise TypeError(f"max_snapshots is an int, not {max_snapshots!r}")
        if max_snapshots < 1:
            raise ValueError(f"max_snapshots must be at least 1, not {max_snapshots}")
        if not 0.0 < recency <= 1.0:
            raise ValueError(f"recency must be in (0, 1], not {recency!r}")
        if not 0.0 <= power < float("inf"):
            raise ValueError(f"power must be finite and at least 0, not {power!r}")
        self.strategy = strategy
        self.max_snapshots = max_snapshots
        self.recency = float(recency)
        self.power = float(power)
        self.entries: list[Entry] = []
        self._added = 0  # members added so far (plain: a pool pickles, as RLlib's mapping)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry: object) -> bool:
        return any(entry is e for e in self.entries)

    @property
    def names(self) -> list[str]:
        return [entry.name for entry in self.entries]

    def add(self, name: str, opponent: Any, snapshot: bool = False, weight: float = 1.0) -> Entry:
        """Add a member under a new ``name`` (ValueError if the name is taken);
        ``weight``, finite and at least 0, counts in a fixed mix (:data:`MIXES`)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a pool member needs a non-empty name, not {name!r}")
        if name in self.names:
            raise ValueError(f"the pool already has a member named {name!r}")
        if not 0.0 <= weight < math.inf:
            raise ValueError(
                f"member {name!r}: weight must be finite and at least 0, not {weight!r}"
            )
        entry = Entry(
            name,
            opponent,
            snapshot=snapshot,
            added=self._added,
            weight=float(weight),
        )
        self._added += 1
        self.entries.append(entry)
        snapshots = [e for e in self.entries if e.snapshot]
        for old in snapshots[: max(0, len(snapshots) - self.max_snapshots)]:
            self.entries.remove(old)
            _close(old.opponent)
        return entry

    def add_snapshot(self, opponent: Any, step: int, weight: float = 1.0) -> Entry:
        """Add a frozen copy of the learner taken at ``step``, named ``snapshot@STEP``
        (``weight``: its share in a fixed mix)."""
        return self.add(f"snapshot@{step}", opponent, snapshot=True, weight=weight)

    def weights(self) -> np.ndarray:
        """Each member's sampling probability, in :attr:`entries` order."""
        if not self.entries:
            raise ValueError("the opponent pool is empty: add an opponent before sampling")
        if self.strategy == "uniform":
            raw = np.ones(len(self.entries))
        elif self.strategy == "recent":
            ages = np.argsort(np.argsort([-e.added for e in self.entries]))  # 0: the newest
            raw = self.recency ** ages.astype(np.float64)
        elif self.strategy == "pfsp":
            raw = np.array([(1.0 - e.win_rate) ** self.power for e in self.entries])
        else:
            raw = np.array([e.weight for e in self.entries], dtype=np.float64)
            if self.strategy == "variance":
                raw = self._by_variance(raw)
        if not raw.sum() > 0:
            raise ValueError("every member of the opponent pool weighs 0: none to sample")
        return raw / raw.sum()

    def _by_variance(self, base: np.ndarray) -> np.ndarray:
        """``base`` with each member that is not a snapshot weighted by ``p (1 - p) + 0.05``,
        their total share kept."""
        weights = base.copy()
        for i, entry in enumerate(self.entries):
            if not entry.snapshot:
                p = (sum(entry.recent) + 1.0) / (len(entry.recent) + 2.0)
                weights[i] *= p * (1.0 - p) + 0.05
        fixed = ~np.array([e.snapshot for e in self.entries])
        if fixed.any() and weights[fixed].sum() > 0:
            weights[fixed] *= base[fixed].sum() / weights[fixed].sum()
        return weights

    def sample(self, rng: np.random.Generator) -> Entry:
        return self.entries[int(rng.choice(len(self.entries), p=self.weights()))]

    def record(self, entry: Entry, reward: float) -> None:
        entry.record(reward)

    def note(self, name: str, score: float) -> None:
        """The learner scored ``score`` (1, 0.5, 0) in a game against member ``name``
        (others: ignored), read from the game's result: the ``"variance"`` window.

        Apart from :meth:`record`, which takes the environment's last reward (one
        that reward shaping may have moved off +1 / 0 / -1)."""
        for entry in self.entries:
            if entry.name == name:
                entry.recent.append(score)

    def close(self) -> None:
        for entry in self.entries:
            _close(entry.opponent)


class SnapshotSlots(Generic[T]):
    """A fixed set of slots for frozen copies of the learner, rewritten round-robin.

    The opponents stay the same objects (a network whose weights are
    replaced, an RLlib module id); :meth:`take` says which to write next, the
    oldest once all hold one.
    """

    def __init__(self, slots: Sequence[T]) -> None:
        self.slots = list(slots)
        self.taken = 0  # snapshots taken so far

    def __len__(self) -> int:
        return len(self.slots)

    def take(self) -> T:
        """The slot the next snapshot goes into (counted as taken)."""
        if not self.slots:
            raise ValueError("there are no snapshot slots to write")
        slot = self.slots[self.taken % len(self.slots)]
        self.taken += 1
        return slot

    @property
    def filled(self) -> list[T]:
        """The slots holding a snapshot, oldest first."""
        count = min(self.taken, len(self.slots))
        if self.taken <= len(self.slots):
            return self.slots[:count]
        start = self.taken % len(self.slots)
        return self.slots[start:] + self.slots[:start]


class Curriculum:
    """Graded opponents, weakest first; the learner moves on once it beats the current one.

    Args:
        stages: ``(name, opponent)`` pairs, in the order to meet them.
        threshold: the learner's score over the last ``window`` games against
            the current stage that promotes it, in (0, 1].
        window: games judged (all of them, once ``window`` are played).
    """

    def __init__(
        self, stages: Iterable[tuple[str, Any]], threshold: float = 0.7, window: int = 100
    ) -> None:
        self.check_settings(threshold, window)
        self.stages = [Entry(name, opponent, added=i) for i, (name, opponent) in enumerate(stages)]
        if not self.stages:
            raise ValueError("a curriculum needs at least one stage")
        names = [stage.name for stage in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"curriculum stage names repeat: {names}")
        self.threshold = float(threshold)
        self.window = window
        self.stage = 0
        self.recent: deque[float] = deque(maxlen=window)
        #: ``(stage name reached, games the learner had played in the curriculum)``
        self.promotions: list[tuple[str, int]] = []
        self._games = 0

    @staticmethod
    def check_settings(threshold: float, window: int) -> None:
        """ValueError naming ``threshold`` or ``window`` unless a curriculum can use them."""
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {threshold!r}")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be a positive int, not {window!r}")

    @property
    def current(self) -> Entry:
        return self.stages[self.stage]

    @property
    def entries(self) -> list[Entry]:
        return list(self.stages)

    @property
    def finished(self) -> bool:
        """Whether the learner has reached the last stage."""
        return self.stage == len(self.stages) - 1

    def __contains__(self, entry: object) -> bool:
        return any(entry is e for e in self.stages)

    def sample(self, rng: np.random.Generator) -> Entry:
        return self.current

    def record(self, entry: Entry, reward: float) -> None:
        """Count the game; a game against an earlier stage counts for it only."""
        entry.record(reward)
        self._games += 1
        if entry is not self.current:
            return
        self.recent.append(learner_score(reward))
        full = len(self.recent) == self.window
        if full and not self.finished and np.mean(self.recent) >= self.threshold:
            self.stage += 1
            self.recent.clear()
            self.promotions.append((self.current.name, self._games))

    def close(self) -> None:
        for entry in self.stages:
            _close(entry.opponent)


@dataclass
class League:
    """Samplers mixed with fixed weights: each episode, one is chosen, then it chooses."""

    members: Sequence[tuple[float, OpponentSampler]]
    _weights: np.ndarray = field(init=False, repr=False)
    #: id(entry) -> (entry, the sampler that chose it, games not yet recorded), until
    #: the last result comes back: a pool may drop a snapshot while games against it
    #: (several at once in a vector environment) are still being played.
    _chosen: dict[int, tuple[Entry, OpponentSampler, int]] = field(
        init=False, repr=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError("a league needs at least one sampler")
        weights = np.array([float(w) for w, _ in self.members])
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise ValueError(f"league weights must be finite, >= 0, not all 0: {weights.tolist()}")
        for _, sampler in self.members:
            if not is_sampler(sampler):
                raise TypeError(f"{sampler!r} is not an opponent sampler (sample, record, in)")
        self._weights = weights / weights.sum()

    def sample(self, rng: np.random.Generator) -> Entry:
        index = int(rng.choice(len(self.members), p=self._weights))
        sampler = self.members[index][1]
        entry = sampler.sample(rng)
        chosen = self._chosen.get(id(entry))
        games = chosen[2] + 1 if chosen is not None and chosen[0] is entry else 1
        self._chosen[id(entry)] = (entry, sampler, games)
        return entry

    def record(self, entry: Entry, reward: float) -> None:
        """Send the result to the sampler that chose ``entry`` (still a member or not)."""
        chosen = self._chosen.get(id(entry))
        if chosen is not None and chosen[0] is entry:
            sampler, games = chosen[1], chosen[2] - 1
            if games > 0:
                self._chosen[id(entry)] = (entry, sampler, games)
            else:  # its last game under way: forget it
                del self._chosen[id(entry)]
        else:
            sampler = next((s for _, s in self.members if entry in s), None)  # type: ignore[assignment]
            if sampler is None:
                raise ValueError(f"opponent {entry.name!r} belongs to no sampler of this league")
        sampler.record(entry, reward)

    def __contains__(self, entry: object) -> bool:
        return any(entry in sampler for _, sampler in self.members)

    @property
    def entries(self) -> list[Entry]:
        """Every member of every sampler (each once)."""
        seen: dict[int, Entry] = {}
        for _, sampler in self.members:
            for entry in getattr(sampler, "entries", []):
                seen.setdefault(id(entry), entry)
        return list(seen.values())

    def close(self) -> None:
        for _, sampler in self.members:
            _close(sampler)


def label_league(
    learner: str,
    snapshots: Sequence[str],
    self_share: float,
    recency: float = 0.8,
    fixed: Sequence[str] = (),
    fixed_share: float = 0.0,
    fixed_weights: Sequence[float] | None = None,
) -> League:
    """The learner's opponent as a label (an RLlib module id): ``fixed_share`` of the games
    one of ``fixed``, each as often (or in proportion to ``fixed_weights``); of the others,
    ``self_share`` the ``learner`` itself and the rest one of ``snapshots`` (the filled
    slots, oldest first) by recency.

    No ``fixed``: no games against them; no ``snapshots``: the learner itself instead.
    Each member's ``name`` and ``opponent`` are its label.
    """
    for name, share in (("self_share", self_share), ("fixed_share", fixed_share)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], not {share!r}")
    outside = fixed_share if fixed else 0.0
    among = self_share if snapshots else 1.0
    if fixed_weights is not None and len(fixed_weights) != len(fixed):
        raise ValueError(f"{len(fixed_weights)} fixed_weights for {len(fixed)} fixed opponents")
    weights = dict(zip(fixed, fixed_weights)) if fixed_weights is not None else {}
    members: list[tuple[float, OpponentSampler]] = []
    for share, labels, strategy in (
        (outside, fixed, "weighted" if weights else "uniform"),
        ((1.0 - outside) * among, [learner], "uniform"),
        ((1.0 - outside) * (1.0 - among), snapshots, "recent"),
    ):
        if labels:
            pool = OpponentPool(strategy, max_snapshots=max(len(labels), 1), recency=recency)
            for label in labels:
                pool.add(
                    label, label, snapshot=strategy == "recent", weight=weights.get(label, 1.0)
                )
            members.append((share, pool))
    return League(members)


__all__ = [
    "MIXES",
    "STRATEGIES",
    "WINDOW",
    "Curriculum",
    "Entry",
    "League",
    "OpponentPool",
    "OpponentSampler",
    "SnapshotSlots",
    "is_sampler",
    "label_league",
    "learner_score",
]
