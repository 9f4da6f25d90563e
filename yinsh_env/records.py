"""Game records: a small PGN-like text format, and loading/saving any record.

A record holds what is needed to replay a game exactly and to know how it
ended: the variant, the players, the result, why the game ended, free tags,
and every decision in the project's action notation.

The format (files usually named ``*.yinsh``)::

    ; comments run from ';' to the end of the line
    [Variant "standard"]
    [White "alphabeta:depth=3"]
    [Black "random"]
    [Result "W"]
    [Termination "rings"]
    [date "2026-03-13"]
    [event "arena round 2"]

    1. W E5
    2. B F6       {inline comments go in braces}
    ...
    57. W E5-E8
    58. W xE6-E10 ; White made a row: it removes the row, then a ring
    59. W xA2

Header lines are ``[Key "value"]``; values escape ``\\`` ``"`` and newlines as
``\\\\``, ``\\"`` and ``\\n``.  The reserved keys (any case) are:

``Variant``
    ``standard`` (3 rings to win), ``blitz`` (1) or ``rings=N``.
``White`` / ``Black``
    player names or agent specs.
``Result``
    ``W``, ``B``, ``draw`` or ``*`` (unfinished).
``Termination``
    why the game ended: by the rules ``rings`` (a player removed the winning
    ring), ``pool`` (the marker pool ran out), ``passes`` (two passes in a
    row); otherwise ``resign``, ``timeout``, ``forfeit``, ``agreement`` (a
    draw), ``adjudication`` or ``unfinished``.

Every other key is a free tag (date, event, reason, opening, ...), kept as
written.  Missing reserved keys default to ``standard``, ``?`` for names, and
the result and termination that the replayed game shows.

The moves follow the header, one ply per line as written by
:func:`write_record`, or several per line.  A ply is an optional number
``N.`` (checked: it must be the ply's number), an optional side ``W``/``B``
(checked against the side to act) and the action: ``E5`` place a ring,
``E5-E8`` move a ring, ``xE5-E9`` remove a row, ``xE5`` remove a ring,
``pass``.

Reading replays the game with the checked rules: a malformed line, an
illegal action or a result that contradicts the final position raises
:class:`~yinsh_env.errors.RecordError` naming the line number and the line.
A game that ended by the rules must record that result; a game that did not
(resigned, timed out, forfeited, unfinished) must not claim a rules ending.

:func:`load_record` also reads boardspace.net ``.sgf`` files
(:mod:`yinsh_env.sgf`) and BGA ``.json`` transcriptions (:mod:`yinsh_env.bga`).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .actions import action_to_str, str_to_action
from .errors import IllegalActionError, NotationError, RecordError
from .state import DEFAULT_RINGS_TO_WIN, RINGS_PER_PLAYER, State

#: A UTF-8 byte order mark, as some editors write it: ignored at the start of a record.
BOM: Final = "\ufeff"

RESULTS: Final = ("W", "B", "draw", "*")
#: Ways a game ends by the rules (the replayed position shows them).
RULE_TERMINATIONS: Final = ("rings", "pool", "passes")
#: Every termination a record may give.
TERMINATIONS: Final = (
    *RULE_TERMINATIONS,
    "resign",
    "timeout",
    "forfeit",
    "agreement",
    "adjudication",
    "unfinished",
)
#: Results allowed for each termination that is not a rules ending.
_ALLOWED_RESULTS: Final = {
    "resign": ("W", "B"),
    "timeout": ("W", "B"),
    "forfeit": ("W", "B"),
    "agreement": ("draw",),
    "adjudication": ("W", "B", "draw"),
    "unfinished": ("*",),
}
VARIANTS: Final = {"standard": 3, "blitz": 1}
RESERVED_KEYS: Final = ("Variant", "White", "Black", "Result", "Termination")
_TAG_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_HEADER_LINE: Final = re.compile(r'\[\s*([^\s\]"]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*(?:;.*)?\Z')
_PLY_NUMBER: Final = re.compile(r"(\d+)\.\Z")
_ESCAPES: Final = {"\\": "\\", '"': '"', "n": "\n"}


def variant_name(rings_to_win: int) -> str:
    """``'standard'``, ``'blitz'`` or ``'rings=N'`` for a number of rings to win."""
    for name, rings in VARIANTS.items():
        if rings == rings_to_win:
            return name
    return f"rings={rings_to_win}"


def parse_variant(text: str) -> int:
    """Rings to win named by a variant (``standard``, ``blitz``, ``rings=N``)."""
    key = text.strip().lower()
    if key in VARIANTS:
        return VARIANTS[key]
    match = re.fullmatch(r"rings\s*=\s*(\d+)", key)
    if match and 1 <= int(match.group(1)) <= RINGS_PER_PLAYER:
        return int(match.group(1))
    raise RecordError(
        f"unknown variant {text!r} (expected standard, blitz or rings=N with N in "
        f"1..{RINGS_PER_PLAYER})"
    )


@dataclass
class GameRecord:
    """One game: variant, players, result, termination, actions and tags.

    ``actions`` are in notation, normalised on creation (``'e5-e8'`` becomes
    ``'E5-E8'``; action indices are accepted too).  Creating a record checks
    its fields, not the game: :meth:`replay` checks that the actions are legal
    and that the result agrees with the final position.
    """

    rings_to_win: int = DEFAULT_RINGS_TO_WIN
    white: str = "?"
    black: str = "?"
    result: str = "*"
    termination: str = "unfinished"
    actions: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.rings_to_win, bool) or not isinstance(self.rings_to_win, int):
            raise RecordError(f"rings_to_win must be an integer, got {self.rings_to_win!r}")
        if not 1 <= self.rings_to_win <= RINGS_PER_PLAYER:
            raise RecordError(f"rings_to_win must be in 1..{RINGS_PER_PLAYER}")
        for role in ("white", "black"):
            if not isinstance(getattr(self, role), str):
                raise RecordError(f"{role} must be a string, got {getattr(self, role)!r}")
        if self.result not in RESULTS:
            raise RecordError(f"unknown result {self.result!r} (expected one of {RESULTS})")
        if self.termination not in TERMINATIONS:
            raise RecordError(
                f"unknown termination {self.termination!r} (expected one of {TERMINATIONS})"
            )
        self.actions = [_normalise(a, ply) for ply, a in enumerate(self.actions, 1)]
        self.tags = dict(self.tags)
        for key, value in self.tags.items():
            _check_tag(key, value)

    @property
    def variant(self) -> str:
        return variant_name(self.rings_to_win)

    @classmethod
    def from_state(
        cls,
        state: State,
        white: str = "?",
        black: str = "?",
        *,
        actions: list[str] | list[int] | None = None,
        result: str | None = None,
        termination: str | None = None,
        **tags: str,
    ) -> GameRecord:
        """The record of the game that led to ``state``.

        The actions are ``state.actions`` unless given: a copied state
        (``state.copy()``) has no history, so pass the list kept elsewhere.
        The result and termination default to what the position shows
        (``'unfinished'`` while playing); give them for a game that ended
        otherwise, e.g. ``result='B', termination='resign'``.  Raises
        :class:`RecordError` when the actions do not lead to ``state`` or the
        result contradicts it.
        """
        if actions is None:
            if len(state.actions) != state.ply:
                raise RecordError(
                    f"the state holds {len(state.actions)} of its {state.ply} actions "
                    "(copy() drops the history); pass actions=[...]"
                )
            actions = state.actions
        if termination is None:
            termination = state.end_reason or "unfinished"
        if result is None:
            result = state.result
        record = cls(
            rings_to_win=state.rings_to_win,
            white=white,
            black=black,
            result=result,
            termination=termination,
            actions=list(actions),  # type: ignore[arg-type]  # ints are normalised
            tags=tags,
        )
        final = record.replay()
        if final.key() != state.key():
            raise RecordError(
                f"the {len(record.actions)} actions lead to {final.to_text()!r}, "
                f"not to the given state {state.to_text()!r}"
            )
        return record

    def replay(self) -> State:
        """Replay the game with the checked rules and return the final state.

        Raises :class:`RecordError` naming the ply and the action for an
        illegal action, or naming the problem when the recorded result or
        termination contradicts the final position.
        """
        state = State(rings_to_win=self.rings_to_win)
        for ply, action in enumerate(self.actions, 1):
            push_ply(state, ply, action)
        problem = outcome_problem(self, state)
        if problem:
            raise RecordError(problem)
        return state


def _normalise(action: object, ply: int) -> str:
    try:
        if isinstance(action, str):
            return action_to_str(str_to_action(action))
        return action_to_str(action)  # type: ignore[arg-type]
    except NotationError as err:
        raise RecordError(f"ply {ply}: {err}") from None


def _check_tag(key: object, value: object) -> None:
    if not isinstance(key, str) or not _TAG_KEY.match(key):
        raise RecordError(f"bad tag name {key!r} (letters, digits, '_', '.', '-')")
    if key.lower() in (k.lower() for k in RESERVED_KEYS):
        raise RecordError(f"tag name {key!r} is reserved for the record's own fields")
    if not isinstance(value, str):
        raise RecordError(f"tag {key!r} must have a string value, got {value!r}")


def push_ply(state: State, ply: int, action: str) -> None:
    """Apply ``action`` (ply number ``ply``) or raise RecordError naming both."""
    try:
        state.push(action)
    except IllegalActionError as err:
        raise RecordError(f"ply {ply} ({action}): {err}") from None
    except NotationError as err:
        raise RecordError(f"ply {ply}: {err}") from None


def outcome_problem(record: GameRecord, state: State) -> str | None:
    """Why ``record``'s result/termination contradict the final ``state``, or None."""
    result, termination = record.result, record.termination
    if state.is_terminal:
        if termination != state.end_reason or result != state.result:
            return (
                f"the game ended by the rules ({state.end_reason}, result {state.result}) "
                f"after ply {len(record.actions)}, but the record says result {result}, "
                f"termination {termination}"
            )
        return None
    if termination in RULE_TERMINATIONS:
        return (
            f"the record says termination {termination}, but the game is not over "
            f"after ply {len(record.actions)}"
        )
    allowed = _ALLOWED_RESULTS[termination]
    if result not in allowed:
        return f"result {result} does not fit termination {termination} (expected {allowed})"
    return None


