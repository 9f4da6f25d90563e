"""A policy of the TorchRL recipe as an agent: spec ``torchrl:path=POLICY.pt``.

:mod:`train.libraries.torchrl_ppo` trains the single-file PPO's network
(:class:`~agents.learned.ppo_policy.PPOPolicy`) with TorchRL's parts and saves
its plain ``state_dict`` and sizes, as the ``ppo:`` agent's files are saved,
under the format :data:`TORCHRL_FILES` names.  So the agent plays as
:class:`~agents.learned.ppo_agent.PPOAgent` does (greedy or sampled over the
legal actions, batched for the vector environment, the variant from the file)
and needs torch only, not TorchRL.  The file is read with ``weights_only=True``;
a missing, damaged or foreign file is a ``ValueError`` naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from agents.learned.ppo_agent import PPOAgent
from agents.learned.ppo_policy import PolicyFiles, load_policy

#: The TorchRL recipe's policies (``torchrl:path=FILE``).
TORCHRL_FILES: Final = PolicyFiles(
    "yinsh-torchrl-policy", "train.libraries.torchrl_ppo", "torchrl", "TorchRL policy"
)


class TorchRLAgent(PPOAgent):
    """Plays a policy trained by ``train.libraries.torchrl_ppo``, masks applied."""

    def load(self, path: str) -> Path:
        self.policy, self._variant = load_policy(path, TORCHRL_FILES)
        return Path(path)
