"""The network run by ONNX Runtime on the CPU: the same evaluator, 1.6-2x the positions/s.

Self-play and the network agent evaluate small batches on one thread, where
PyTorch's per-operator dispatch costs as much as the arithmetic; ONNX Runtime
runs the whole graph (batch norm folded, the policy gather fused) with far
less overhead (``python -m benchmarks.bench_inference`` measures it, and
checks both give the same outputs).  Only the policy and value are exported:
the auxiliary heads serve training.  Exporting needs ``onnx`` besides ONNX
Runtime (both in the ``train`` extra); :func:`make_evaluator` falls back to
PyTorch without them, or on a GPU.  The shipped networks' graphs are exported
once, ahead of time (:mod:`agents.network.graphs`), and play without torch.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import warnings
from collections.abc import Sequence
from typing import Any, Final, Literal

import numpy as np
import torch

from agents.network.graphs import Precision, evaluate_leaves, ort_session, precision_name
from agents.network.inference import NetworkEvaluator
from agents.network.network import PolicyValueNet, raw_gather
from agents.search import Leaf
from yinsh_env.envs.observation import GRID, N_PLANES

#: Who runs the network: ``auto`` is ONNX Runtime where installed, else PyTorch.
Backend = Literal["auto", "torch", "onnx"]


def onnx_available() -> bool:
    """Whether ONNX Runtime (and the exporter's ``onnx``) can be imported."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


class PolicyValue(torch.nn.Module):
    """The model's policy and value outputs only (what inference needs)."""

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        self.model = model

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.model(planes)
        return out.policy, out.value


class RawPolicyValue(torch.nn.Module):
    """The policy before its gather, and the value (:meth:`PolicyValueNet.raw_policy_value`)."""

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        self.model = model

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.model.raw_policy_value(planes)


def export_onnx(model: PolicyValueNet, gathered: bool = False) -> bytes:
    """The model (eval mode) as an ONNX graph with a dynamic batch dimension.

    Its outputs are ``raw`` (the policy planes and the pass logit, before the
    gather into actions: :func:`agents.network.network.raw_gather`) and ``value``;
    ``gathered``: the 2,142 action logits instead of ``raw`` (the graph before
    commit fff2b23, which ``benchmarks.bench_limit`` times as the "before").
    """
    # Export restores the wrapper's mode: keep it eval.
    wrapper = (PolicyValue if gathered else RawPolicyValue)(model).eval()
    policy = "policy" if gathered else "raw"
    example = torch.zeros(1, GRID, GRID, N_PLANES)
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the exporter's notes on constant folding
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (example,),
            buffer,  # type: ignore[arg-type]  # file-like objects work (torch's docs)
            input_names=["planes"],
            output_names=[policy, "value"],
            dynamic_axes={"planes": {0: "batch"}, policy: {0: "batch"}, "value": {0: "batch"}},
            dynamo=False,
        )
    return buffer.getvalue()


#: Int8 graphs of this process, by the SHA-256 of their float graph (oldest first).
_INT8_GRAPHS: dict[bytes, bytes] = {}
_INT8_KEPT: Final = 4


class OnnxEvaluator(NetworkEvaluator):
    """:class:`NetworkEvaluator` whose forward pass runs in ONNX Runtime (CPU).

    ``precision="int8"`` runs the tower's convolutions in int8
    (:mod:`agents.network.quantize`), calibrated on positions of the network's own
    raw-policy games, played with the float graph when the evaluator is built.
    The process keeps the last few int8 graphs, keyed by the float graph, so a
    second agent on the same network (an arena, the web app) is built at once.
    """

    def __init__(self, model: PolicyValueNet, threads: int = 1, precision: str = "fp32") -> None:
        super().__init__(model, torch.device("cpu"))
        self.precision = precision_name(precision)
        if self.precision == "auto":
            self.precision = "int8"
        self.threads = threads
        graph = export_onnx(self.model)
        if self.precision == "int8":
            graph = self._int8(graph)
        self.session = self._session(graph)

    def _int8(self, graph: bytes) -> bytes:
        from agents.network.quantize import calibration_planes, quantize_int8

        key = hashlib.sha256(graph).digest()
        int8 = _INT8_GRAPHS.get(key)
        if int8 is None:
            self.session = self._session(graph)
            int8 = quantize_int8(graph, calibration_planes(self))
            self.reset_timers()
            while len(_INT8_GRAPHS) >= _INT8_KEPT:
                del _INT8_GRAPHS[next(iter(_INT8_GRAPHS))]
            _INT8_GRAPHS[key] = int8
        return int8

    def _session(self, graph: bytes) -> Any:
        return ort_session(graph, self.threads)

    def __call__(self, leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
        """The evaluator's answer in numpy alone: no tensors on the way in or out
        (:func:`agents.network.graphs.evaluate_leaves`)."""
        return evaluate_leaves(self.session, leaves, self)

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raw, value = self.session.run(None, {"planes": np.ascontiguousarray(planes.numpy())})
        primary, secondary = raw_gather()
        return torch.from_numpy(raw[:, primary] + raw[:, secondary]), torch.from_numpy(value)


def backend_name(text: str) -> Backend:
    """``text`` as a :data:`Backend`; ValueError naming it otherwise."""
    if text not in ("auto", "torch", "onnx"):
        raise ValueError(f"inference backend {text!r}: expected auto, torch or onnx")
    return text  # type: ignore[return-value]


def make_evaluator(
    model: PolicyValueNet,
    device: torch.device,
    backend: Backend = "auto",
    amp: bool = False,
    threads: int = 1,
    precision: Precision = "fp32",
) -> NetworkEvaluator:
    """ONNX Runtime where asked or (``auto``) where installed and on the CPU; else PyTorch.

    ``amp`` (bfloat16 autocast) applies to PyTorch's network only: on the CPU,
    ``auto`` keeps ONNX Runtime, whose arithmetic is ``precision``.

    ``precision="int8"`` needs ONNX Runtime (and the CPU); ``auto`` is int8 where
    ONNX Runtime runs the network, float in PyTorch.
    """
    backend = backend_name(backend)
    precision = precision_name(precision)
    cpu = device.type == "cpu"
    if backend == "onnx" and not (cpu and onnx_available()):
        raise ValueError(
            "inference backend 'onnx' needs the CPU, onnxruntime and onnx "
            "(pip install 'yinsh[train]')"
        )
    if backend == "torch" and precision == "int8":
        raise ValueError("inference precision 'int8' runs in ONNX Runtime, not backend 'torch'")
    if backend == "onnx" or (backend == "auto" and cpu and onnx_available()):
        return OnnxEvaluator(model, threads, "int8" if precision == "auto" else precision)
    return NetworkEvaluator(model, device, amp=amp)
