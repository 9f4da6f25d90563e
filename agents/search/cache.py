"""Network evaluations remembered by position: a transposition-keyed cache in front of an evaluator.

A network's answer depends on the position alone (its planes are a function
of :meth:`~yinsh_env.engine.state.State.key`, which :func:`~yinsh_env.envs.observation.decode`
inverts), so a position met again (a transposition inside one search, or,
far more often, a position the previous decision's search already reached:
the opponent's reply and our own next position) need not be evaluated again.
Playing ``pretrained`` against itself, about a third of a game's leaf
evaluations repeat one the same agent made earlier in the game, and about one
in twenty repeats one of the same search; on the agent's one position at a
time each costs a network run (half a millisecond on one core).

Like Lc0's and KataGo's neural-network caches the key is the exact position
(:attr:`~agents.search.tree.Leaf.key`, set by
:func:`~agents.search.core.network_leaf`; a leaf without one is always
evaluated), and the cache is bounded: least recently used entries go first.
Answers are the evaluator's own arrays, so a search plays the same moves with
and without the cache wherever the evaluator answers a position the same way
each time (one position a batch, as the agents evaluate).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Final

import numpy as np

from agents.search.core import BatchEvaluator
from agents.search.tree import Leaf

#: Positions remembered by default: several decisions' searches at 256 simulations.
DEFAULT_CAPACITY: Final = 8192


class EvaluationCache:
    """A :data:`~agents.search.core.BatchEvaluator` that evaluates each remembered position once."""

    def __init__(self, evaluate: BatchEvaluator, capacity: int = DEFAULT_CAPACITY) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise TypeError(f"cache capacity must be an int, got {capacity!r}")
        if capacity < 1:
            raise ValueError(f"cache capacity must be at least 1, got {capacity}")
        self.evaluate = evaluate
        self.capacity = capacity
        self._store: dict[Hashable, tuple[np.ndarray, float]] = {}
        #: Leaves answered from the cache, and leaves sent to the evaluator.
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._store)

    def clear(self) -> None:
        """Forget every position (e.g. when the network's weights change)."""
        self._store.clear()

    def __call__(self, leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
        store = self._store
        if len(leaves) == 1 and (key := leaves[0].key) is not None:  # an agent's search
            found = store.pop(key, None)
            if found is None:
                logits, values = self.evaluate(leaves)
                found = (logits[0], float(values[0]))
                self.misses += 1
                if len(store) >= self.capacity:
                    del store[next(iter(store))]
            else:
                self.hits += 1
            store[key] = found  # most recently used goes last
            return [found[0]], np.array([found[1]])
        answers: list[tuple[np.ndarray, float] | None] = []
        missing: list[Leaf] = []
        for leaf in leaves:
            found = None if leaf.key is None else store.pop(leaf.key, None)
            if found is not None:
                store[leaf.key] = found  # most recently used goes last
            else:
                missing.append(leaf)
            answers.append(found)
        self.hits += len(leaves) - len(missing)
        self.misses += len(missing)
        if missing:
            logits, values = self.evaluate(missing)
            fresh = iter(zip(logits, values.tolist()))
            for i, answer in enumerate(answers):
                if answer is None:
                    answers[i] = answer = next(fresh)
                    key = leaves[i].key
                    if key is not None:
                        store[key] = answer
            while len(store) > self.capacity:
                del store[next(iter(store))]
        done = [a for a in answers if a is not None]
        return [a[0] for a in done], np.array([a[1] for a in done])
