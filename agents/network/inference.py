"""Batched network evaluation of search leaves, on the CPU or a GPU.

:class:`NetworkEvaluator` is the bridge between the search (numpy, one leaf
per game) and the network (torch, one batch): it stacks the leaves' planes,
moves them to the device in one transfer, runs the network, and brings back
only the logits of each leaf's legal actions.  It also times itself, so
self-play can report the share of its time spent inside the network.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch

from agents.network.network import PolicyValueNet
from agents.search import Leaf
from yinsh_env.engine.actions import N_ACTIONS


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when available, else the CPU; other names pass through."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class DeviceError(ValueError):
    """A torch device this machine does not have: the message names the key."""


def check_device(name: str, key: str = "device") -> None:
    """Raise DeviceError unless the torch device ``name`` (``auto``, ``cpu``,
    ``cuda[:N]``, ``mps``) is usable here."""
    if name in ("auto", "cpu"):
        return
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as exc:
        raise DeviceError(f"{key}: {name!r} is not a torch device ({exc})") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise DeviceError(f"{key}: {name!r} asked for, but this machine has no CUDA device")
        if device.index is not None and device.index >= count:
            raise DeviceError(f"{key}: {name!r} asked for, but CUDA has {count} device(s)")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise DeviceError(f"{key}: 'mps' asked for, but MPS is not available on this machine")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise DeviceError(f"{key}: {name!r} is not supported (auto, cpu, cuda[:N] or mps)")


#: CPU flags (``/proc/cpuinfo``) of native bfloat16 arithmetic: AVX-512 BF16, AMX.
BF16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU's feature flags where the OS lists them (Linux); empty elsewhere."""
    try:
        with open(path, encoding="utf-8", errors="replace") as text:
            for line in text:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def amp_enabled(setting: bool | str, device: torch.device) -> bool:
    """Whether to run bfloat16 autocast: ``auto`` where ``device`` has native bfloat16.

    Native means a CUDA device that supports it, or a CPU whose flags list
    :data:`BF16_CPU_FLAGS`; elsewhere bfloat16 is emulated and slower than float
    (``python -m benchmarks.bench_learner`` measures both; docs/studies/speed.md).
    """
    if setting != "auto":
        return bool(setting)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return device.type == "cpu" and bool(cpu_flags() & BF16_CPU_FLAGS)


class NetworkEvaluator:
    """Evaluates batches of leaves: implements :data:`agents.search.BatchEvaluator`."""

    def __init__(self, model: PolicyValueNet, device: torch.device, amp: bool = False) -> None:
        self.model = model.to(device).eval()
        self.device = device
        self.amp = amp
        #: Wall time inside :meth:`__call__` (batching, transfers and the network).
        self.seconds = 0.0
        #: Wall time of the forward pass alone.
        self.forward_seconds = 0.0
        self.positions = 0
        self.batches = 0

    def __call__(self, leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
        start = time.perf_counter()
        planes = torch.from_numpy(np.stack([leaf.planes for leaf in leaves]))  # type: ignore[misc]
        lengths = [len(leaf.actions) for leaf in leaves]
        flat = np.concatenate([leaf.actions + i * N_ACTIONS for i, leaf in enumerate(leaves)])
        index = torch.from_numpy(flat)
        cuda = self.device.type == "cuda"
        if cuda:
            planes = planes.pin_memory().to(self.device, non_blocking=True)
            index = index.pin_memory().to(self.device, non_blocking=True)
        forward_start = time.perf_counter()
        with torch.inference_mode():
            policy, value = self.forward(planes)
            legal_logits = policy.flatten()[index].float().cpu().numpy()
            values = value.float().cpu().numpy()
        end = time.perf_counter()
        self.forward_seconds += end - forward_start
        self.seconds += end - start
        self.positions += len(leaves)
        self.batches += 1
        return np.split(legal_logits, np.cumsum(lengths)[:-1]), values

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Policy logits (B, 2142) and values (B,) of a batch of planes."""
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp):
            out = self.model(planes)
        return out.policy, out.value

    def reset_timers(self) -> None:
        self.seconds = self.forward_seconds = 0.0
        self.positions = self.batches = 0
