"""The RLlib example's masked policy module: what an ``rllib:`` checkpoint holds.

:class:`MaskedPolicyModule` (a conv trunk over the planes, logits masked by
the legal-action mask) is the module :mod:`train.libraries.rllib_example`
trains and saves; a checkpoint refers to it by class path, so it lives beside
the loader (:mod:`agents.learned.rllib_agent`), which plays a checkpoint
without the trainer.  Needs the ``rllib`` extra.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.learned.small_cnn import conv_trunk
from yinsh_env.engine.actions import N_ACTIONS

try:
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'an RLlib policy needs Ray RLlib, an optional extra: pip install -e ".[rllib]"'
    ) from exc

#: The module id of the policy being trained (the one an ``rllib:`` agent plays).
LEARNER = "learner"


def model_settings(model_config: Any) -> dict[str, Any]:
    """An RLModule's ``model_config`` (a dict, RLlib's dataclass, or None) as a dict."""
    if model_config is None:
        return {}
    if isinstance(model_config, dict):
        return model_config
    return dataclasses.asdict(model_config)


def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions' logits set to the lowest float; rows with no legal action unchanged."""
    legal = mask.bool()
    keep = legal | ~legal.any(dim=-1, keepdim=True)
    return torch.where(keep, logits, torch.finfo(logits.dtype).min)


#: The module's networks: ``model_config["network"]``.
NETWORKS = ("cnn", "ppo")


class MaskedPolicyModule(TorchRLModule, ValueFunctionAPI):
    """Policy and value for PPO: a network over the planes, logits masked by the mask.

    ``model_config``: ``network`` (:data:`NETWORKS`), ``channels`` (conv filters,
    default 16), ``hidden`` and ``blocks``.

    * ``"cnn"`` (the default): a conv trunk, then ``hidden`` units (default 128)
      shared by dense heads.  A 1x1 convolution squeezes the trunk to 8 channels
      before the dense layer, which keeps the module small (about 0.4 million
      weights) and fast on a CPU.
    * ``"ppo"``: the single-file PPO's network,
      :class:`~agents.learned.ppo_policy.PPOPolicy` with ``blocks`` residual blocks
      (default 2): fully convolutional logits, so each action is read at its board
      points.  Its "embeddings", passed from the training pass to
      :meth:`compute_values`, are the values themselves.
    """

    def setup(self) -> None:
        settings = model_settings(self.model_config)
        channels = int(settings.get("channels", 16))
        self.network = str(settings.get("network", "cnn"))
        if self.network not in NETWORKS:
            raise ValueError(f"unknown network {self.network!r}; expected one of {NETWORKS}")
        if self.network == "ppo":
            from agents.learned.ppo_policy import PPOPolicy

            self.net = PPOPolicy(channels, int(settings.get("blocks", 2)))
            return
        hidden = int(settings.get("hidden", 128))
        self.trunk = conv_trunk(channels, hidden)
        self.policy_head = nn.Linear(hidden, N_ACTIONS)
        self.value_head = nn.Linear(hidden, 1)
        nn.init.normal_(self.policy_head.weight, std=0.01)
        nn.init.zeros_(self.policy_head.bias)

    def _embed(self, batch: dict[str, Any]) -> torch.Tensor:
        planes = batch[Columns.OBS]["observation"].float()
        if self.network == "ppo":
            return self.net(planes)[1]
        return self.trunk(planes.permute(0, 3, 1, 2))  # channel-last planes -> NCHW

    def _outputs(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        mask = batch[Columns.OBS]["action_mask"]
        if self.network == "ppo":
            raw, values = self.net(batch[Columns.OBS]["observation"].float())
            return values, mask_logits(raw, mask)
        embeddings = self._embed(batch)
        return embeddings, mask_logits(self.policy_head(embeddings), mask)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        _, logits = self._outputs(batch)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        # the values come with the logits: kept with each sampled step, where the
        # learner's GAE reads them (compute_values) instead of a second pass
        embeddings, logits = self._outputs(batch)
        values = self.compute_values(batch, embeddings)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.VF_PREDS: values}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        embeddings, logits = self._outputs(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: embeddings}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None and Columns.VF_PREDS in batch:
            return self._sampled_values(batch)
        if embeddings is None:
            embeddings = self._embed(batch)
        if self.network == "ppo":
            return embeddings  # the values (see the class docstring)
        return self.value_head(embeddings).squeeze(-1)

    def _sampled_values(self, batch: dict[str, Any]) -> torch.Tensor:
        """The values sampled with the batch's steps, by the weights the learner still
        has (PPO samples with the learner's weights, then updates), computed afresh
        only at RLlib's artificial last steps (``loss_mask`` 0), which were never sampled.
        """
        values = torch.as_tensor(batch[Columns.VF_PREDS]).float().clone()
        mask = batch.get(Columns.LOSS_MASK)
        if mask is None:
            return values
        fresh = ~torch.as_tensor(mask).bool()
        if bool(fresh.any()):
            observations = {key: item[fresh] for key, item in batch[Columns.OBS].items()}
            values[fresh] = self.compute_values({Columns.OBS: observations})
        return values

    def masked_logits(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The masked logits over the 2142 actions for one environment observation."""
        return self.masked_logits_batch(
            {key: np.asarray(observation[key])[None] for key in ("observation", "action_mask")}
        )[0]

    def masked_logits_batch(self, observations: dict[str, np.ndarray]) -> np.ndarray:
        """(n, 2142) masked logits for n observations (planes and masks stacked): one pass."""
        batch = {
            Columns.OBS: {
                "observation": torch.as_tensor(observations["observation"]),
                "action_mask": torch.as_tensor(observations["action_mask"]),
            }
        }
        with torch.no_grad():
            logits = self.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return logits.numpy()

    def greedy_action(self, observation: dict[str, np.ndarray]) -> int:
        """The most likely legal action for one environment observation."""
        return int(self.masked_logits(observation).argmax())
