"""The MaskablePPO networks a saved model names: the planes CNN, the PPO's, the shipped one.

:class:`PlanesCNN` is :mod:`train.libraries.sb3_maskable_ppo`'s features
extractor, in :class:`PlanesPolicy` (which runs in bf16 where that is native);
:class:`PPONetPolicy` is the single-file PPO's network
(:class:`~agents.learned.ppo_policy.PPOPolicy`, ``--network ppo``), so that one
recipe is one network in every library;
:class:`PretrainedNet` and :class:`PretrainedPolicy` warm-start
MaskablePPO from the shipped network (``--warm-start``).  A saved model
refers to them by class path, so they live beside the loader
(:mod:`agents.learned.sb3_agent`), which plays a model without the trainer.

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

from agents.learned.ppo_policy import PPOPolicy
from agents.learned.precision import bf16_autocast, uses_bf16
from agents.learned.small_cnn import conv_trunk
from agents.network.checkpoint import load_network
from agents.network.pretrained import weights_path
from yinsh_env.engine.actions import N_ACTIONS

try:
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'the warm start needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc


def legal_rows_logits(head: nn.Linear, latent: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """(n, k) the logits of ``actions`` (n, k) from ``latent`` (n, in) through the action
    layer ``head``, reading only those rows of its weights."""
    flat = actions.reshape(-1)
    rows = head.weight.index_select(0, flat).view(*actions.shape, -1)  # (n, k, in)
    bias = head.bias.index_select(0, flat).view_as(actions)
    return (rows * latent.unsqueeze(1)).sum(-1) + bias


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


class PlanesPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO's policy over :class:`PlanesCNN`, in bf16 where the CPU has it natively.

    The standard ``MultiInputPolicy`` with two differences that change no value:

    * only the planes are preprocessed: SB3 would also turn the 2,142 mask
      entries into floats for every forward pass, for a network that never
      reads them;
    * ``precision`` (:mod:`agents.learned.precision`, default ``fp32``):
      with bf16 the whole network (trunk and heads) runs under
      ``torch.autocast``, weights and gradients in float32, and the logits
      and values come out as float32 for the distribution and the losses.
      Rollouts and updates use the same precision, so PPO's first ratio is
      exactly 1.

    The saved model keeps ``precision`` (how it was trained); the arena's
    ``sb3:`` agent plays in float32 (:attr:`bf16` set to False): the same moves
    on every machine.  Self-play snapshots of a bf16 learner decide together
    in one bf16 pass (:mod:`train.libraries.snapshot_batch`).
    """

    def __init__(self, *args: Any, precision: str = "fp32", **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", PlanesCNN)
        super().__init__(*args, **kwargs)
        self.precision = precision
        self.bf16 = uses_bf16(precision)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "precision": self.precision}

    def extract_features(
        self, obs: Any, features_extractor: BaseFeaturesExtractor | None = None
    ) -> Any:
        if isinstance(obs, dict) and "action_mask" in obs:
            obs = {key: value for key, value in obs.items() if key != "action_mask"}
        return super().extract_features(obs, features_extractor)

    def forward(
        self, obs: Any, deterministic: bool = False, action_masks: Any = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        with bf16_autocast(self.bf16):
            actions, values, log_prob = super().forward(obs, deterministic, action_masks)
        return actions, values.float(), log_prob.float()

    def evaluate_actions(
        self, obs: Any, actions: torch.Tensor, action_masks: Any = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        with bf16_autocast(self.bf16):
            values, log_prob, entropy = super().evaluate_actions(obs, actions, action_masks)
        return values.float(), log_prob.float(), None if entropy is None else entropy.float()

    def get_distribution(self, obs: Any, action_masks: Any = None) -> Any:
        with bf16_autocast(self.bf16):
            return super().get_distribution(obs, action_masks)

    def predict_values(self, obs: Any) -> torch.Tensor:
        with bf16_autocast(self.bf16):
            return super().predict_values(obs).float()

    def _actor_latent(self, planes: torch.Tensor) -> torch.Tensor:
        """The action layer's input for ``planes`` (n, 11, 11, 17), in the policy's precision."""
        with bf16_autocast(self.bf16):
            features = self.extract_features({"observation": planes})
            if not self.share_features_extractor:
                features = features[0]
            return self.mlp_extractor.forward_actor(features)

    def legal_probabilities(self, planes: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """(n, 2,142) probabilities from ``planes`` (n, 11, 11, 17) and bool ``legal``,
        exactly 0 where illegal: what :meth:`get_distribution` gives, without
        building the distribution (opponents ask this for a few games at a time)."""
        latent = self._actor_latent(planes)
        with bf16_autocast(self.bf16):
            logits = self.action_net(latent).float()
        return torch.where(legal, logits, float("-inf")).softmax(-1)

    def action_logits(self, planes: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """(n, k) float32 logits of the actions ``actions`` (n, k) of each of n positions.

        Only those rows of the action layer are read (the legal actions: a few
        dozen of 2,142), so an opponent's forward pass skips most of the layer;
        that layer runs in float32 whatever :attr:`bf16`.
        """
        head = self.action_net
        assert isinstance(head, nn.Linear)
        return legal_rows_logits(head, self._actor_latent(planes).float(), actions)


class PPONet(BaseFeaturesExtractor):
    """The single-file PPO's whole network as features: its 2,142 logits, then its value.

    :class:`PPONetPolicy` reads the first as the distribution's logits and the last as
    the value, adding no layer: the policy *is* :class:`~agents.learned.ppo_policy.PPOPolicy`
    (its convolutional head reads each action at its points on the board).
    """

    def __init__(self, observation_space: Any, channels: int = 16, blocks: int = 2) -> None:
        super().__init__(observation_space, N_ACTIONS + 1)
        self.net = PPOPolicy(channels, blocks)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        logits, value = self.net(observations["observation"].float())
        return torch.cat([logits, value.unsqueeze(1)], dim=1)


class _LastColumn(nn.Module):
    """The features' last entry: the network's own value."""

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, N_ACTIONS:]


class PPONetPolicy(PlanesPolicy):
    """MaskablePPO's policy whose network is the single-file PPO's (:class:`PPONet`).

    No layer is added between the network and SB3's distribution and value (``net_arch``
    empty, SB3's orthogonal initialisation off: the network's own is the PPO's), so an
    update of SB3 and of the single-file PPO move the same weights
    (tests/train/libraries/test_parity.py).

    >>> import gymnasium as gym
    >>> from yinsh_env.vector.sb3 import YinshSB3VecEnv
    >>> space = YinshSB3VecEnv(num_envs=1).observation_space
    >>> policy = PPONetPolicy(space, gym.spaces.Discrete(N_ACTIONS), lambda _: 1e-3)
    >>> sum(p.numel() for p in policy.parameters())  # PPOPolicy(16, 2)'s, nothing more
    15059
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", PPONet)
        kwargs["net_arch"] = []
        kwargs["ortho_init"] = False
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = _Logits()
        self.value_net = _LastColumn()  # type: ignore[assignment]
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )

    def action_logits(self, planes: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """(n, k) float32 logits of the actions ``actions`` (n, k) of each of n positions
        (the network computes all 2,142; the snapshots' opponents read these)."""
        return self._actor_latent(planes).float()[:, :N_ACTIONS].gather(1, actions)


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


__all__ = [
    "PPONet",
    "PPONetPolicy",
    "PlanesCNN",
    "PlanesPolicy",
    "PretrainedNet",
    "PretrainedPolicy",
    "legal_rows_logits",
]
