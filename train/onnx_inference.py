"""The network run by ONNX Runtime on the CPU: the same evaluator, 1.6-2x the positions/s.

Self-play and the network agent evaluate small batches on one thread, where
PyTorch's per-operator dispatch costs as much as the arithmetic; ONNX Runtime
runs the whole graph (batch norm folded, the policy gather fused) with far
less overhead (``python -m benchmarks.bench_inference`` measures it, and
checks both give the same outputs).  Only the policy and value are exported:
the auxiliary heads serve training.  ``onnxruntime`` is optional (the ``onnx``
extra); :func:`make_evaluator` falls back to PyTorch without it, or on a GPU.
"""

from __future__ import annotations

import importlib.util
import io
import warnings
from typing import Literal

import numpy as np
import torch

from yinsh_env.observation import GRID, N_PLANES

from .inference import NetworkEvaluator
from .network import PolicyValueNet

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


def export_onnx(model: PolicyValueNet) -> bytes:
    """The model (eval mode) as an ONNX graph with a dynamic batch dimension."""
    wrapper = PolicyValue(model).eval()  # export restores the wrapper's mode: keep it eval
    example = torch.zeros(1, GRID, GRID, N_PLANES)
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the exporter's notes on constant folding
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (example,),
            buffer,  # type: ignore[arg-type]  # file-like objects work (torch's docs)
            input_names=["planes"],
            output_names=["policy", "value"],
            dynamic_axes={"planes": {0: "batch"}, "policy": {0: "batch"}, "value": {0: "batch"}},
            dynamo=False,
        )
    return buffer.getvalue()


class OnnxEvaluator(NetworkEvaluator):
    """:class:`NetworkEvaluator` whose forward pass runs in ONNX Runtime (CPU)."""

    def __init__(self, model: PolicyValueNet, threads: int = 1) -> None:
        super().__init__(model, torch.device("cpu"))
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only
        self.session = ort.InferenceSession(
            export_onnx(self.model), options, providers=["CPUExecutionProvider"]
        )

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        policy, value = self.session.run(None, {"planes": np.ascontiguousarray(planes.numpy())})
        return torch.from_numpy(policy), torch.from_numpy(value)


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
) -> NetworkEvaluator:
    """ONNX Runtime where asked or (``auto``) where installed and on the CPU; else PyTorch."""
    backend = backend_name(backend)
    cpu = device.type == "cpu"
    if backend == "onnx" and not (cpu and onnx_available()):
        raise ValueError(
            "inference backend 'onnx' needs the CPU and onnxruntime (pip install 'yinsh[onnx]')"
        )
    if backend == "onnx" or (backend == "auto" and cpu and not amp and onnx_available()):
        return OnnxEvaluator(model, threads)
    return NetworkEvaluator(model, device, amp=amp)
