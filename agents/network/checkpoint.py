"""Reading checkpoints: the files a network player loads, refused in one line when unusable.

A checkpoint (:mod:`train.run_checkpoint` writes them; a shipped network is a slim
one) holds only tensors and plain values, so it loads with
``torch.load(weights_only=True)``: no arbitrary code runs when one is opened,
and no class path inside it ties it to a module's name.

A file that cannot be used is refused when it is read, with a one-line
:class:`CheckpointError` naming it: empty, not a PyTorch file (random bytes,
cut short), a zip that is not one, objects other than tensors and plain values,
another format or version, or weights that are not all finite (a diverged run:
a network with a NaN weight would play, and train, on garbage without a word;
the error names the tensor).  PyTorch's own refusal of a pickle advises
loading the file again with ``weights_only=False``, which runs whatever the
file holds: :func:`load_failure` says why in one line without that advice,
for every loader here that wraps ``torch.load``.

Reading one needs torch (the ``train`` extra); finding one does not.  Without
torch, reading fails with :class:`TorchMissing`, which says what to install.
"""

from __future__ import annotations

import pickle
import re
import warnings
import zipfile
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from agents.network.play_config import PlayConfig, play_config

if TYPE_CHECKING:
    from agents.network.network import PolicyValueNet

FORMAT: Final = "yinsh-train-checkpoint"
VERSION: Final = 1
CHECKPOINT_DIR: Final = "checkpoints"
_NAME: Final = re.compile(r"^iter_(\d{6})\.pt$")
#: A class or function a refused pickle names, in PyTorch's message.
_GLOBAL: Final = re.compile(r"GLOBAL ([A-Za-z_][\w.]*)")
#: Terminal colour codes (PyTorch's message makes its warning bold).
_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")


class CheckpointError(ValueError):
    """A missing, corrupt or foreign checkpoint file: the message names it."""


class TorchMissing(ImportError, ValueError):
    """PyTorch is needed and not installed: the message says for what, and what to install.

    A ValueError too, so that the command lines report it in one line, as a bad spec.
    """


def import_torch(what: str) -> ModuleType:
    """The ``torch`` module; :class:`TorchMissing` saying that ``what`` needs it otherwise."""
    try:
        import torch
    except ImportError:
        raise TorchMissing(
            f"{what} needs PyTorch, which is not installed: pip install 'yinsh[train]' "
            "(the shipped networks, agent spec 'pretrained', play without it)"
        ) from None
    return torch


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
    torch = import_torch(f"reading the {what} file {path}")
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
    except pickle.UnpicklingError as exc:
        raise CheckpointError(f"{what} file {path}: {load_failure(exc)}") from None
    except Exception as exc:  # torch raises many kinds for damaged archives
        raise CheckpointError(
            f"{what} file {path} is a damaged or foreign archive, not a PyTorch "
            f"checkpoint ({type(exc).__name__})"
        ) from None


def load_failure(exc: BaseException) -> str:
    """Why ``torch.load(weights_only=True)`` (or a library around it) failed, in one line.

    A refused pickle is told as such, naming what it holds, never with
    PyTorch's advice to load it with ``weights_only=False`` or to allowlist
    its classes: unpickling them could run any code.
    """
    text = " ".join(_ANSI.sub("", str(exc)).split())
    if isinstance(exc, pickle.UnpicklingError) or "weights_only" in text:
        named = _GLOBAL.search(text)
        holds = f" ({named.group(1)[:120]})" if named else ""
        return (
            f"it holds more than tensors and plain values{holds}, or is damaged: "
            "not loaded (unpickling other objects could run code)"
        )
    return text[:300] or type(exc).__name__


def check_weights(model: Any, source: str) -> None:
    """Raise CheckpointError unless ``model`` maps names to tensors whose values are finite."""
    torch = import_torch(f"checking {source}")
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


# --- finding checkpoints ---------------------------------------------------------


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


def load_network(path: str | Path) -> tuple[PolicyValueNet, PlayConfig, dict[str, Any]]:
    """The network of a checkpoint (file or run directory), what its player reads of
    its config (network, search, variant), and the raw data."""
    from agents.network.network import PolicyValueNet

    resolved = resolve_checkpoint(path)
    data = read_file(resolved)
    try:
        config = play_config(data["config"])
    except (KeyError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {resolved} holds no usable config: {exc}") from None
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
