"""RLlib's PPO learner with the single-file PPO's Adam: epsilon 1e-5, not torch's 1e-8.

RLlib's :class:`~ray.rllib.core.learner.torch.torch_learner.TorchLearner` builds
``torch.optim.Adam(params)`` with torch's default epsilon.  The single-file PPO,
CleanRL, SB3 and the TorchRL recipe all use 1e-5 (the "37 implementation
details" of PPO, detail 3): with gradients clipped to a global norm of 0.5 over
about 15,000 weights, a weight whose gradient is nearly always zero (the pass
logit, say) otherwise takes full-size steps from noise.  The recipes set it here,
through RLlib's own hook for an optimizer (``configure_optimizers_for_module``);
the learning-rate schedule, which sets the optimizer's rate, is RLlib's as before.

>>> RecipeLearner.ADAM_EPS
1e-05
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner


class RecipeLearner(PPOTorchLearner):
    """PPO's torch learner whose Adam has the single-file PPO's epsilon."""

    ADAM_EPS = 1e-5

    def configure_optimizers_for_module(self, module_id: Any, config: Any = None) -> None:
        params = self.get_parameters(self.module[module_id])
        self.register_optimizer(
            module_id=module_id,
            optimizer=torch.optim.Adam(params, eps=self.ADAM_EPS),
            params=params,
            lr_or_lr_schedule=config.lr,
        )
