"""A pool's self-play snapshots deciding together: their networks in one grouped pass.

In MaskablePPO self-play (:mod:`train.libraries.sb3_selfplay`) the games of
a round are spread over up to ten frozen snapshots, a few each.  Asked one
after the other, each snapshot pays a whole forward pass and its overheads
for a dozen games.  :class:`SnapshotBatch` is the snapshots' ``joint``
(:class:`yinsh_env.vector.batch_agents.JointOpponents`): the vector environment
asks it once a round for all of them, and it runs their trunks as one
network whose layers are the snapshots' side by side (a convolution with one
group per snapshot, a batched matrix product per dense layer), each game in
its snapshot's group.  The action layer then computes only each game's legal
actions' rows of its own snapshot's layer, and each snapshot samples (or
takes the most likely action) with its own generator, as ``act_batch`` does.

The pass runs in ``dtype``: bf16 where the learner does (the CPU multiplies
it natively), where one grouped pass is cheaper than the snapshots' passes
one by one; in float32 it would not be, so there snapshots stay apart.  The
trunk must be a sequence of convolutions, dense layers, ReLUs and one
flatten (:class:`~agents.learned.sb3_models.PlanesCNN`); other policies,
and a round with one snapshot, are asked one by one.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents.base import batch_arrays
from agents.learned.library_agent import LegalSlots, legal_slots, slot_probabilities
from agents.learned.sb3_models import legal_rows_logits

__all__ = ["SnapshotBatch", "joinable"]

#: The trunk layers the grouped pass knows.
_LAYERS = (nn.Conv2d, nn.ReLU, nn.Flatten, nn.Linear)
#: Stacks kept (one per set of snapshots met in a round, the most recent).
_KEPT = 8


def joinable(policy: Any) -> bool:
    """Whether ``policy``'s network can run in a grouped pass: a planes trunk of
    known layers (one flatten; convolutions and dense layers with biases,
    zero-padded, ungrouped) shared by both heads, and a linear action layer."""
    net = getattr(getattr(policy, "features_extractor", None), "net", None)
    if not isinstance(net, nn.Sequential):
        return False
    kinds = [type(layer) for layer in net]
    return (
        all(kind in _LAYERS for kind in kinds)
        and kinds.count(nn.Flatten) == 1
        and nn.Conv2d not in kinds[kinds.index(nn.Flatten) :]  # convolutions, then dense layers
        and nn.Linear not in kinds[: kinds.index(nn.Flatten)]
        and all(getattr(layer, "bias", True) is not None for layer in net)
        and all(
            layer.groups == 1 and layer.padding_mode == "zeros"
            for layer in net
            if isinstance(layer, nn.Conv2d)
        )
        and getattr(policy, "share_features_extractor", False)
        and isinstance(getattr(policy, "action_net", None), nn.Linear)
    )


def _shape(policy: Any) -> tuple[Any, ...]:
    """What must match for snapshots to share a pass: each layer's kind, weight shape
    and settings, and the action layer's shape."""
    layers = tuple(
        (
            type(layer),
            tuple(getattr(layer, "weight", torch.empty(0)).shape),
            tuple(getattr(layer, name, None) for name in ("stride", "padding", "dilation")),
        )
        for layer in policy.features_extractor.net
    )
    return layers, tuple(policy.action_net.weight.shape)


class _Stack:
    """The trunks of some snapshots side by side, in ``dtype`` (weights copied once)."""

    def __init__(self, snapshots: Sequence[Any], dtype: torch.dtype) -> None:
        self.snapshots = list(snapshots)
        nets = [s.policy.features_extractor.net for s in snapshots]
        self.layers: list[tuple[str, Any]] = []
        for same in zip(*nets):
            first = same[0]
            if isinstance(first, nn.Conv2d):
                weight = torch.cat([layer.weight for layer in same]).to(dtype)
                bias = torch.cat([layer.bias for layer in same]).to(dtype)
                self.layers.append(("conv", (weight, bias, first)))
            elif isinstance(first, nn.Linear):
                weight = torch.stack([layer.weight.T for layer in same]).to(dtype)
                bias = torch.stack([layer.bias for layer in same]).to(dtype).unsqueeze(1)
                self.layers.append(("dense", (weight, bias)))
            else:
                self.layers.append(("relu" if isinstance(first, nn.ReLU) else "flatten", None))
        self.dtype = dtype

    def features(self, planes: torch.Tensor, owner: np.ndarray, place: np.ndarray) -> torch.Tensor:
        """(n, features) float32: game i through snapshot ``owner[i]``'s trunk, where
        it sits at row ``place[i]`` of that snapshot's group."""
        groups, rows = len(self.snapshots), int(place.max()) + 1
        height, width, planes_per_cell = planes.shape[1:]
        grid = torch.zeros(rows, groups, height, width, planes_per_cell, dtype=self.dtype)
        who, where = torch.from_numpy(owner), torch.from_numpy(place)
        grid[where, who] = planes.to(self.dtype)
        x = grid.permute(0, 1, 4, 2, 3).reshape(rows, groups * planes_per_cell, height, width)
        for kind, params in self.layers:
            if kind == "conv":
                weight, bias, layer = params
                x = F.conv2d(
                    x, weight, bias, layer.stride, layer.padding, layer.dilation, groups=groups
                )
            elif kind == "dense":
                weight, bias = params
                x = torch.baddbmm(bias, x, weight)
            elif kind == "relu":
                x = torch.relu(x)
            else:  # flatten: from (rows, groups * C, H, W) to (groups, rows, C * H * W)
                x = x.reshape(rows, groups, -1).transpose(0, 1)
        return x[who, where].float()


