"""A checkpoint write cut short leaves the old file and no half-written temporary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from train import run_checkpoint as checkpoint
from train.run_checkpoint import atomic_copy, atomic_save


def _save_then_fail(exc: BaseException):
    def save(obj: Any, f: Any) -> None:
        f.write(b"half a checkpoint")
        raise exc

    return save


@pytest.mark.parametrize("exc", [SystemExit(143), KeyboardInterrupt(), OSError("disk full")])
def test_interrupted_save_keeps_the_old_file_and_removes_the_temporary(
    exc: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "iter_000001.pt"
    atomic_save({"iteration": 1}, path)
    monkeypatch.setattr(checkpoint.torch, "save", _save_then_fail(exc))
    with pytest.raises(type(exc)):
        atomic_save({"iteration": 2}, path)
    assert torch.load(path)["iteration"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iter_000001.pt"]


def test_interrupted_copy_keeps_the_target_and_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "a.pt", tmp_path / "b.pt"
    torch.save({"which": "source"}, source)
    torch.save({"which": "target"}, target)

    def copy_then_fail(src: Path, dst: Path) -> None:
        Path(dst).write_bytes(b"partial")
        raise SystemExit(143)

    monkeypatch.setattr(checkpoint.shutil, "copyfile", copy_then_fail)
    with pytest.raises(SystemExit):
        atomic_copy(source, target)
    assert torch.load(target)["which"] == "target"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pt", "b.pt"]
