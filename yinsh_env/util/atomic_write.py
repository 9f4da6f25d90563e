"""The one writer for every file the project writes, whatever the path names.

- a regular file, or a name not taken yet: written to a temporary file beside
  it and renamed over it, so a failed or interrupted write leaves the old file
  as it was and nothing is seen half-written under its final name; the old
  file's permission bits (and, as root, its owner) are kept, and a read-only
  file is refused as ``open`` would refuse it;
- a symlink: written through to its target, atomically at the target's path
  (the link stays a link);
- a device, a pipe (``/dev/stdout``, ``/dev/null``, a FIFO) or a file reached
  through a process's descriptor link (``/proc/self/fd/1``): written as a
  plain stream, never replaced, created or truncated;
- a folder: refused, as is anything that cannot be opened for writing.

Those rules serve a path a person named.  A file the program names itself
inside a folder (a game record ``DIR/game-00000.yinsh``, a review
``DIR/g.review.json``) is written by :func:`write_new_file` instead: created
whole under its name, never replacing what is there and never following a
link planted there, so a folder's contents cannot redirect a write or lose an
earlier run's files.

Every ``OSError`` it raises names the path it was given (``exc.filename``),
so a message built from it says which file failed (``/dev/full``: no space
left on device).  Command lines check their output paths before any work
with :func:`agents.infra.cli_args.output_file`, which uses :func:`refuse_folder`'s
rule too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

#: How many symlinks a path may pass through, as Linux allows.
MAX_LINKS = 40

#: A process's descriptor folder: its entries are "magic" links (a pipe, a
#: terminal, a deleted file) that only ``open`` follows rightly.
_FD_FOLDER = re.compile(r"^/proc/[^/]+/fd$|^/dev/fd$")


def _named(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` again, naming ``path`` (the subclass, e.g. PermissionError, is kept)."""
    if exc.filename == os.fspath(path):
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(path))


def _through_fd_link(path: Path) -> bool:
    """Whether ``path``'s chain of symlinks passes through a descriptor link."""
    current = os.path.abspath(path)
    for _ in range(MAX_LINKS):
        folder = os.path.dirname(current)
        if _FD_FOLDER.match(os.path.realpath(folder)):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.join(os.path.realpath(folder), os.readlink(current))
    return False


def target_of(path: str | os.PathLike[str]) -> tuple[Path, bool]:
    """Where a write to ``path`` lands, and whether it is a plain stream.

    Raises ``IsADirectoryError`` for a folder and ``OSError`` (naming
    ``path``) for a path that cannot be looked at or loops.
    """
    path = Path(path)
    try:
        if _through_fd_link(path):
            return path, True
        info = os.stat(path)  # follows symlinks; a missing target is a new file
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise _named(exc, path) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "is a folder, not a file", os.fspath(path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        return path, True  # a device, a FIFO, a socket: written in place
    try:
        return Path(os.path.realpath(path, strict=False)), False
    except (OSError, RuntimeError) as exc:
        raise OSError(40, f"cannot be resolved ({exc})", os.fspath(path)) from None


def refuse_folder(path: str | os.PathLike[str]) -> None:
    """Raise ``IsADirectoryError`` naming ``path`` if it is (or links to) a folder."""
    target_of(path)


def _write_stream(path: Path, write: Callable[[BinaryIO], object]) -> None:
    # No O_CREAT, no O_TRUNC: the device or pipe is written into as it is.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "wb") as handle:
        write(handle)


def _new_temporary(target: Path) -> Path:
    """An empty file beside ``target``, just created (``O_EXCL``: never a link's target)."""
    tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    # Created like any file (the umask applies), not private as mkstemp's are.
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    return tmp


def _replace(target: Path, fill: Callable[[Path], object]) -> None:
    """``fill(tmp)`` for a temporary beside ``target``, then rename it over ``target``."""
    try:
        old: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not os.access(target, os.W_OK):  # as open("w") would refuse it
        raise PermissionError(13, "Permission denied (the file is read-only)", os.fspath(target))
    tmp = _new_temporary(target)
    try:
        fill(tmp)
        if old is not None:  # the new file takes the old one's place: its mode and owner too
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
            if (old.st_uid, old.st_gid) != _owner(tmp):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.chown(tmp, old.st_uid, old.st_gid)
        os.replace(tmp, target)
    except BaseException:  # even SIGTERM's SystemExit: no temporary is left behind
        tmp.unlink(missing_ok=True)
        raise


def _owner(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid


def _fill_with(write: Callable[[BinaryIO], object]) -> Callable[[Path], None]:
    def fill(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            write(handle)

    return fill


def write_file(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(handle)`` with a binary handle whose bytes end up in ``path``.

    Atomic for a regular file (also through a symlink); a plain stream for a
    device or a pipe.  See the module's docstring.  Any ``OSError`` names ``path``.
    """
    target, stream = target_of(path)
    try:
        if stream:
            _write_stream(target, write)
        else:
            _replace(target, _fill_with(write))
    except OSError as exc:
        raise _named(exc, path) from None


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """``path`` holds ``data`` (see :func:`write_file`)."""
    write_file(path, lambda handle: handle.write(data))


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """``path`` holds ``text`` as UTF-8, newlines as given (see :func:`write_file`)."""
    write_bytes(path, text.encode("utf-8"))


def write_atomic(path: str | os.PathLike[str], write: Callable[[Path], object]) -> None:
    """``write(tmp)`` to a file named ``tmp``, whose bytes then land in ``path``
    as :func:`write_file` puts them.  For writers that only take a file name."""
    target, stream = target_of(path)
    try:
        if not stream:
            _replace(target, write)
            return
        with tempfile.TemporaryDirectory(prefix="yinsh-write-") as folder:
            staged = Path(folder) / "staged"
            write(staged)
            with open(staged, "rb") as source:
                _write_stream(target, lambda handle: shutil.copyfileobj(source, handle))
    except OSError as exc:
        raise _named(exc, path) from None


def write_new_file(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Create ``path`` holding what ``write(handle)`` writes, for a name the program
    chose inside a folder.

    Whatever is at that name already (a file, a folder, a symlink, dangling or
    not) is left alone and ``FileExistsError`` names ``path``: nothing is
    followed, nothing replaced.  The bytes go to a temporary beside it first and
    are hard-linked to the name (which ``link`` creates or refuses in one step),
    so nothing is seen half-written; where the file system has no hard links the
    name is created with ``O_EXCL | O_NOFOLLOW`` and written in place.
    """
    path = Path(path)
    try:
        tmp = _new_temporary(path)
        try:
            _fill_with(write)(tmp)
            try:
                os.link(tmp, path, follow_symlinks=False)
            except OSError as exc:  # no hard links here (EPERM, ENOTSUP...): create it in place
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                _write_exclusive(path, tmp)
        finally:
            tmp.unlink(missing_ok=True)
    except FileExistsError:
        raise FileExistsError(
            errno.EEXIST, "already exists (not replaced, not followed)", os.fspath(path)
        ) from None
    except OSError as exc:
        raise _named(exc, path) from None


def _write_exclusive(path: Path, source: Path) -> None:
    """Copy ``source`` to a new ``path``; an error removes what was begun."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle, open(source, "rb") as data:
            shutil.copyfileobj(data, handle)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def write_new_text(path: str | os.PathLike[str], text: str) -> None:
    """A new ``path`` holding ``text`` as UTF-8 (see :func:`write_new_file`)."""
    write_new_file(path, lambda handle: handle.write(text.encode("utf-8")))