# --- the text format ----------------------------------------------------------


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _unquote(body: str) -> str:
    out = []
    chars = iter(body)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            if nxt not in _ESCAPES:
                raise RecordError(f"unknown escape \\{nxt} in a header value")
            out.append(_ESCAPES[nxt])
        else:
            out.append(ch)
    return "".join(out)


def write_record(record: GameRecord) -> str:
    """The record as text in the format above (replays it to check it)."""
    state = State(rings_to_win=record.rings_to_win)
    sides = []
    for ply, action in enumerate(record.actions, 1):
        sides.append("WB"[state.to_act])
        push_ply(state, ply, action)
    problem = outcome_problem(record, state)
    if problem:
        raise RecordError(problem)
    for key, value in record.tags.items():  # fields may have been set after creation
        _check_tag(key, value)
    lines = [
        f"[Variant {_quote(record.variant)}]",
        f"[White {_quote(record.white)}]",
        f"[Black {_quote(record.black)}]",
        f"[Result {_quote(record.result)}]",
        f"[Termination {_quote(record.termination)}]",
    ]
    lines += [f"[{key} {_quote(value)}]" for key, value in record.tags.items()]
    lines.append("")
    lines += [f"{ply}. {side} {a}" for ply, (side, a) in enumerate(zip(sides, record.actions), 1)]
    return "\n".join(lines) + "\n"


