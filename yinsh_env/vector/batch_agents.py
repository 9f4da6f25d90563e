"""Opponents that decide for many games at once: the batched agent interface.

A batch opponent has ``act_batch(observations, masks, rng) -> actions``:
``observations`` (n, 11, 11, 17) float32 planes and ``masks`` (n, 2142) int8
of the n games where it is to act, each from its own side, exactly as the
scalar environment shows them; it returns n legal action indices.  ``rng``
is the environment's seeded generator, so seeded runs repeat.  An opponent
whose ``observes`` attribute is False (uniformly random play) is given
``None`` for the planes, which then cost nothing to make; one with
``reset(seed=...)`` is reseeded from the environment's generator at every
seeded ``reset``, as the scalar environment reseeds its agents.

Opponents can also decide together: those whose ``joint`` attribute is the
same object (not None) are asked through it once a round, for all their
games at once (:class:`JointOpponents`; a self-play snapshot pool runs its
snapshots' networks in one pass this way).

Network agents and library snapshots implement ``act_batch`` directly (one
forward pass for the batch), and so does the greedy agent
(``agents.make_agent("greedy")``, its values computed in array operations by
``agents.baselines.greedy_batch``).  Anything the scalar environment accepts as an
opponent is adapted by :func:`batch_opponent`: agents with ``act(state)``
(the searches) and ``act_observation(observation)``, and callables, are
asked one game at a time, since their own decision is the cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from yinsh_env.envs.observation import decode

__all__ = [
    "BatchOpponent",
    "JointOpponents",
    "ObservationOpponent",
    "RandomOpponent",
    "StateOpponent",
    "batch_opponent",
    "random_legal",
]


@runtime_checkable
class BatchOpponent(Protocol):
    """Chooses one legal action in each of n games."""

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray: ...


@runtime_checkable
class JointOpponents(Protocol):
    """Decides for several opponents at once: the ``joint`` of each of them.

    ``requests`` holds one ``(opponent, observations, masks)`` per opponent with
    games to play this round, as ``act_batch`` would be given them; the answer
    is one array of actions per request, in order.
    """

    def act_joint(
        self,
        requests: Sequence[tuple[Any, np.ndarray | None, np.ndarray]],
        rng: np.random.Generator,
    ) -> Sequence[np.ndarray]: ...


#: _NTH_SET[byte, k]: the position (0 = most significant) of the k-th set bit of ``byte``.
_NTH_SET = np.zeros((256, 8), dtype=np.int64)
for _byte in range(256):
    _set = [i for i in range(8) if _byte & (0x80 >> i)]
    _NTH_SET[_byte, : len(_set)] = _set
_NTH_SET.flags.writeable = False
#: Up to this many rows, random_legal draws row by row.
_FEW = 8


def random_legal(
    masks: np.ndarray, rng: np.random.Generator, rows: np.ndarray | None = None
) -> np.ndarray:
    """(n,) one legal action per row of ``masks``, uniformly at random.

    ``rows`` (an index array) draws for those rows only, reading the masks
    once (where ``masks[rows]`` would copy them first).  The masks are packed
    64 actions to a word and only the words holding a legal action are walked
    (a few per game, not 2,142 entries each): a uniform draw among a row's
    legal actions picks a word by the running count of set bits, then a byte
    of that word, then a bit of that byte.  Raises ValueError naming the row
    if a mask has no legal action.
    """
    width = masks.shape[1]
    count = masks.shape[0] if rows is None else rows.size
    if count <= _FEW:
        return _random_few(masks, rng, range(count) if rows is None else rows.tolist())
    if rows is None:
        packed = np.packbits(masks, axis=1)
    elif 4 * rows.size < masks.shape[0]:  # a few rows: copy them rather than pack them all
        packed = np.packbits(masks[rows], axis=1)
    else:
        packed = np.packbits(masks, axis=1)[rows]
    n = packed.shape[0]
    words = -(-width // 64)
    buffer = np.zeros((n, words * 8), dtype=np.uint8)
    buffer[:, : packed.shape[1]] = packed
    flat = buffer.view(np.uint64).reshape(-1)  # bytes in memory order, as the actions run
    where = flat.nonzero()[0]
    held = flat[where]
    counts = np.bitwise_count(held)
    ends = np.zeros(where.size + 1, dtype=np.int64)  # set bits before each held word
    counts.cumsum(out=ends[1:])
    rows = ends[np.searchsorted(where, np.arange(n + 1) * words)]
    totals = rows[1:] - rows[:-1]
    if not totals.all():
        raise ValueError(f"masks row {int(np.argmin(totals))} has no legal action")
    pick = rows[:-1] + (rng.random(n) * totals).astype(np.int64)
    word = np.searchsorted(ends, pick, side="right") - 1
    nth = pick - ends[word]  # the nth set bit of the chosen word
    chosen = held[word].view(np.uint8).reshape(n, 8)
    byte_counts = np.bitwise_count(chosen)
    upto = byte_counts.cumsum(axis=1, dtype=np.uint8)
    byte = (upto > nth[:, None]).argmax(axis=1)
    arange = np.arange(n)
    nth = nth - upto[arange, byte] + byte_counts[arange, byte]
    return np.asarray(
        where[word] % words * 64 + byte * 8 + _NTH_SET[chosen[arange, byte], nth], dtype=np.int64
    )


def _random_few(masks: np.ndarray, rng: np.random.Generator, rows: Iterable[int]) -> np.ndarray:
    """random_legal for a few rows, one row at a time (fewer array calls than packing)."""
    chosen: list[int] = []
    for row, draw in zip(rows, rng.random(_FEW).tolist()):
        legal = np.flatnonzero(masks[row])
        if not legal.size:
            raise ValueError(f"masks row {len(chosen)} has no legal action")
        chosen.append(int(legal[int(draw * legal.size)]))
    return np.array(chosen, dtype=np.int64)


class RandomOpponent:
    """Uniformly random legal actions (the scalar environment's ``opponent=None``)."""

    observes = False
    name = "random"

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return random_legal(masks, rng)


class _PerGame:
    """An agent asked one game at a time; ``reset(seed=...)`` reaches the agent."""

    observes = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def reset(self, seed: int | None = None) -> None:
        reseed = getattr(self.agent, "reset", None)
        if callable(reseed):
            reseed(seed=seed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.agent!r})"


