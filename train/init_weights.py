"""A new run that starts from an earlier network's weights (config ``init``).

Training a network further is a new run whose weights come from a file
(``init.weights``: a shipped network's name, ``pretrained`` or ``anchor-v1``;
a checkpoint, a slim file or a run directory) instead of a random
initialisation; the optimizer, the schedule and the replay window start
afresh.  The file's network config must equal the run's (a mismatch is
refused, naming both) unless ``init.grow`` lets a smaller network start a bigger
one with the same outputs (:mod:`train.grow`), and the run's CPU clock (``time/cpu_s``,
:mod:`train.cpu_clock`) starts at the CPU seconds that trained those weights,
so one strength curve spans the whole training however many runs it took.
The file's path and SHA-256 go into the run's history (``history["init"]``)
and every checkpoint after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agents.network.network import PolicyValueNet
from train.config import Config, NetworkConfig
from train.cpu_clock import CPU_KEY, TRAIN_CPU_KEY
from train.grow import grown_if_allowed
from train.run_checkpoint import (
    CheckpointError,
    config_of,
    load_weights,
    read_file,
    resolve_checkpoint,
)
from yinsh_env.util.file_hash import file_sha256

__all__ = ["InitWeights", "load_init_weights", "resolve_init_path"]

#: ``init.weights`` naming the network shipped with the package.
PRETRAINED = "pretrained"


class InitWeightsError(CheckpointError):
    """``init.weights`` names a file that cannot start this run: the message says why."""


@dataclass(frozen=True)
class InitWeights:
    """The weights a run starts from, and where they came from."""

    path: Path
    sha256: str
    iteration: int  # the iteration of the run that made them
    cpu_s: float  # CPU seconds of training behind them
    model: dict[str, torch.Tensor]

    def record(self) -> dict[str, Any]:
        """What the run's history keeps (plain values)."""
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "iteration": self.iteration,
            "cpu_s": self.cpu_s,
        }


def resolve_init_path(weights: str) -> Path:
    """The file ``init.weights`` names; InitWeightsError when there is none.

    A shipped network's name (``pretrained``, ``anchor-v1``: ``agents/network/weights/``)
    comes first, so a config can name the network a run started from even after
    ``pretrained`` has been replaced by a newer one.
    """
    from agents.network.pretrained import shipped_weights, weights_path

    if weights == PRETRAINED or weights in shipped_weights():
        return weights_path(weights)
    try:
        return resolve_checkpoint(weights)
    except CheckpointError as exc:
        raise InitWeightsError(f"init.weights: {exc}") from None


def sha256_of(path: Path) -> str:
    """The file's sha256, in chunks; only of a regular file (NotARegularFile, a ValueError)."""
    return file_sha256(path)


def load_init_weights(config: Config) -> InitWeights | None:
    """The weights ``config.init`` asks for (None for a random start), checked against
    ``config.network``, with the CPU seconds the run's clock starts from."""
    if config.init.weights is None:
        return None
    path = resolve_init_path(config.init.weights)
    data = read_file(path, "init.weights")
    saved = config_of(data, path)
    try:
        # Checked against the file's own network before it is grown or loaded.
        model = load_weights(PolicyValueNet(saved.network), data, path).state_dict()
    except CheckpointError as exc:
        raise InitWeightsError(f"init.weights: {exc}") from None
    if saved.network != config.network:
        model = _grown(model, saved.network, config, path)
    return InitWeights(
        path=path,
        sha256=sha256_of(path),
        iteration=int(data.get("iteration", 0)),
        cpu_s=_cpu_seconds(config, data, path),
        model=model,
    )


def _grown(
    model: dict[str, torch.Tensor], saved: NetworkConfig, config: Config, path: Path
) -> dict[str, torch.Tensor]:
    """The file's weights grown into the run's bigger network, where ``init.grow`` allows."""
    try:
        return grown_if_allowed(model, saved, config.network, config.init.grow, config.seed)
    except ValueError as exc:
        raise InitWeightsError(
            f"init.weights: {path} holds a network {saved}, but this run's "
            f"network is {config.network}; {exc}, or set network to the file's"
        ) from None


def _cpu_seconds(config: Config, data: dict[str, Any], path: Path) -> float:
    """``init.cpu_s`` if given, else what the file records; an error if neither says."""
    if config.init.cpu_s is not None:
        return float(config.init.cpu_s)
    history = data.get("history")
    if isinstance(history, dict) and CPU_KEY in history:
        return float(history[CPU_KEY])
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and TRAIN_CPU_KEY in metadata:
        return float(metadata[TRAIN_CPU_KEY])
    raise InitWeightsError(
        f"init.weights: {path} does not record the CPU seconds that trained it "
        f"(no history {CPU_KEY!r}, no metadata {TRAIN_CPU_KEY!r}); set init.cpu_s"
    )