def _line_error(number: int, line: str, problem: object) -> RecordError:
    return RecordError(f"line {number}: {problem}: {line.strip()!r}")


def _strip_comments(line: str) -> str | None:
    """The line without ``{...}`` and ``;...`` comments; None if a brace is open."""
    out = []
    depth_start = -1
    for i, ch in enumerate(line):
        if depth_start >= 0:
            if ch == "}":
                depth_start = -1
                out.append(" ")
            continue
        if ch == ";":
            break
        if ch == "{":
            depth_start = i
            continue
        out.append(ch)
    return None if depth_start >= 0 else "".join(out)


def read_record(text: str) -> GameRecord:
    """Parse and check a record written in the format above.

    Raises :class:`RecordError` naming the line number and the line for a
    malformed header or move line, an unknown or illegal action, a wrong side
    or ply number, or a result that contradicts the replayed game.
    """
    headers: dict[str, tuple[str, int]] = {}
    tags: dict[str, str] = {}
    plies: list[tuple[str, str | None, int]] = []  # (action, side, line number)
    lines = text.removeprefix(BOM).splitlines()
    in_moves = False
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if line.startswith("["):  # a header; its value may hold ';' and '{'
            if in_moves:
                raise _line_error(number, raw, "header line after the moves")
            match = _HEADER_LINE.match(line)
            if not match:
                raise _line_error(number, raw, 'malformed header line (expected [Key "value"])')
            key = match.group(1)
            try:
                value = _unquote(match.group(2))
                reserved = next((k for k in RESERVED_KEYS if k.lower() == key.lower()), None)
                if reserved is None:
                    _check_tag(key, value)
            except RecordError as err:
                raise _line_error(number, raw, err) from None
            name = reserved or key
            if name.lower() in (k.lower() for k in (*headers, *tags)):
                raise _line_error(number, raw, f"duplicate header {key!r}")
            if reserved:
                headers[reserved] = (value, number)
            else:
                tags[key] = value
            continue
        body = _strip_comments(line)
        if body is None:
            raise _line_error(number, raw, "unclosed '{' comment")
        body = body.strip()
        if not body:
            continue
        in_moves = True
        side: str | None = None
        for token in body.split():
            ply = len(plies) + 1
            numbered = _PLY_NUMBER.match(token)
            if numbered:
                if side is not None or int(numbered.group(1)) != ply:
                    raise _line_error(number, raw, f"ply number {token!r} out of place (ply {ply})")
                continue
            if token.upper() in ("W", "B"):
                if side is not None:
                    raise _line_error(number, raw, f"two sides given for ply {ply}")
                side = token.upper()
                continue
            try:
                action = action_to_str(str_to_action(token))
            except NotationError as err:
                raise _line_error(number, raw, f"ply {ply}: {err}") from None
            plies.append((action, side, number))
            side = None
        if side is not None:
            raise _line_error(number, raw, "a side letter without an action")
    return _build(headers, tags, plies, lines)


