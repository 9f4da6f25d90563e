"""RLlib's PPO learner made the single-file PPO's: its Adam, its standardisation, its rows.

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

And one for pace: RLlib's learner keeps the artificial steps in the batch it cuts
into minibatches, out of the loss by ``loss_mask`` but not out of the forward and
backward passes.  With 64 games sampled 32 steps at a time, each game's chunk adds
one, and each game that ends: about 130 rows an iteration of 2,100 decisions.
:class:`DropArtificialSteps`, the last piece of the learner's connector pipeline
(after GAE, which needs them for its bootstrap values), removes them, and the
learner trains on the decisions alone, as the single-file PPO does.  (The values
GAE reads are the ones sampled with each step, which
:class:`~agents.learned.rllib_models.MaskedPolicyModule` keeps, rather than a
second pass over the batch.)

>>> RecipeLearner.ADAM_EPS
1e-05
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing

from train.libraries.ppo import ADAM_EPS


def _rows(value: Any, keep: torch.Tensor) -> Any:
    """``value`` (a tensor, or a dict of them as the observations are) at the rows kept."""
    if isinstance(value, dict):
        return {key: _rows(item, keep) for key, item in value.items()}
    if not isinstance(value, torch.Tensor) or value.shape[:1] != keep.shape:
        raise ValueError(
            f"a batch column of {type(value).__name__} {getattr(value, 'shape', '')}"
            f" is not one row per step ({keep.shape[0]} steps)"
        )
    return value[keep]


class DropArtificialSteps(ConnectorV2):
    """The learner pipeline's last piece: each module's rows out of the loss removed,
    and with them the ``loss_mask`` column (every row left is a decision)."""

    def __call__(
        self, *, rl_module: Any, batch: dict[str, Any], episodes: Any, **kwargs: Any
    ) -> Any:
        for module_id, columns in list(batch.items()):
            mask = columns.get(Columns.LOSS_MASK)
            if mask is None:
                continue
            keep = torch.as_tensor(mask).bool()
            rest = {key: value for key, value in columns.items() if key != Columns.LOSS_MASK}
            batch[module_id] = rest if bool(keep.all()) else _rows(rest, keep)
        return batch


class RecipeLearner(PPOTorchLearner):
    """PPO's torch learner with the single-file PPO's Adam epsilon and its advantage
    standardisation, minibatch by minibatch, training on the decisions alone."""

    ADAM_EPS = ADAM_EPS

    def build(self) -> None:
        super().build()
        if (
            self._learner_connector is not None
            and self.config.add_default_connectors_to_learner_pipeline
        ):
            self._learner_connector.append(DropArtificialSteps())

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
