"""What a run needs from this machine, checked before any work starts.

The config schema (:mod:`train.config_schema`) checks a config on its own, so that a
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

from agents.evaluation.results_db import ResultsDBError, check_db
from agents.network.inference import DeviceError
from agents.network.inference import check_device as check_torch_device
from agents.spec import AgentSpecError, make_agent
from train.config import Config, ConfigError

__all__ = ["check_device", "check_runnable"]


def check_device(name: str, key: str = "device") -> None:
    """Raise ConfigError unless the torch device ``name`` (``auto``, ``cpu``,
    ``cuda[:N]``, ``mps``) is usable here (:func:`agents.network.inference.check_device`)."""
    try:
        check_torch_device(name, key)
    except DeviceError as exc:
        raise ConfigError(str(exc)) from None


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
