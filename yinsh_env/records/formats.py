"""Game records on disk: formats registered by file suffix, loading and saving.

A format is a small reader/writer pair (:class:`RecordFormat`): our PGN-like
text (:mod:`yinsh_env.records.record_text`, ``.yinsh`` and any unknown suffix),
boardspace.net ``.sgf`` (:mod:`yinsh_env.records.sgf`) and BGA ``.json``
transcriptions (:mod:`yinsh_env.records.bga`, read only).  :func:`register_format`
adds one.  The record itself is :class:`~yinsh_env.records.game_record.GameRecord`;
its names are re-exported here, where older code imports them from.

>>> import tempfile
>>> from pathlib import Path
>>> from yinsh_env import GameRecord, State, load_record, save_record
>>> record = GameRecord.from_state(State().apply_all(["E5", "F6"]), "alice", "bob")
>>> with tempfile.TemporaryDirectory() as folder:
...     save_record(record, Path(folder) / "game.sgf")  # the suffix picks the format
...     load_record(Path(folder) / "game.sgf") == record
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from yinsh_env.engine.errors import RecordError
from yinsh_env.records.bga import read_bga_json
from yinsh_env.records.game_record import (
    RESERVED_KEYS,
    RESULTS,
    RULE_TERMINATIONS,
    TERMINATIONS,
    VARIANTS,
    GameRecord,
    outcome_problem,
    parse_variant,
    push_ply,
    variant_name,
)
from yinsh_env.records.record_text import read_record, write_record
from yinsh_env.records.sgf import read_sgf, write_sgf
from yinsh_env.util.atomic_write import write_new_text, write_text

__all__ = [
    "FORMATS",
    "MAX_RECORD_BYTES",
    "RESERVED_KEYS",
    "RESULTS",
    "RULE_TERMINATIONS",
    "TERMINATIONS",
    "VARIANTS",
    "GameRecord",
    "RecordFormat",
    "format_for",
    "load_record",
    "outcome_problem",
    "parse_variant",
    "push_ply",
    "read_record",
    "register_format",
    "save_record",
    "variant_name",
    "write_record",
]


@dataclass(frozen=True)
class RecordFormat:
    """How records are read from and written to text with one file suffix."""

    name: str
    suffix: str  # lower case, with the dot: ".sgf"
    read: Callable[[str], GameRecord]
    write: Callable[[GameRecord], str] | None = None  # None: read only


#: Largest record file read (a long game's record is a few kB).
MAX_RECORD_BYTES = 4 << 20

#: The registered formats by suffix; a suffix not listed reads as our text format.
FORMATS: dict[str, RecordFormat] = {}
DEFAULT_FORMAT = RecordFormat("yinsh", ".yinsh", read_record, write_record)


def register_format(fmt: RecordFormat) -> None:
    """Make :func:`load_record`/:func:`save_record` use ``fmt`` for its suffix."""
    if not fmt.suffix.startswith(".") or fmt.suffix != fmt.suffix.lower():
        raise ValueError(f"format suffix must be lower case and start with '.': {fmt.suffix!r}")
    FORMATS[fmt.suffix] = fmt


for _fmt in (
    DEFAULT_FORMAT,
    RecordFormat("boardspace sgf", ".sgf", read_sgf, write_sgf),
    RecordFormat("BGA json", ".json", read_bga_json),
):
    register_format(_fmt)


def format_for(path: str | os.PathLike[str]) -> RecordFormat:
    """The format of a file by its suffix (any case); our text format when unknown.

    >>> format_for("games/round1.SGF").name, format_for("notes.txt").name
    ('boardspace sgf', 'yinsh')
    """
    return FORMATS.get(Path(path).suffix.lower(), DEFAULT_FORMAT)


def load_record(path: str | os.PathLike[str]) -> GameRecord:
    """Read a record file in the format its suffix names (see :data:`FORMATS`).

    Raises :class:`RecordError` naming the file and the line; also for what
    is no record file (a folder, a device such as ``/dev/zero``, a pipe, more
    than :data:`MAX_RECORD_BYTES`), which is never read in full.  A missing
    or unreadable file raises the ``OSError`` of opening it.
    """
    path = Path(path)
    if path.exists() and not path.is_file():  # a folder, a device, a pipe (opening may block)
        raise RecordError(f"{path}: not a record file (not a regular file)")
    with path.open("rb") as handle:
        raw = handle.read(MAX_RECORD_BYTES + 1)
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(f"{path}: over {MAX_RECORD_BYTES} bytes, too long for a game record")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RecordError(f"{path}: not UTF-8 text ({err.reason})") from None
    try:
        return format_for(path).read(text)
    except RecordError as err:
        raise RecordError(f"{path}: {err}") from None


def save_record(record: GameRecord, path: str | os.PathLike[str], *, new: bool = False) -> None:
    """Write a record in the format its suffix names (our text format otherwise).

    The text is built (and the game checked) before the file is touched, and
    the file is replaced atomically, so an error leaves an existing file intact.
    With ``new`` (a name the program chose inside a folder) the file is
    created instead, and anything already at the name, a symlink included, is
    refused with ``FileExistsError`` rather than replaced or followed
    (:func:`~yinsh_env.util.atomic_write.write_new_file`).
    """
    path = Path(path)
    fmt = format_for(path)
    if fmt.write is None:
        raise RecordError(f"{path}: saving {fmt.name} ({fmt.suffix}) is not supported")
    text = fmt.write(record)
    (write_new_text if new else write_text)(path, text)