def _build(
    headers: dict[str, tuple[str, int]],
    tags: dict[str, str],
    plies: list[tuple[str, str | None, int]],
    lines: list[str],
) -> GameRecord:
    """Replay the parsed plies and assemble the checked record."""

    def header_error(key: str, problem: object) -> RecordError:
        number = headers[key][1]
        return _line_error(number, lines[number - 1], problem)

    rings_to_win = DEFAULT_RINGS_TO_WIN
    if "Variant" in headers:
        try:
            rings_to_win = parse_variant(headers["Variant"][0])
        except RecordError as err:
            raise header_error("Variant", err) from None
    state = State(rings_to_win=rings_to_win)
    for ply, (action, side, number) in enumerate(plies, 1):
        if side is not None and side != "WB"[state.to_act]:
            raise _line_error(
                number,
                lines[number - 1],
                f"ply {ply} ({action}) is marked {side} but {'WB'[state.to_act]} is to act",
            )
        try:
            push_ply(state, ply, action)
        except RecordError as err:
            raise _line_error(number, lines[number - 1], err) from None
    for key, allowed in (("Result", RESULTS), ("Termination", TERMINATIONS)):
        if key in headers and headers[key][0] not in allowed:
            raise header_error(key, f"unknown {key.lower()} (expected one of {allowed})")
    result = headers["Result"][0] if "Result" in headers else state.result
    if "Termination" in headers:
        termination = headers["Termination"][0]
    elif state.is_terminal or result == "*":
        termination = state.end_reason or "unfinished"
    else:
        raise header_error(
            "Result", "a result for a game the rules did not end needs [Termination]"
        )
    record = GameRecord(
        rings_to_win=rings_to_win,
        white=headers["White"][0] if "White" in headers else "?",
        black=headers["Black"][0] if "Black" in headers else "?",
        result=result,
        termination=termination,
        actions=[action for action, _, _ in plies],
        tags=tags,
    )
    problem = outcome_problem(record, state)
    if problem:
        # Point at the header that is wrong: the result if the rules decided
        # another one, else the termination.
        if state.is_terminal:
            wrong = "Result" if result != state.result else "Termination"
        else:
            wrong = "Termination" if termination in RULE_TERMINATIONS else "Result"
        for key in (wrong, "Termination", "Result"):
            if key in headers:
                raise header_error(key, problem)
        raise RecordError(problem)
    return record


# --- files --------------------------------------------------------------------


def load_record(path: str | os.PathLike[str]) -> GameRecord:
    """Read a record file: boardspace ``.sgf``, BGA ``.json`` or our format."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise RecordError(f"{path}: not UTF-8 text ({err.reason})") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".sgf":
            from .sgf import read_sgf

            return read_sgf(text)
        if suffix == ".json":
            from .bga import read_bga_json

            return read_bga_json(text)
        return read_record(text)
    except RecordError as err:
        raise RecordError(f"{path}: {err}") from None


def save_record(record: GameRecord, path: str | os.PathLike[str]) -> None:
    """Write a record: boardspace style for ``.sgf``, our format otherwise.

    The text is built (and the game checked) before the file is touched, and
    the file is replaced atomically, so an error leaves an existing file intact.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        raise RecordError(f"{path}: saving BGA .json is not supported; use .sgf or .yinsh")
    if suffix == ".sgf":
        from .sgf import write_sgf

        text = write_sgf(record)
    else:
        text = write_record(record)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