class SnapshotBatch:
    """The ``joint`` of a learner's snapshots (module docstring); ``seconds`` adds up its
    passes, also shared out to the snapshots' own ``seconds`` by their games."""

    def __init__(self, dtype: torch.dtype = torch.bfloat16) -> None:
        self.dtype = dtype
        self.seconds = 0.0
        self._stacks: OrderedDict[tuple[int, ...], _Stack] = OrderedDict()

    def __repr__(self) -> str:
        return f"SnapshotBatch({self.dtype})"

    def act_joint(
        self,
        requests: Sequence[tuple[Any, np.ndarray | None, np.ndarray]],
        rng: np.random.Generator,
    ) -> list[np.ndarray]:
        """One array of actions per ``(snapshot, observations, masks)`` request."""
        snapshots = [snapshot for snapshot, _, _ in requests]
        stack = self._stack(snapshots) if len(requests) > 1 else None
        if stack is None:
            return [s.act_batch(obs, masks, rng) for s, obs, masks in requests]
        start = time.perf_counter()
        checked = [batch_arrays(obs, masks) for _, obs, masks in requests]
        sizes = np.array([len(planes) for planes, _ in checked])
        planes = np.concatenate([planes for planes, _ in checked])
        slots = legal_slots(np.concatenate([legal for _, legal in checked]))
        probs = self._probabilities(stack, planes, sizes, slots)
        answers, first = [], 0
        for snapshot, size in zip(snapshots, sizes.tolist()):
            rows = slice(first, first + size)
            answers.append(snapshot.choose(probs[rows], slots.actions[rows]))
            first += size
        elapsed = time.perf_counter() - start
        self.seconds += elapsed
        for snapshot, size in zip(snapshots, sizes.tolist()):
            snapshot.seconds += elapsed * size / max(len(planes), 1)
        return answers

    def _stack(self, snapshots: Sequence[Any]) -> _Stack | None:
        """The snapshots' trunks side by side (kept for the next rounds); None where
        they cannot share a pass (:func:`joinable`, the same shapes)."""
        key = tuple(id(s) for s in snapshots)
        stack = self._stacks.get(key)
        if stack is None or any(a is not b for a, b in zip(stack.snapshots, snapshots)):
            policies = [getattr(s, "policy", None) for s in snapshots]
            if not all(map(joinable, policies)) or len(set(map(_shape, policies))) > 1:
                return None
            stack = self._stacks[key] = _Stack(snapshots, self.dtype)
        self._stacks.move_to_end(key)
        while len(self._stacks) > _KEPT:
            self._stacks.popitem(last=False)
        return stack

    @staticmethod
    def _probabilities(
        stack: _Stack, planes: np.ndarray, sizes: np.ndarray, slots: LegalSlots
    ) -> np.ndarray:
        """(n, width) each game's legal actions' probabilities under its snapshot (the
        first ``sizes[0]`` games are ``stack.snapshots[0]``'s, and so on)."""
        owner = np.repeat(np.arange(len(sizes)), sizes)
        place = np.arange(len(owner)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        snapshots = stack.snapshots
        with torch.inference_mode():
            features = stack.features(torch.from_numpy(planes), owner, place)
            actions = torch.from_numpy(slots.actions)
            logits = torch.empty(actions.shape)
            first = 0
            for snapshot, size in zip(snapshots, sizes.tolist()):
                rows = slice(first, first + size)
                policy = snapshot.policy
                latent = policy.mlp_extractor.forward_actor(features[rows])
                logits[rows] = legal_rows_logits(policy.action_net, latent, actions[rows])
                first += size
            return slot_probabilities(logits, slots)
