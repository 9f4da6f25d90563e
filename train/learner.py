"""The learner: losses, AdamW and the learning-rate schedule.

Loss per sample (all targets from the player to act's view):

* policy: cross-entropy between the search's policy target and the network's
  policy over the legal actions (illegal ones are masked out);
* value: squared error against the game's result, times ``value_weight``; with
  ``search_value_weight`` w > 0 the target is ``(1 - w) * result + w * q``, q the
  search's root value of the position (where a search ran; forced moves keep the
  result): less noise than the result alone, the bias of the search's own value;
* margin (auxiliary): squared error against the final rings-removed margin,
  for games played to the end, times ``margin_weight``;
* ownership (auxiliary): squared error against the final owner of each
  point's marker, averaged over the 85 points, times ``ownership_weight``;
* opponent policy (auxiliary, ``network.opponent_policy``): cross-entropy of the
  opponent's next action, where the game went on, times ``opponent_policy_weight``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from agents.network.network import PolicyValueNet
from train.config import OptimConfig
from train.replay import Batch
from yinsh_env.engine.geometry import N_POINTS


def lr_factor(step: int, config: OptimConfig, total_steps: int) -> float:
    """Multiplier of ``config.lr`` at ``step``: linear warm-up, then constant or cosine."""
    if config.warmup_steps and step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    if config.lr_schedule == "constant":
        return 1.0
    span = max(1, total_steps - config.warmup_steps)
    progress = min(1.0, (step - config.warmup_steps) / span)
    floor = config.final_lr_fraction
    return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def value_targets(batch: Batch, search_weight: float) -> np.ndarray:
    """The value target of each sample: the result, mixed with the search's value where known."""
    if search_weight == 0.0:
        return batch.value
    weight = search_weight * batch.search_value_mask
    return (batch.value + weight * (batch.search_value - batch.value)).astype(np.float32)


def parameter_groups(model: torch.nn.Module) -> tuple[list[str], list[str]]:
    """The names of the parameters with weight decay and of those without.

    Biases and normalisation parameters (one dimension) get none.  The order is
    the optimizer's: its state indexes the parameters in this order, decayed first.
    """
    decay = [name for name, p in model.named_parameters() if p.ndim > 1]
    no_decay = [name for name, p in model.named_parameters() if p.ndim <= 1]
    return decay, no_decay


def carry_optimizer_state(
    saved: dict[str, Any], old: torch.nn.Module, new: torch.nn.Module
) -> dict[str, Any]:
    """An optimizer state saved for ``old``'s parameters, re-indexed for ``new``'s.

    A run resumed into a grown network (``init.grow`` on ``--resume``) keeps the
    moments of every parameter whose name and shape are unchanged; a new or
    reshaped one has none, so AdamW starts it afresh, with its own bias
    correction (zero moments under an old step count would make its first
    steps about three times too large).
    """
    old_index = {
        name: i for i, name in enumerate(n for group in parameter_groups(old) for n in group)
    }
    parameters = dict(new.named_parameters())
    carried: dict[int, Any] = {}
    groups = []
    index = 0
    for group, names in zip(saved["param_groups"], parameter_groups(new), strict=True):
        groups.append({**group, "params": list(range(index, index + len(names)))})
        for name in names:
            moments = saved["state"].get(old_index.get(name), {})
            if getattr(moments.get("exp_avg"), "shape", None) == parameters[name].shape:
                carried[index] = moments
            index += 1
    return {"state": carried, "param_groups": groups}


