"""Argument types for the project's command lines: every value checked when it is parsed.

A command that plays games or trains a network for minutes and then cannot
write its results loses them.  So output paths are checked by ``argparse``
itself, before any work starts: :func:`output_file` (its folder exists, it is
not a folder, it can be written: tried by opening it for appending, which
changes nothing, and removing it again if the check created it; optionally its
suffix; with ``parents=True``, as trainers' ``--save`` takes it, a missing
folder is created when the run writes, so its nearest existing ancestor must
be a folder that can be written in), :func:`output_dir` (not a file; a
missing folder is created later by the command, parents too, so its nearest
existing ancestor must be a folder that can be written in: tried by creating
and removing a file there) and
:func:`input_file`.  Numbers are read by :func:`int_in` (ASCII digits within a
range).  A bad value exits with argparse's usage line and one error line
naming the argument (``argument --json: folder 'missing' does not exist``),
status 2.
"""

from __future__ import annotations

import argparse
import errno
import functools
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TypeVar

from agents.params import clip
from agents.spec import AgentSpecError, check_spec, make_agent
from yinsh_env.util.atomic_write import target_of
from yinsh_env.util.numeric_text import is_int_text, parse_float


class PathError(ValueError, argparse.ArgumentTypeError):
    """A path that cannot serve: argparse reports its message; Python callers get a ValueError."""


#: The longest file name most file systems take (bytes).
NAME_MAX = 255

T = TypeVar("T", str, Path)
R = TypeVar("R")


def any_path(text: str) -> Path:
    """An argparse type: a path, not empty, without NUL or names too long for any file system."""
    if not text:
        raise PathError("an empty path")
    if "\x00" in text:
        raise PathError(f"{clip(repr(text))} contains a NUL character")
    path = Path(text)
    if any(len(os.fsencode(part)) > NAME_MAX for part in path.parts):
        raise _fail(path, f"has a name longer than {NAME_MAX} bytes")
    return path


def _fail(path: Path, problem: str) -> PathError:
    return PathError(f"{clip(repr(str(path)), 120)} {problem}")


def _os_errors(check: Callable[[T], R]) -> Callable[[T], R]:
    """``check`` with what the OS answers (no permission to look, a path too long) as PathError."""

    @functools.wraps(check)
    def guarded(value: T) -> R:
        try:
            return check(value)
        except OSError as exc:
            raise _fail(Path(value), f"cannot be used ({exc.strerror or exc})") from None

    return guarded


@_os_errors
def check_writable_file(path: Path) -> None:
    """Raise :class:`PathError` unless ``path`` can be written as a file now.

    Opens it for appending (created if missing, then removed): nothing it
    holds changes, and what the OS would refuse later is refused now.
    """
    _check_folder(path)
    try:  # a symlink's target is what gets written (and, if the check made it, removed)
        target, stream = target_of(path)
    except IsADirectoryError:
        raise _fail(path, "is a folder; give a file name") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _fail(path, "cannot be resolved (a symlink loop?)") from None
        raise _fail(path, f"cannot be used ({exc.strerror})") from None
    if stream:  # a device or a pipe: written into as it is, never created or replaced
        _check_stream(path)
        return
    _check_folder(target)
    existed = target.exists()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        raise _fail(path, f"cannot be written ({exc.strerror})") from None
    os.close(fd)
    if not existed:
        target.unlink(missing_ok=True)


def _check_folder(path: Path) -> None:
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise PathError(
            f"folder {clip(repr(str(folder)), 120)} {what} (for {clip(repr(path.name))})"
        )


def _check_stream(path: Path) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO and stat.S_ISFIFO(os.stat(path).st_mode):
            return  # a FIFO nobody reads yet: the write waits for its reader, as a shell's would
        raise _fail(path, f"cannot be written ({exc.strerror})") from None
    os.close(fd)


