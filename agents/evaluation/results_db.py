"""Every finished game in one SQLite file: ``yinsh-eval --db FILE``, ``eval.db`` in training.

As cutechess and fastchess keep every game, the arena appends one row per
finished game to table ``games``: both agents' specs, the names they were
shown by (``yinsh-eval mine=SPEC``) and their identities
(:func:`~agents.evaluation.scale.agent_identity`), the sha256 of every file
an agent plays from (a network's checkpoint, a ``py:`` agent's source), the game's seed, variant and
opening, the whole record (our ``.yinsh`` text, replayable), the result and
termination, each side's thinking time and decisions, the code's version,
and which match (a random id per run) and event wrote it.
``yinsh-ratings FILE`` fits ratings over them
(:mod:`agents.evaluation.ratings_cli`).

**Safe to share and to kill.**  The file is in WAL mode and every game is
one transaction, committed before the game is reported anywhere: a writer
killed by SIGKILL loses at most the game it was playing, and the file passes
``PRAGMA integrity_check``.  Several writers (two matches, a training run's
evaluation and a match) append to one file at once: SQLite serialises their
transactions, each waiting up to :data:`BUSY_TIMEOUT_S` for the others.

**Only ours.**  The file carries this project's ``application_id``; a file
that is not an SQLite database, or is one of another application (or of a
newer schema), is refused before any game, and left as it was.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.evaluation.games import GameResult, game_record
from agents.evaluation.scale import agent_identity
from agents.evaluation.version import code_version
from agents.infra.cli_args import PathError, check_writable_file
from agents.spec import make_agent, source_files
from yinsh_env import action_to_str
from yinsh_env.records.formats import write_record
from yinsh_env.util.file_hash import file_sha256

#: ``PRAGMA application_id`` of our databases: "YNSH".
APPLICATION_ID = 0x594E5348
#: The layout of table ``games`` this version writes and reads (2 added the
#: names; a version 1 file gains them, empty, when it is next written to).
SCHEMA_VERSION = 2
#: Seconds a writer waits for the others' transactions before it gives up.
BUSY_TIMEOUT_S = 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    recorded TEXT NOT NULL,
    match_id TEXT NOT NULL,
    event TEXT NOT NULL,
    game INTEGER NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    white_identity TEXT NOT NULL,
    black_identity TEXT NOT NULL,
    white_files TEXT NOT NULL,
    black_files TEXT NOT NULL,
    seed INTEGER NOT NULL,
    rings_to_win INTEGER NOT NULL,
    opening TEXT NOT NULL,
    record TEXT NOT NULL,
    plies INTEGER NOT NULL,
    result TEXT NOT NULL,
    termination TEXT NOT NULL,
    reason TEXT NOT NULL,
    white_seconds REAL NOT NULL,
    white_decisions INTEGER NOT NULL,
    black_seconds REAL NOT NULL,
    black_decisions INTEGER NOT NULL,
    code_version TEXT NOT NULL,
    settings TEXT NOT NULL,
    white_name TEXT NOT NULL DEFAULT '',
    black_name TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS games_players ON games (white_identity, black_identity);
"""


class ResultsDBError(ValueError):
    """A ``--db`` file that is not this project's results database (the message names it)."""


@dataclass(frozen=True)
class AgentInfo:
    """What the database records about an agent: spec, name shown, identity, files and hashes."""

    spec: str
    identity: str
    files: dict[str, str]
    name: str = ""

    @classmethod
    def of(cls, agent: Agent, spec: str | None = None, name: str = "") -> AgentInfo:
        spec = spec if spec is not None else agent.spec
        paths = [*agent.files(), *(source_files(spec) if spec else [])]
        files = {path: file_sha256(path) for path in paths}
        return cls(spec, agent_identity(agent), files, name or spec)

    @classmethod
    def of_spec(cls, spec: str, name: str = "") -> AgentInfo:
        """Build the agent to learn its identity and files, then close it."""
        agent = make_agent(spec, seed=0)
        try:
            return cls.of(agent, spec, name)
        finally:
            agent.close()


def check_db(path: str | Path) -> None:
    """Raise :class:`ResultsDBError` unless ``path`` is absent, empty, or one of ours.

    Reads only: a refused file is left byte for byte as it was (a new file is
    created and removed again, to learn that it can be written).
    """
    file = Path(path)
    if file.is_dir():
        raise ResultsDBError(f"--db {file}: is a directory, not a database file")
    if not file.exists():
        if not file.parent.is_dir():
            raise ResultsDBError(f"--db {file}: folder {file.parent} does not exist")
        try:  # created and removed: SQLite's "unable to open" came after the first game
            check_writable_file(file)
        except PathError as exc:
            raise ResultsDBError(f"--db {exc}") from None
        return
    if not file.is_file():  # SQLite needs a file it can lock and seek in; a pipe blocks
        raise ResultsDBError(f"--db {file}: not a regular file (a device, a pipe or a socket)")
    if file.stat().st_size == 0:
        return
    with open(file, "rb") as handle:
        header = handle.read(100)
    if not header.startswith(b"SQLite format 3\x00") or len(header) < 100:
        raise ResultsDBError(f"--db {file}: not an SQLite database (not written by yinsh-eval)")
    application_id = int.from_bytes(header[68:72], "big")
    user_version = int.from_bytes(header[60:64], "big")
    if application_id != APPLICATION_ID:
        raise ResultsDBError(
            f"--db {file}: an SQLite database of another application "
            f"(application_id {application_id:#x}, ours {APPLICATION_ID:#x}); "
            "give a new file or one yinsh-eval wrote"
        )
    if user_version > SCHEMA_VERSION:
        raise ResultsDBError(
            f"--db {file}: written by a newer version (schema {user_version}, "
            f"this one reads {SCHEMA_VERSION})"
        )