class StateOpponent(_PerGame):
    """An agent with ``act(state)`` (a search, say), asked game by game.

    Each game's exact engine state is read back from its observation
    (:func:`yinsh_env.envs.observation.decode`), so the agent chooses as it does
    in the scalar environment.
    """

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        if observations is None:
            raise ValueError("StateOpponent needs the observations")
        return np.array([int(self.agent.act(decode(o))) for o in observations], dtype=np.int64)


class ObservationOpponent(_PerGame):
    """An agent with ``act_observation(observation)``, or a callable taking the
    observation dict, asked game by game."""

    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        method = getattr(agent, "act_observation", None)
        self._call = method if callable(method) else agent

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        if observations is None:
            raise ValueError("ObservationOpponent needs the observations")
        return np.array(
            [
                int(self._call({"observation": o, "action_mask": m}))
                for o, m in zip(observations, masks)
            ],
            dtype=np.int64,
        )


def batch_opponent(opponent: Any) -> BatchOpponent:
    """``opponent`` as a batch opponent: None or ``"random"`` plays uniformly at random;
    objects with ``act_batch`` are used as they are; ``act(state)``,
    ``act_observation`` and callables are wrapped.  Another string (an agent spec
    such as ``"greedy"``) is a ValueError naming the agent object to pass instead
    (``agents.make_agent("greedy")``: the engine knows no agents); TypeError for
    anything else."""
    if opponent is None or (isinstance(opponent, str) and opponent == "random"):
        return RandomOpponent()
    if isinstance(opponent, str):
        raise ValueError(
            f"opponent {opponent!r}: pass an agent, not its spec: "
            f"agents.make_agent({opponent!r}) (greedy, network and library agents decide "
            "for all their games at once); the only string the vector env takes is 'random'"
        )
    if callable(getattr(opponent, "act_batch", None)):
        return opponent
    if callable(getattr(opponent, "act", None)):
        return StateOpponent(opponent)
    if callable(getattr(opponent, "act_observation", None)) or callable(opponent):
        return ObservationOpponent(opponent)
    raise TypeError(
        f"opponent {opponent!r} is neither None, 'random', a batch opponent (act_batch), "
        "an agent (act / act_observation) nor callable"
    )