def output_file(
    suffixes: Collection[str] | Callable[[], Collection[str]] = (),
    parents: bool = False,
) -> Callable[[str], Path]:
    """An argparse type: a file that can be written, ending in one of ``suffixes`` if given.

    ``suffixes`` may be a function, called only when the argument is given
    (e.g. asking matplotlib which formats it writes).  ``parents=True``: a
    missing folder is fine when it could be made (:func:`output_dir`); the
    command creates it when it writes the file (``--save runs/x/p.pt`` on a
    fresh checkout), nothing is made now.
    """

    def parse(text: str) -> Path:
        path = any_path(text)
        allowed = suffixes() if callable(suffixes) else suffixes
        if allowed and path.suffix.lower() not in allowed:
            listed = ", ".join(sorted(allowed))
            what = f"an unknown extension {path.suffix!r}" if path.suffix else "no extension"
            raise _fail(path, f"has {what}: use {listed}")
        if parents and not os.path.lexists(path.parent):
            output_dir(str(path.parent))  # made when the file is written
        else:
            check_writable_file(path)
        return path

    return parse


@_os_errors
def output_dir(text: str) -> Path:
    """An argparse type: a folder to write in, created by the command if missing."""
    path = any_path(text)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "" if existing == path else f" (in {clip(repr(str(path)), 120)})"
        raise _fail(existing, f"is a file, not a folder{where}")
    try:  # what the OS refuses (permissions, a read-only file system) is refused now
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=existing)
    except OSError as exc:
        raise _fail(existing, f"is a folder that cannot be written in ({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)
    return path


def image_formats() -> list[str]:
    """The file extensions matplotlib writes; ``ArgumentTypeError`` without matplotlib."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise argparse.ArgumentTypeError("needs matplotlib (pip install matplotlib)") from None
    return [f".{ext}" for ext in FigureCanvasBase.get_supported_filetypes()]


#: An argparse type: an image file matplotlib can write (``.png``, ``.svg``, ``.pdf``...).
image_file = output_file(image_formats)


@_os_errors
def input_dir(text: str) -> Path:
    """An argparse type: an existing folder."""
    path = any_path(text)
    if not path.is_dir():
        raise _fail(path, "is a file, not a folder" if path.exists() else "does not exist")
    return path


@_os_errors
def input_file(text: str) -> Path:
    """An argparse type: an existing file this user can read."""
    path = any_path(text)
    if path.is_dir():
        raise _fail(path, "is a folder; give a file")
    if path.exists() and not path.is_file():  # a device or a pipe: never opened (it may block)
        raise _fail(path, "is not a regular file")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror})") from None
    return path


def agent_spec(text: str) -> str:
    """An argparse type: an agent spec that names a known agent with valid parameters."""
    try:
        check_spec(text)
    except AgentSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


#: A host name: labels of letters, digits and inner hyphens, joined by dots.
_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
)


def host_name(text: str) -> str:
    """An argparse type: a host name (``yinsh.lan``), in lower case, with no port."""
    name = text.strip().lower().removesuffix(".")
    if not _HOST_NAME.fullmatch(name):
        raise argparse.ArgumentTypeError(
            f"{clip(repr(text))} is not a host name (letters, digits, '-' and '.'; no port)"
        )
    return name


def build_agents(parser: argparse.ArgumentParser, specs: Iterable[str]) -> None:
    """Build (and close) the agent of each spec once, after parsing, before any work.

    :func:`agent_spec` checks a spec's words; building also reads the files it
    names (a checkpoint, a model), so a long run cannot fail on one later.  A bad
    one exits through ``parser.error`` (status 2) naming it.
    """
    try:
        for spec in specs:
            make_agent(spec).close()
    except AgentSpecError as exc:
        parser.error(str(exc))


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer ``low..high`` in ASCII digits (``1e3`` and ``٣`` refused)."""

    def parse(text: str) -> int:
        if not is_int_text(text) or len(text.lstrip("+-")) > 30:
            raise argparse.ArgumentTypeError(
                f"must be an integer {low}..{high}, got {clip(repr(text))}"
            )
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be an integer {low}..{high}, got {clip(repr(text))}"
            )
        return value

    parse.__name__ = f"integer {low}..{high}"
    return parse


def number_in(low: float, high: float, *, above: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` if ``above``)."""
    bounds = f"({low:g}, {high:g}]" if above else f"[{low:g}, {high:g}]"

    def parse(text: str) -> float:
        try:  # strictly: float() reads "1_0" as 10
            value = parse_float(text) if len(text) <= 100 else math.nan
        except ValueError:
            value = math.nan
        if not (low < value <= high if above else low <= value <= high):  # nan fails both
            raise argparse.ArgumentTypeError(
                f"must be a finite number in {bounds}, got {clip(repr(text))}"
            )
        return value

    parse.__name__ = f"number in {bounds}"
    return parse