def connect(path: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open (``create``: and set up) a results database after :func:`check_db`."""
    check_db(path)
    if not create and not Path(path).is_file():
        raise ResultsDBError(f"{path}: no such results database")
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if create:
            # The identity and the schema first, in one transaction: the file is
            # never seen non-empty without our application_id (a second writer
            # starting at the same moment would refuse it).
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                for statement in filter(str.strip, SCHEMA.split(";")):
                    conn.execute(statement)
                _upgrade(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL survives any crash of the process (only a power
            # cut can lose the last transactions).
            conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ResultsDBError(f"--db {path}: {exc}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring a version 1 table to this version, in the caller's transaction."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    columns = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    for column in ("white_name", "black_name"):
        if column not in columns:
            conn.execute(f"ALTER TABLE games ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


class GameWriter:
    """Appends a match's finished games to a results database, one transaction each."""

    def __init__(
        self,
        path: str | Path,
        event: str,
        infos: Callable[[int], AgentInfo],
        rings_to_win: int,
        settings: dict[str, Any],
    ) -> None:
        self.path = Path(path)
        self.conn = connect(path)
        self.event = event
        self.infos = infos
        self.rings_to_win = rings_to_win
        self.settings = json.dumps(settings, sort_keys=True)
        self.match_id = uuid.uuid4().hex
        self.written = 0

    def add(self, result: GameResult) -> None:
        """Commit ``result`` as one row (returns once it is on disk, as SQLite promises)."""
        task = result.task
        white, black = self.infos(task.white), self.infos(task.black)
        names = {task.white: white.name, task.black: black.name}
        record = game_record(result, names, self.rings_to_win)
        row = {
            "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "match_id": self.match_id,
            "event": self.event,
            "game": task.index,
            "white": white.spec,
            "black": black.spec,
            "white_name": white.name,
            "black_name": black.name,
            "white_identity": white.identity,
            "black_identity": black.identity,
            "white_files": json.dumps(white.files, sort_keys=True),
            "black_files": json.dumps(black.files, sort_keys=True),
            "seed": task.seed,
            "rings_to_win": self.rings_to_win,
            "opening": " ".join(action_to_str(a) for a in task.opening),
            "record": write_record(record),
            "plies": len(result.actions),
            "result": str(result.result),
            "termination": str(result.termination),
            "reason": result.reason,
            "white_seconds": result.think[0][0],
            "white_decisions": result.think[0][1],
            "black_seconds": result.think[1][0],
            "black_decisions": result.think[1][1],
            "code_version": code_version(),
            "settings": self.settings,
        }
        columns = ", ".join(row)
        marks = ", ".join("?" * len(row))
        with _transaction(self.conn):
            self.conn.execute(
                f"INSERT INTO games ({columns}) VALUES ({marks})", tuple(row.values())
            )
        self.written += 1

    def close(self) -> None:
        self.conn.close()


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an error)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def game_writer(
    path: str | Path,
    event: str,
    specs: Sequence[str],
    built: dict[int, Agent],
    rings_to_win: int,
    settings: dict[str, Any],
    names: Sequence[str] = (),
) -> GameWriter:
    """A :class:`GameWriter` for a match of ``specs`` (shown by ``names``, default
    the specs); agents ``built`` here describe themselves, the others are built
    once (then closed) when their first game ends."""
    shown = list(names) or list(specs)
    known = {i: AgentInfo.of(agent, specs[i], shown[i]) for i, agent in built.items()}

    def info(index: int) -> AgentInfo:
        if index not in known:
            known[index] = AgentInfo.of_spec(specs[index], shown[index])
        return known[index]

    return GameWriter(path, event, info, rings_to_win, settings)


@dataclass(frozen=True)
class StoredGame:
    """The columns of a stored game that ratings need (names: '' in a version 1 file)."""

    white: str
    black: str
    white_identity: str
    black_identity: str
    result: str
    rings_to_win: int
    white_name: str = ""
    black_name: str = ""


def read_games(path: str | Path) -> Iterator[StoredGame]:
    """Every game in a results database (refusing a file that is not one)."""
    conn = connect(path, create=False)
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
        names = ", white_name, black_name" if "white_name" in columns else ""
        query = (
            "SELECT white, black, white_identity, black_identity, result, rings_to_win"
            f"{names} FROM games ORDER BY id"
        )
        for row in conn.execute(query):
            yield StoredGame(*row)
    except sqlite3.DatabaseError as exc:
        raise ResultsDBError(f"{path}: {exc}") from None
    finally:
        conn.close()
