"""Replace a file atomically: a failed or interrupted write leaves the old file as it was.

One mechanism for every file the project rewrites in place (game records,
checkpoints, replay windows, metrics, review output), so none of them can be
seen half-written under its final name or leave its temporary behind.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)``, then rename ``tmp`` to ``path``; on any failure, even
    SIGTERM's SystemExit, ``tmp`` is removed and ``path`` is untouched."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    # Created like any file (the umask applies), not private as mkstemp's are.
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """``path`` holds ``text`` (UTF-8, newlines as given), replaced atomically."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)

    write_atomic(path, write)
