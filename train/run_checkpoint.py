"""Checkpoints: everything a run needs to continue exactly, written atomically.

Reading one, and its refusals, is :mod:`agents.network.checkpoint` (a player
loads checkpoints without the trainer); this module writes them and re-exports
the readers, so the trainer finds every checkpoint function here.

A run directory holds ``checkpoints/iter_000012.pt`` (model, optimizer and
schedule, step and iteration, RNG states, config, evaluation history) and,
for the newest checkpoint only, ``checkpoints/iter_000012.replay.pt`` (the
replay window).  Every file is written to a temporary name and moved into
place with :func:`os.replace`, so a file under its final name is always
complete, and a run killed mid-write resumes from the previous checkpoint.
Files hold only tensors and plain values, so they load with
``torch.load(weights_only=True)`` (no arbitrary code runs when a checkpoint
is opened).
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch

from agents.network.checkpoint import (
    CHECKPOINT_DIR,
    FORMAT,
    VERSION,
    CheckpointError,
    check_weights,
    checkpoint_iteration,
    latest_checkpoint,
    list_checkpoints,
    load_weights,
    read_file,
    resolve_checkpoint,
)
from agents.network.network import PolicyValueNet
from train.config import Config, ConfigError, config_from_dict
from yinsh_env.util.atomic_write import write_atomic

__all__ = [
    "BEST_NAME",
    "CHECKPOINT_DIR",
    "FORMAT",
    "VERSION",
    "CheckpointError",
    "atomic_copy",
    "atomic_save",
    "check_weights",
    "checkpoint_iteration",
    "checkpoint_path",
    "config_of",
    "latest_checkpoint",
    "list_checkpoints",
    "load_model",
    "load_weights",
    "prune_checkpoints",
    "read_file",
    "replay_path",
    "resolve_checkpoint",
    "rng_states",
    "save_checkpoint",
    "set_rng_states",
    "slim_checkpoint",
]

BEST_NAME: Final = "best.pt"


def checkpoint_path(run_dir: str | Path, iteration: int) -> Path:
    """Where the checkpoint taken after ``iteration`` iterations lives."""
    return Path(run_dir) / CHECKPOINT_DIR / f"iter_{iteration:06d}.pt"


def replay_path(checkpoint: Path) -> Path:
    return checkpoint.with_name(checkpoint.stem + ".replay.pt")


def atomic_save(obj: Any, path: Path) -> None:
    """``torch.save`` to a temporary file, then move it into place.

    A write cut short (an error, or SIGTERM's SystemExit) leaves ``path`` as it
    was and removes the half-written temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())

    write_atomic(path, write)


def atomic_copy(source: Path, target: Path) -> None:
    write_atomic(target, lambda tmp: shutil.copyfile(source, tmp))


# --- random number generator states ------------------------------------------------


def rng_states() -> dict[str, Any]:
    """The global RNG states of python, numpy and torch (CPU and CUDA)."""
    np_state = np.random.get_state(legacy=False)
    np_state["state"]["key"] = np_state["state"]["key"].tolist()
    return {
        "python": random.getstate(),
        "numpy": np_state,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def set_rng_states(states: dict[str, Any]) -> None:
    random.setstate(_tuples(states["python"]))
    np_state = dict(states["numpy"])
    np_state["state"] = dict(np_state["state"])
    np_state["state"]["key"] = np.asarray(np_state["state"]["key"], dtype=np.uint32)
    np.random.set_state(np_state)
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def _tuples(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    return value


# --- saving checkpoints --------------------------------------------------


def save_checkpoint(
    run_dir: str | Path,
    iteration: int,
    config: Config,
    model: PolicyValueNet,
    learner_state: dict[str, Any],
    replay_state: dict[str, Any],
    history: dict[str, Any],
) -> Path:
    """Write the replay window, then the checkpoint; returns the checkpoint's path.

    The checkpoint is written last, so one that exists has its replay file.
    """
    path = checkpoint_path(run_dir, iteration)
    header = {"format": FORMAT, "version": VERSION, "iteration": iteration}
    atomic_save({**header, "replay": replay_state}, replay_path(path))
    atomic_save(
        {
            **header,
            "config": config.to_dict(),
            "model": model.state_dict(),
            "learner": learner_state,
            "rng": rng_states(),
            "history": history,
        },
        path,
    )
    return path


def prune_checkpoints(run_dir: str | Path, keep: int, protected: set[int]) -> None:
    """Delete all but the newest ``keep`` checkpoints (and ``protected`` iterations);
    only the newest checkpoint keeps its replay file."""
    found = list_checkpoints(run_dir)
    for i, path in enumerate(found):
        newest = i == len(found) - 1
        if not newest:
            replay_path(path).unlink(missing_ok=True)
        if i < len(found) - keep and checkpoint_iteration(path) not in protected:
            path.unlink(missing_ok=True)


def slim_checkpoint(data: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A checkpoint's network alone (float32 weights, config, iteration): what an agent,
    the Elo ladder or a new run's ``init.weights`` loads, a third of a full checkpoint."""
    slim = {
        "format": FORMAT,
        "version": VERSION,
        "iteration": int(data["iteration"]),
        "config": data["config"],
        "model": {k: v.float().contiguous() for k, v in data["model"].items()},
    }
    if metadata is not None:
        slim["metadata"] = metadata
    return slim


def config_of(data: dict[str, Any], path: Path) -> Config:
    try:
        return config_from_dict(data["config"], source=f"config in checkpoint {path}")
    except (KeyError, ConfigError) as exc:
        raise CheckpointError(f"checkpoint {path} holds no usable config: {exc}") from None


def load_model(path: str | Path) -> tuple[PolicyValueNet, Config, dict[str, Any]]:
    """The network of a checkpoint (file or run directory), its config and raw data."""
    resolved = resolve_checkpoint(path)
    data = read_file(resolved)
    config = config_of(data, resolved)
    model = load_weights(PolicyValueNet(config.network), data, resolved)
    model.eval()
    return model, config, data
