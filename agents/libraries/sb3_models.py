"""The MaskablePPO networks a saved model names: the planes CNN, and the shipped network.

:class:`PlanesCNN` is :mod:`train.libraries.sb3_maskable_ppo`'s features
extractor; :class:`PretrainedNet` and :class:`PretrainedPolicy` warm-start
MaskablePPO from the shipped network (``--warm-start``).  A saved model
refers to them by class path, so they live beside the loader
(:mod:`agents.libraries.sb3_agent`), which plays a model without the trainer.

The project's network (:class:`~agents.network.network.PolicyValueNet`, the weights
``pretrained`` plays) becomes the whole policy: :class:`PretrainedNet`, the
features extractor, runs it and hands on its 2,142 action logits and its
value head's hidden layer; :class:`PretrainedPolicy` reads the logits as
they are (no new layer in between, so before any update the policy *is*
``pretrained:sims=0``) and a value layer initialised from the network's
own.  PPO then fine-tunes every weight.  Batch normalisation keeps the
statistics it was trained with (its layers stay in eval mode): PPO's small,
correlated batches would otherwise replace them.

A saved model names these classes and the shipped network it started from
(``weights``: ``pretrained`` by default, ``anchor-v1`` the first one), by name,
not by path, so ``sb3:path=MODEL.zip`` loads it on any machine like any other
(the weights in the zip replace the shipped ones).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from agents.network.checkpoint import load_network
from agents.network.pretrained import weights_path
from yinsh_env.actions import N_ACTIONS

from .small_cnn import conv_trunk

try:
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'the warm start needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc


class PlanesCNN(BaseFeaturesExtractor):
    """Two 3x3 convolutions over the planes, a 1x1 squeeze to 8 channels, one dense layer.

    Reads ``observation`` (channel-last planes) and ignores ``action_mask``.
    """

    def __init__(self, observation_space: Any, channels: int = 16, features_dim: int = 128) -> None:
        super().__init__(observation_space, features_dim)
        height, width, planes = observation_space["observation"].shape
        self.net = conv_trunk(channels, features_dim, planes, height * width)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.net(observations["observation"].permute(0, 3, 1, 2))


class PretrainedNet(BaseFeaturesExtractor):
    """A shipped network by name (or the checkpoint at ``path``): logits, then value features."""

    def __init__(
        self, observation_space: Any, path: str | None = None, weights: str = "pretrained"
    ) -> None:
        net, _, _ = load_network(path or weights_path(weights))
        super().__init__(observation_space, N_ACTIONS + net.config.value_hidden)
        self.net = net
        self.value_hidden = net.config.value_hidden

    def train(self, mode: bool = True) -> PretrainedNet:
        """Batch norm stays in eval mode, whatever ``mode``: its statistics are kept."""
        super().train(mode)
        for module in self.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.eval()
        return self

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        net = self.net  # PolicyValueNet.forward's steps, the tower run once for both heads
        x = net.tower(net.stem(observations["observation"].float().permute(0, 3, 1, 2)))
        pooled = net._pool(x)
        logits = net._logits(net.policy_planes(net.policy_conv(x)), net.pass_logit(pooled))
        return torch.cat([logits, net.value_fc(pooled)], dim=1)


class _Logits(nn.Module):
    """The features' first 2,142 entries: the network's own action logits."""

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, :N_ACTIONS]


class _Value(nn.Linear):
    """A linear value over the network's value features, started from its value layer."""

    def __init__(self, value_out: nn.Linear) -> None:
        super().__init__(value_out.in_features, 1)
        self.load_state_dict(value_out.state_dict())

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return super().forward(features[:, N_ACTIONS:])


class PretrainedPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO's policy with :class:`PretrainedNet` as everything but the value layer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", PretrainedNet)
        kwargs["net_arch"] = []  # the logits go straight to the distribution
        kwargs["ortho_init"] = False  # orthogonal init would overwrite the network
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        extractor = self.features_extractor
        assert isinstance(extractor, PretrainedNet)
        self.action_net = _Logits()
        self.value_net = _Value(extractor.net.value_out)
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )


__all__ = ["PretrainedNet", "PretrainedPolicy"]