class Learner:
    """Owns the optimizer and schedule of a model; one call = one gradient step."""

    def __init__(
        self,
        model: PolicyValueNet,
        config: OptimConfig,
        total_steps: int,
        device: torch.device,
        amp: bool = False,
    ) -> None:
        self.model = model
        self.config = config
        self.total_steps = total_steps
        self.device = device
        self.amp = amp
        parameters = dict(model.named_parameters())
        decay, no_decay = (
            [parameters[name] for name in names] for names in parameter_groups(model)
        )
        self.optimizer = torch.optim.AdamW(
            [
                {"params": decay, "weight_decay": config.weight_decay},
                {"params": no_decay, "weight_decay": 0.0},
            ],
            lr=config.lr,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: lr_factor(step, config, total_steps)
        )
        self.step = 0

    def _tensor(self, array: np.ndarray) -> Tensor:
        tensor = torch.from_numpy(array)
        if self.device.type == "cuda":
            return tensor.pin_memory().to(self.device, non_blocking=True)
        return tensor

    def losses(self, batch: Batch) -> dict[str, Tensor]:
        """The loss terms of a batch (``total`` is what is minimised)."""
        config = self.config
        planes = self._tensor(batch.planes)
        legal = self._tensor(batch.legal)
        target = self._tensor(batch.policy)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp):
            out = self.model(planes, legal)
        logp = torch.log_softmax(out.policy.float(), dim=1)
        logp = torch.where(legal, logp, torch.zeros_like(logp))
        policy_loss = -(target * logp).sum(1).mean()
        value_target = self._tensor(value_targets(batch, config.search_value_weight))
        value_loss = F.mse_loss(out.value.float(), value_target)
        margin_mask = self._tensor(batch.margin_mask)
        margin_error = (out.margin.float() - self._tensor(batch.margin)) ** 2
        margin_loss = (margin_error * margin_mask).sum() / margin_mask.sum().clamp(min=1.0)
        board = self.model.board.view(1, *self.model.board.shape[-2:])
        own_error = (out.ownership.float() - self._tensor(batch.ownership)) ** 2
        ownership_loss = (own_error * board).sum((1, 2)).mean() / N_POINTS
        total = (
            policy_loss
            + config.value_weight * value_loss
            + config.margin_weight * margin_loss
            + config.ownership_weight * ownership_loss
        )
        extra: dict[str, Tensor] = {}
        if out.opponent_policy is not None:
            opponent = self._tensor(batch.opponent_action)
            known = opponent >= 0
            errors = F.cross_entropy(
                out.opponent_policy.float(), opponent.clamp(min=0), reduction="none"
            )
            extra["opponent_policy"] = (errors * known).sum() / known.sum().clamp(min=1)
            total = total + config.opponent_policy_weight * extra["opponent_policy"]
        with torch.no_grad():
            probs = logp.exp()
            entropy = -(probs * logp).sum(1).mean()
            target_logt = torch.where(target > 0, target.log(), torch.zeros_like(target))
            target_entropy = -(target * target_logt).sum(1).mean()
            # What predicting the batch's mean result would score: the value
            # loss to beat (it grows as self-play games get more decisive).
            value_baseline = value_target.var(unbiased=False)
        return {
            "total": total,
            "policy": policy_loss,
            "value": value_loss,
            "margin": margin_loss,
            "ownership": ownership_loss,
            "policy_entropy": entropy,
            "policy_kl": policy_loss - target_entropy,
            "value_baseline": value_baseline,
            **extra,
        }

    def train_step(self, batch: Batch) -> dict[str, float]:
        """One AdamW step on ``batch``; returns the losses before the step."""
        self.model.train()
        losses = self.losses(batch)
        self.optimizer.zero_grad(set_to_none=True)
        losses["total"].backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.model.parameters(), self.config.grad_clip or float("inf")
        )
        self.optimizer.step()
        metrics = {f"loss/{k}": float(v.detach()) for k, v in losses.items()}
        metrics["optim/grad_norm"] = float(grad_norm)
        metrics["optim/lr"] = self.optimizer.param_groups[0]["lr"]
        self.scheduler.step()
        self.step += 1
        return metrics

    def state_dict(self) -> dict[str, object]:
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "step": self.step,
        }

    def load_state_dict(self, data: dict[str, object]) -> None:
        """Restore the moments and the step; the learning rate and weight decay stay this config's.

        A checkpoint's optimizer and scheduler carry the learning rate and weight
        decay they were made with; torch restores them, so ``--resume
        optim.lr=...`` was silently ignored (found at iteration 104 of
        ``runs/long2``).  They are set from the config again, at the restored step.
        """
        self.optimizer.load_state_dict(data["optimizer"])  # type: ignore[arg-type]
        self.scheduler.load_state_dict(data["scheduler"])  # type: ignore[arg-type]
        self.step = int(data["step"])  # type: ignore[call-overload]
        decay, no_decay = self.optimizer.param_groups
        decay["weight_decay"], no_decay["weight_decay"] = self.config.weight_decay, 0.0
        self.scheduler.base_lrs = [self.config.lr] * len(self.optimizer.param_groups)
        rate = self.config.lr * lr_factor(self.scheduler.last_epoch, self.config, self.total_steps)
        for group in self.optimizer.param_groups:
            group["initial_lr"], group["lr"] = self.config.lr, rate

    @property
    def lr(self) -> float:
        """The learning rate of the next step."""
        return float(self.optimizer.param_groups[0]["lr"])
