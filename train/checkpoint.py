"""Checkpoints: everything a run needs to continue exactly, written atomically.

A run directory holds ``checkpoints/iter_000012.pt`` (model, optimizer and
schedule, step and iteration, RNG states, config, evaluation history) and,
for the newest checkpoint only, ``checkpoints/iter_000012.replay.pt`` (the
replay window).  Every file is written to a temporary name and moved into
place with :func:`os.replace`, so a file under its final name is always
complete, and a run killed mid-write resumes from the previous checkpoint.
Files hold only tensors and plain values, so they load with
``torch.load(weights_only=True)`` (no arbitrary code runs when a checkpoint
is opened).

A file that cannot be used is refused when it is read, with a one-line
:class:`CheckpointError` naming it: empty, not a PyTorch file (random bytes,
cut short), a zip that is not one, objects other than tensors and plain values,
another format or version, or weights that are not all finite (a diverged run:
a network with a NaN weight would play, and train, on garbage without a word;
the error names the tensor).
"""

from __future__ import annotations

import os
import pickle
import random
import re
import shutil
import warnings
import zipfile
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch

from yinsh_env.atomic_write import write_atomic

from .config import Config, ConfigError, config_from_dict
from .network import PolicyValueNet

FORMAT: Final = "yinsh-train-checkpoint"
VERSION: Final = 1
CHECKPOINT_DIR: Final = "checkpoints"
BEST_NAME: Final = "best.pt"
_NAME: Final = re.compile(r"^iter_(\d{6})\.pt$")


class CheckpointError(ValueError):
    """A missing, corrupt or foreign checkpoint file: the message names it."""


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


def read_file(path: str | Path, what: str = "checkpoint") -> dict[str, Any]:
    """Load a file written by :func:`atomic_save`; CheckpointError naming it otherwise."""
    path = Path(path)
    if not path.is_file():
        problem = (
            "is a folder, not a file"
            if path.is_dir()
            else "is not a regular file"
            if path.exists()
            else "does not exist"
        )
        raise CheckpointError(f"{what} file {path} {problem}")
    data = _torch_load(path, what)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{what} file {path} is not a yinsh training checkpoint")
    if data.get("version") != VERSION:
        raise CheckpointError(
            f"{what} file {path} has format version {str(data.get('version'))[:20]}, "
            f"expected {VERSION}"
        )
    if "model" in data:
        check_weights(data["model"], f"{what} file {path}")
    return data


def _torch_load(path: Path, what: str) -> Any:
    """``torch.load`` of tensors and plain values, its many failures told in one line."""
    try:
        if path.stat().st_size == 0:
            raise CheckpointError(f"{what} file {path} is empty")
        if not zipfile.is_zipfile(path):
            raise CheckpointError(
                f"{what} file {path} is not a PyTorch file (random bytes, or cut short)"
            )
        with warnings.catch_warnings():  # torch warns about pickle protocols on stderr
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except CheckpointError:
        raise
    except OSError as exc:
        raise CheckpointError(f"cannot read {what} file {path}: {exc.strerror}") from None
    except pickle.UnpicklingError:
        raise CheckpointError(
            f"{what} file {path} holds more than tensors and plain values, or is damaged "
            "(not loaded: unpickling other objects could run code)"
        ) from None
    except Exception as exc:  # torch raises many kinds for damaged archives
        raise CheckpointError(
            f"{what} file {path} is a damaged or foreign archive, not a PyTorch "
            f"checkpoint ({type(exc).__name__})"
        ) from None


def check_weights(model: Any, source: str) -> None:
    """Raise CheckpointError unless ``model`` maps names to tensors whose values are finite."""
    if not isinstance(model, dict) or not all(
        isinstance(name, str) and isinstance(tensor, torch.Tensor) for name, tensor in model.items()
    ):
        raise CheckpointError(f"{source}: its model is not a mapping of names to tensors")
    for name, tensor in model.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise CheckpointError(
                f"{source}: tensor {name[:80]!r} holds {bad} NaN or infinite value(s) "
                "(a diverged run? use an earlier checkpoint)"
            )


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


# --- saving and finding checkpoints --------------------------------------------------


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


def list_checkpoints(run_dir: str | Path) -> list[Path]:
    """The run's iteration checkpoints, oldest first (only complete files have these names)."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if _NAME.match(p.name)]
    return sorted(found, key=lambda p: p.name)


def checkpoint_iteration(path: Path) -> int:
    match = _NAME.match(path.name)
    if match is None:
        raise CheckpointError(f"{path} is not named like an iteration checkpoint")
    return int(match.group(1))


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The newest complete checkpoint in a run directory, or None."""
    found = list_checkpoints(run_dir)
    return found[-1] if found else None


def resolve_checkpoint(path: str | Path) -> Path:
    """A checkpoint file, or a run directory's newest checkpoint; CheckpointError if none."""
    path = Path(path)
    if path.is_dir():
        latest = latest_checkpoint(path)
        if latest is None:
            raise CheckpointError(
                f"run directory {path} holds no checkpoint (no {CHECKPOINT_DIR}/iter_*.pt)"
            )
        return latest
    if not path.exists():
        raise CheckpointError(
            f"checkpoint {path} does not exist (give a checkpoint file or a run directory)"
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


def load_weights(model: PolicyValueNet, data: dict[str, Any], path: Path) -> PolicyValueNet:
    """``model`` with a checkpoint's weights (``data["model"]``), or CheckpointError
    naming the file and the weights that do not fit its network."""
    try:
        model.load_state_dict(data["model"])
    except (KeyError, RuntimeError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint {path} does not fit its network config: {exc}") from None
    return model
