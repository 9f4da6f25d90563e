"""What a run needs from this machine, checked before any work starts.

The config schema (:mod:`train.config`) checks a config on its own, so that a
checkpoint's saved config parses anywhere; this adds what only the machine
running the run can tell: that the device exists, that the evaluation's
opponents can be built here (known agents and parameters, their programs and
files present, their networks' weights finite: each is built once), that
``eval.db`` is a results database (or a new file), and that the chosen
backend's optional packages are installed.  Each problem
raises :class:`~train.config.ConfigError` naming the key.
"""

from __future__ import annotations

import importlib.util

import torch

from agents.evaluation.results_db import ResultsDBError, check_db
from agents.spec import AgentSpecError, make_agent

from .config import Config, ConfigError

__all__ = ["check_device", "check_runnable"]


def check_device(name: str, key: str = "device") -> None:
    """Raise ConfigError unless the torch device ``name`` (``auto``, ``cpu``,
    ``cuda[:N]``, ``mps``) is usable here."""
    if name in ("auto", "cpu"):
        return
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as exc:
        raise ConfigError(f"{key}: {name!r} is not a torch device ({exc})") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ConfigError(f"{key}: {name!r} asked for, but this machine has no CUDA device")
        if device.index is not None and device.index >= count:
            raise ConfigError(f"{key}: {name!r} asked for, but CUDA has {count} device(s)")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"{key}: 'mps' asked for, but MPS is not available on this machine")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise ConfigError(f"{key}: {name!r} is not supported (auto, cpu, cuda[:N] or mps)")


def check_runnable(config: Config) -> None:
    """Raise ConfigError naming the key for anything that would fail later in the run."""
    check_device(config.device)
    for i, spec in enumerate(config.eval.opponents):
        try:  # built once, not only parsed: a missing program or file, a bad network
            make_agent(spec).close()
        except AgentSpecError as exc:
            raise ConfigError(f"eval.opponents[{i}]: {exc}") from None
    if config.inference_precision == "int8" and (
        config.inference == "torch" or importlib.util.find_spec("onnxruntime") is None
    ):
        raise ConfigError(
            "inference_precision: int8 runs in ONNX Runtime: needs inference auto or onnx and "
            'the onnx extra (pip install -e ".[onnx]")'
        )
    if config.eval.db is not None:
        try:
            check_db(config.eval.db)
        except ResultsDBError as exc:
            raise ConfigError(f"eval.db: {exc}") from None
    if config.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError('backend: ray needs Ray, an optional extra: pip install -e ".[ray]"')
