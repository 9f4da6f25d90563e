"""RLlib's PPO learner with the single-file PPO's Adam and advantage standardisation.

Two details of PPO where RLlib's learner differs from the single-file PPO's
(:mod:`train.libraries.ppo`), and the recipes' learner takes the PPO's:

* **Adam's epsilon.**  RLlib's
  :class:`~ray.rllib.core.learner.torch.torch_learner.TorchLearner` builds
  ``torch.optim.Adam(params)`` with torch's default, 1e-8.  The single-file PPO,
  CleanRL, SB3 and the TorchRL recipe use 1e-5 (detail 3 of "The 37
  Implementation Details of PPO"): with gradients clipped to a global norm of 0.5,
  a weight whose gradient is nearly always zero otherwise takes full-size steps
  from noise.  Set through RLlib's own hook (``configure_optimizers_for_module``);
  the rate is RLlib's schedule's, as before.
* **Advantages standardised per minibatch.**  RLlib's GAE connector standardises
  them once over the whole batch, its artificial last step of each episode chunk
  (zero advantage, masked out of the loss) included.  The single-file PPO, CleanRL
  and SB3 standardise each minibatch over its own rows.  The loss here
  standardises each minibatch again over its unmasked rows; standardising is
  affine, so this equals the PPO's standardisation of the raw advantages.

>>> RecipeLearner.ADAM_EPS
1e-05
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing


class RecipeLearner(PPOTorchLearner):
    """PPO's torch learner with the single-file PPO's Adam epsilon and its advantage
    standardisation, minibatch by minibatch."""

    ADAM_EPS = 1e-5

    def configure_optimizers_for_module(self, module_id: Any, config: Any = None) -> None:
        params = self.get_parameters(self.module[module_id])
        self.register_optimizer(
            module_id=module_id,
            optimizer=torch.optim.Adam(params, eps=self.ADAM_EPS),
            params=params,
            lr_or_lr_schedule=config.lr,
        )

    def compute_loss_for_module(
        self, *, module_id: Any, config: Any, batch: dict[str, Any], fwd_out: dict[str, Any]
    ) -> Any:
        advantages = batch[Postprocessing.ADVANTAGES]
        valid = batch.get(Columns.LOSS_MASK)
        rows = advantages if valid is None else advantages[valid.bool()]
        if rows.numel() > 1:  # the PPO's formula: (a - mean) / (unbiased std + 1e-8)
            advantages = (advantages - rows.mean()) / (rows.std() + 1e-8)
        return super().compute_loss_for_module(
            module_id=module_id,
            config=config,
            batch={**batch, Postprocessing.ADVANTAGES: advantages},
            fwd_out=fwd_out,
        )
