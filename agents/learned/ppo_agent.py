"""A policy of the single-file PPO as an agent: spec ``ppo:path=POLICY.pt``.

The file is one that :mod:`train.libraries.ppo` saved (``--save``), loaded
with ``weights_only=True`` (:func:`~agents.learned.ppo_policy.load_policy`).
Each decision encodes the position from the acting player's side and takes
the policy's distribution over the legal actions: ``greedy=true`` (default)
plays the most likely legal action, ``greedy=false`` samples with the agent's
seeded generator.  The variant recorded in the file is the agent's, so the
arena refuses to play it in another.  ``act_batch`` decides for many games at
once (the vector environment's opponent interface) through
:meth:`batch_probabilities`, one forward pass for all of them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.learned.library_agent import SavedPolicyAgent
from agents.learned.ppo_policy import PPOPolicy, load_policy, masked_logits
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode


class PPOAgent(SavedPolicyAgent):
    """Plays a policy trained by ``train.libraries.ppo``, masks applied."""

    policy: PPOPolicy

    def load(self, path: str) -> Path:
        self.policy, self._variant = load_policy(path)
        return Path(path)

    def variant(self, record: Path) -> int | None:
        return self._variant  # recorded in the policy file itself

    def legal_probabilities(self, state: State) -> np.ndarray:
        mask = state.legal_mask().astype(bool)
        planes = torch.as_tensor(encode(state)[None], dtype=torch.float32)
        with torch.no_grad():
            logits, _ = self.policy(planes)
            probs = torch.softmax(masked_logits(logits, torch.as_tensor(mask[None])), dim=-1)
        return probs[0].numpy().astype(np.float64) * mask

    def batch_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(n, 2142) the policy's probabilities for n games in one forward pass, 0 where illegal."""
        with torch.no_grad():
            logits, _ = self.policy(torch.as_tensor(observations, dtype=torch.float32))
            probs = torch.softmax(masked_logits(logits, torch.as_tensor(masks)), dim=-1)
        return probs.numpy().astype(np.float64) * (np.asarray(masks) != 0)
