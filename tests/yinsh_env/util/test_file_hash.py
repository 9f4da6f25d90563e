"""Hashes are read in chunks and only of regular files (a link to /dev/zero never ends)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from yinsh_env.util import file_hash
from yinsh_env.util.file_hash import NotARegularFile, file_sha256


def test_a_file_is_hashed_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.bin"
    data = os.urandom(10_000)
    path.write_bytes(data)
    reads: list[int] = []
    real = hashlib.sha256

    class Counting:
        def __init__(self) -> None:
            self.inner = real()

        def update(self, chunk: bytes) -> None:
            reads.append(len(chunk))
            self.inner.update(chunk)

        def hexdigest(self) -> str:
            return self.inner.hexdigest()

    monkeypatch.setattr(file_hash, "CHUNK", 4096)
    monkeypatch.setattr(file_hash.hashlib, "sha256", Counting)
    assert file_sha256(path) == real(data).hexdigest()
    assert reads == [4096, 4096, 1808]


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "folder", "fifo"])
def test_what_is_no_regular_file_is_refused_by_name_unread(target: str, tmp_path: Path) -> None:
    if target.startswith("/dev/") and not os.path.exists(target):
        pytest.skip(f"no {target}")
    if target == "folder":
        (tmp_path / "folder").mkdir()
        target = str(tmp_path / "folder")
    elif target == "fifo":
        os.mkfifo(tmp_path / "fifo")  # nobody writes: opening it must not wait
        target = str(tmp_path / "fifo")
    link = tmp_path / "iter_000001.pt"
    link.symlink_to(target)
    for path in (target, link):
        with pytest.raises(NotARegularFile, match=f"{path} is not a regular file"):
            file_sha256(path)
