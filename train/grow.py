"""Grow a trained network into a wider or deeper one that computes the same function.

The network-size lever asks whether a bigger tower pays at equal CPU
(docs/studies/levers.md).  Training one from scratch would spend hours relearning what the shipped
network knows; growing it (Net2Net, Chen et al. 2016) starts the bigger
network exactly where the smaller one is, so the comparison measures only
what the extra capacity learns afterwards:

* **wider** (``channels``): the old channels keep their weights; a new
  channel gets a fresh random initialisation for everything that feeds it,
  and **zero** for every weight that carries it into an old channel or a
  head.  The old channels (and so every output) are unchanged, while the new
  channels are alive (non-zero activations): the first gradient step makes
  their outgoing weights non-zero and they start to matter.
* **deeper** (``blocks``): a new residual block is appended with its second
  batch norm's scale and shift at zero, so it adds nothing (``relu(x + 0) = x``,
  the tower's activations being non-negative) until its scale learns to grow.
* **an opponent-policy head** (``opponent_policy``) may be added: fresh, it is
  unused in play.

The value head's hidden width must match: its units feed no channel and are
cheap; growing them would buy nothing this lever measures.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from agents.network.network import PolicyValueNet
from train.config import NetworkConfig

__all__ = ["grow_state_dict", "grown_if_allowed", "why_not_grown"]

#: Parameters whose input is the pooled tower summary ``[mean (C), max (C)]``.
_POOLED_INPUT = ("pass_logit.weight", "opponent_pass.weight", "value_fc.0.weight")


def why_not_grown(small: NetworkConfig, big: NetworkConfig) -> str | None:
    """Why ``small`` cannot grow into ``big`` (None when it can)."""
    if big.blocks < small.blocks or big.channels < small.channels:
        return (
            f"blocks and channels can only grow "
            f"({small.blocks}x{small.channels} -> {big.blocks}x{big.channels})"
        )
    if big.value_hidden != small.value_hidden:
        return f"value_hidden must stay {small.value_hidden} (asked for {big.value_hidden})"
    if small.opponent_policy and not big.opponent_policy:
        return "the opponent_policy head can be added, not dropped"
    return None


def grown_if_allowed(
    state: Mapping[str, Tensor], small: NetworkConfig, big: NetworkConfig, allowed: bool, seed: int
) -> dict[str, Tensor]:
    """``state`` grown into ``big`` where ``init.grow`` (``allowed``) lets it and it can.

    Otherwise ValueError whose message says what to do (``set init.grow=true``)
    or why it cannot grow; callers put the file and their own alternative around it.
    """
    reason = why_not_grown(small, big)
    if allowed and reason is None:
        return grow_state_dict(state, small, big, seed=seed)
    if reason is None:
        raise ValueError("set init.grow=true to grow it into this one")
    raise ValueError(f"it cannot grow into it: {reason}")


def grow_state_dict(
    state: Mapping[str, Tensor], small: NetworkConfig, big: NetworkConfig, seed: int = 0
) -> dict[str, Tensor]:
    """``state`` (a ``small`` network's) as the weights of a ``big`` network with the same outputs.

    Raises ValueError when ``small`` cannot grow into ``big`` (:func:`why_not_grown`).
    The new weights' random part is drawn from ``seed``.
    """
    reason = why_not_grown(small, big)
    if reason is not None:
        raise ValueError(f"cannot grow network {small} into {big}: {reason}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        grown = {k: v.clone() for k, v in PolicyValueNet(big).state_dict().items()}
    c, wide = small.channels, big.channels
    for key, old in state.items():
        if key not in grown:
            raise ValueError(f"cannot grow network: unexpected weight {key!r} in the file")
        new = grown[key]
        if key in _POOLED_INPUT:
            new[:, c:wide] = 0.0
            new[:, wide + c :] = 0.0
            new[:, :c] = old[:, :c]
            new[:, wide : wide + c] = old[:, c:]
        else:
            _copy_leading(new, old)  # the whole tensor where the shapes agree
            if new.dim() == 4 and new.shape[1] > old.shape[1]:
                # An old output channel, or a head's, must not read a new channel.
                new[: old.shape[0], old.shape[1] :] = 0.0
    for i in range(small.blocks, big.blocks):
        grown[f"tower.{i}.bn2.weight"].zero_()
        grown[f"tower.{i}.bn2.bias"].zero_()
    return grown


def _copy_leading(new: Tensor, old: Tensor) -> None:
    """``old`` into the leading slice of every dimension of ``new``."""
    new[tuple(slice(0, n) for n in old.shape)] = old
