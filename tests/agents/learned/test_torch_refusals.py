"""Every loader that wraps ``torch.load`` refuses a foreign pickle in one line, and never
passes on PyTorch's advice to load it again with ``weights_only=False`` (which runs it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from agents.learned.ppo_policy import load_policy  # noqa: E402
from agents.network.checkpoint import read_file  # noqa: E402


class _Foreign:
    """A class no weights file holds: PyTorch's weights-only load refuses it."""


LOADERS: dict[str, Callable[[Path], Any]] = {"ppo policy": load_policy, "checkpoint": read_file}


@pytest.mark.parametrize("loader", list(LOADERS), ids=list(LOADERS))
def test_a_foreign_pickle_is_refused_without_the_unsafe_advice(tmp_path: Path, loader: str) -> None:
    # load_policy passed PyTorch's whole message on: "Re-running `torch.load` with
    # `weights_only` set to `False` will likely succeed", over several lines.
    path = tmp_path / "foreign.pt"
    torch.save({"format": "x", "payload": _Foreign()}, path)
    with pytest.raises(ValueError) as caught:
        LOADERS[loader](path)
    message = str(caught.value)
    assert str(path) in message and "_Foreign" in message and "not loaded" in message
    assert "weights_only" not in message and "safe_globals" not in message
    assert "\n" not in message and "\x1b" not in message


def test_a_ppo_policy_path_that_is_no_regular_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a regular file"):
        load_policy(tmp_path)
