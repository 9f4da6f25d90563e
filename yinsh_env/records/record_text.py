"""The project's own text format for game records (``*.yinsh``), PGN-like.

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
:class:`~yinsh_env.engine.errors.RecordError` naming the line number and the line.
A game that ended by the rules must record that result; a game that did not
(resigned, timed out, forfeited, unfinished) must not claim a rules ending.

The record itself is :class:`~yinsh_env.records.game_record.GameRecord`;
:func:`yinsh_env.records.formats.load_record` picks this format or another by suffix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Final, TypeVar

from yinsh_env.engine.actions import action_to_str, str_to_action
from yinsh_env.engine.errors import NotationError, RecordError, line_error
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import DEFAULT_RINGS_TO_WIN, Player, Result, Termination
from yinsh_env.records.game_record import (
    BOM,
    RESERVED_KEYS,
    GameRecord,
    check_tag,
    outcome_problem,
    parse_variant,
    push_ply,
)

__all__ = ["read_record", "write_record"]

E = TypeVar("E", bound=Enum)

_HEADER_LINE: Final = re.compile(r'\[\s*([^\s\]"]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*(?:;.*)?\Z')
_PLY_NUMBER: Final = re.compile(r"([0-9]+)\.\Z")
_ESCAPES: Final = {"\\": "\\", '"': '"', "n": "\n"}


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


def write_record(record: GameRecord, comments: Mapping[int, str] | None = None) -> str:
    """The record as text in the format above (replays it to check it).

    ``comments`` maps a ply number (1 = the first action) to a note written
    in braces after that ply (a game review's, :mod:`agents.review`); braces
    and line breaks in a note become parentheses and spaces, so reading the
    record back ignores the notes whole.

    >>> from yinsh_env import GameRecord, write_record
    >>> record = GameRecord(white="alice", black="bob", actions=["E5", "F6"])
    >>> print(write_record(record, comments={2: "a quiet reply"}), end="")
    [Variant "standard"]
    [White "alice"]
    [Black "bob"]
    [Result "*"]
    [Termination "unfinished"]
    <BLANKLINE>
    1. W E5
    2. B F6 {a quiet reply}
    """
    state = State(rings_to_win=record.rings_to_win)
    sides = []
    for ply, action in enumerate(record.actions, 1):
        sides.append(state.to_act.letter)
        push_ply(state, ply, action)
    problem = outcome_problem(record, state)
    if problem:
        raise RecordError(problem)
    for key, value in record.tags.items():  # fields may have been set after creation
        check_tag(key, value)
    lines = [
        f"[Variant {_quote(record.variant)}]",
        f"[White {_quote(record.white)}]",
        f"[Black {_quote(record.black)}]",
        f"[Result {_quote(record.result)}]",
        f"[Termination {_quote(record.termination)}]",
    ]
    lines += [f"[{key} {_quote(value)}]" for key, value in record.tags.items()]
    lines.append("")
    notes = comments or {}
    for ply, (side, action) in enumerate(zip(sides, record.actions), 1):
        note = notes.get(ply)
        lines.append(f"{ply}. {side} {action}" + (f" {{{_comment(note)}}}" if note else ""))
    return "\n".join(lines) + "\n"


def _comment(note: str) -> str:
    """``note`` made safe inside ``{...}`` on one line."""
    table = str.maketrans({"{": "(", "}": ")", "\n": " ", "\r": " "})
    return " ".join(note.translate(table).split())


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
    r"""Parse and check a record written in the format above.

    Raises :class:`RecordError` naming the line number and the line for a
    malformed header or move line, an unknown or illegal action, a wrong side
    or ply number, or a result that contradicts the replayed game.

    >>> from yinsh_env import read_record
    >>> record = read_record('[White "alice"]\n1. W E5  2. B F6')
    >>> record.white, record.actions
    ('alice', ['E5', 'F6'])
    >>> read_record("1. W E5  2. B E5")
    Traceback (most recent call last):
    ...
    yinsh_env.engine.errors.RecordError: line 1: ply 2 (E5): illegal action E5 (32): ...
    """
    headers: dict[str, tuple[str, int]] = {}
    tags: dict[str, str] = {}
    plies: list[tuple[str, Player | None, int]] = []  # (action, side, line number)
    lines = text.removeprefix(BOM).splitlines()
    in_moves = False
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if line.startswith("["):  # a header; its value may hold ';' and '{'
            if in_moves:
                raise line_error(number, raw, "header line after the moves")
            match = _HEADER_LINE.match(line)
            if not match:
                raise line_error(number, raw, 'malformed header line (expected [Key "value"])')
            key = match.group(1)
            try:
                value = _unquote(match.group(2))
                reserved = next((k for k in RESERVED_KEYS if k.lower() == key.lower()), None)
                if reserved is None:
                    check_tag(key, value)
            except RecordError as err:
                raise line_error(number, raw, err) from None
            name = reserved or key
            if name.lower() in (k.lower() for k in (*headers, *tags)):
                raise line_error(number, raw, f"duplicate header {key!r}")
            if reserved:
                headers[reserved] = (value, number)
            else:
                tags[key] = value
            continue
        body = _strip_comments(line)
        if body is None:
            raise line_error(number, raw, "unclosed '{' comment")
        body = body.strip()
        if not body:
            continue
        in_moves = True
        side: Player | None = None
        for token in body.split():
            ply = len(plies) + 1
            numbered = _PLY_NUMBER.match(token)
            if numbered:
                if side is not None or int(numbered.group(1)) != ply:
                    raise line_error(number, raw, f"ply number {token!r} out of place (ply {ply})")
                continue
            if token.upper() in ("W", "B"):
                if side is not None:
                    raise line_error(number, raw, f"two sides given for ply {ply}")
                side = Player.from_letter(token)
                continue
            try:
                action = action_to_str(str_to_action(token))
            except NotationError as err:
                raise line_error(number, raw, f"ply {ply}: {err}") from None
            plies.append((action, side, number))
            side = None
        if side is not None:
            raise line_error(number, raw, "a side letter without an action")
    if not (headers or tags or plies):  # an empty file, or comments only
        raise RecordError("no game in it: no header and no moves")
    return _build(headers, tags, plies, lines)


def _header_member(
    headers: dict[str, tuple[str, int]],
    key: str,
    kind: type[E],
    header_error: Callable[[str, object], RecordError],
) -> E | None:
    """The ``key`` header as a member of ``kind``; None if absent; an error naming the line."""
    if key not in headers:
        return None
    try:
        return kind(headers[key][0])
    except ValueError:
        allowed = tuple(str(m.value) for m in kind)
        raise header_error(key, f"unknown {key.lower()} (expected one of {allowed})") from None


def _build(
    headers: dict[str, tuple[str, int]],
    tags: dict[str, str],
    plies: list[tuple[str, Player | None, int]],
    lines: list[str],
) -> GameRecord:
    """Replay the parsed plies and assemble the checked record."""

    def header_error(key: str, problem: object) -> RecordError:
        number = headers[key][1]
        return line_error(number, lines[number - 1], problem)

    rings_to_win = DEFAULT_RINGS_TO_WIN
    if "Variant" in headers:
        try:
            rings_to_win = parse_variant(headers["Variant"][0])
        except RecordError as err:
            raise header_error("Variant", err) from None
    state = State(rings_to_win=rings_to_win)
    for ply, (action, side, number) in enumerate(plies, 1):
        if side is not None and side != state.to_act:
            raise line_error(
                number,
                lines[number - 1],
                f"ply {ply} ({action}) is marked {side.letter} but {state.to_act.letter} is to act",
            )
        try:
            push_ply(state, ply, action)
        except RecordError as err:
            raise line_error(number, lines[number - 1], err) from None
    result = _header_member(headers, "Result", Result, header_error) or state.result
    termination = _header_member(headers, "Termination", Termination, header_error)
    if termination is None:
        if not state.is_terminal and result is not Result.UNFINISHED:
            raise header_error(
                "Result", "a result for a game the rules did not end needs [Termination]"
            )
        termination = state.end_reason or Termination.UNFINISHED
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
            wrong = "Termination" if termination.by_rules else "Result"
        for key in (wrong, "Termination", "Result"):
            if key in headers:
                raise header_error(key, problem)
        raise RecordError(problem)
    return record
