"""What the agents playing RL-library policies share (``sb3:``, ``rllib:``).

Each library gives a distribution over the 2,142 actions in its own way; the
agent plays its most likely legal action (``greedy=true``, the default) or
samples one with its own seeded generator, on ``threads`` torch threads.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.base import Agent
from yinsh_env.state import State


class LibraryPolicyAgent(Agent):
    """An agent over a trained policy: subclasses give :meth:`legal_probabilities`."""

    def __init__(self, seed: int | None = None, greedy: bool = True, threads: int = 1) -> None:
        super().__init__(seed)
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.greedy = greedy
        torch.set_num_threads(threads)
        self.np_rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self.np_rng = np.random.default_rng(seed)

    def legal_probabilities(self, state: State) -> np.ndarray:
        """Probabilities (or any non-negative weights) over all actions, 0 where illegal."""
        raise NotImplementedError

    def act(self, state: State) -> int:
        weights = self.legal_probabilities(state).astype(np.float64)
        if self.greedy:
            return int(np.argmax(weights))
        return int(self.np_rng.choice(len(weights), p=weights / weights.sum()))
