"""Board Game Arena games transcribed as JSON.

The file is one object::

    {"source": "BGA table 862307561 (...)",
     "result": "Black wins 3-2",
     "actions": ["F6", "A5", ..., "xF10"]}

``actions`` are already in the project's notation.  ``result`` is
``"<White|Black> wins"``, optionally with the rings removed, winner's first
(``3-2``), or ``"Draw"``; a trailing ``by resignation``/``on time``/``by
forfeit`` gives the termination of a game the rules did not end.  Optional
``white``/``black`` keys name the players, ``rings_to_win`` the variant; any
other string field is kept as a tag.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from yinsh_env.engine.errors import RecordError, line_error
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import DEFAULT_RINGS_TO_WIN, Player, Result, Termination
from yinsh_env.records.game_record import BOM, GameRecord, outcome_problem, push_ply

_RESULT: Final = re.compile(
    r"\s*(?:(?P<side>white|black)\s+wins?(?:\s+(?P<win>[0-9]+)\s*-\s*(?P<lose>[0-9]+))?|(?P<draw>draw)n?)"
    r"(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
_HOW: Final = (
    ("resign", Termination.RESIGN),
    ("time", Termination.TIMEOUT),
    ("forfeit", Termination.FORFEIT),
)
_OWN_KEYS: Final = ("result", "actions", "white", "black", "rings_to_win", "notation")


def _value_line(text: str, key: str, index: int | None = None) -> int:
    """Line of ``key``'s value (or of its ``index``-th string element) in the JSON text."""
    match = re.search(rf'"{re.escape(key)}"\s*:\s*', text)
    if match is None:
        return 1
    pos = match.end()
    if index is not None:
        strings = re.compile(r'"(?:[^"\\]|\\.)*"')
        for i, item in enumerate(strings.finditer(text, pos)):
            if i == index:
                pos = item.start()
                break
    return text.count("\n", 0, pos) + 1


def _error(text: str, line: int, problem: object) -> RecordError:
    lines = text.split("\n")
    return line_error(line, lines[line - 1] if 0 < line <= len(lines) else "", problem)


def read_bga_json(text: str) -> GameRecord:
    """Import a BGA game transcribed as JSON (see the module docstring).

    Raises :class:`RecordError` naming the line number and the line for broken
    JSON, a missing or malformed field, an illegal action, or a result that
    contradicts the replayed game.

    >>> from yinsh_env import read_bga_json
    >>> record = read_bga_json('{"result": "Black wins by resignation", "actions": ["E5", "F6"]}')
    >>> record.result, record.termination
    (<Result.BLACK_WINS: 'B'>, <Termination.RESIGN: 'resign'>)
    """
    text = text.removeprefix(BOM)
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as err:
        raise _error(text, err.lineno, f"broken JSON ({err.msg})") from None
    except RecursionError:
        raise _error(text, 1, "JSON nested too deeply") from None
    except ValueError as err:  # an integer past Python's digit limit
        raise _error(text, 1, f"bad JSON number ({str(err).split(';')[0]})") from None
    if not isinstance(data, dict):
        raise _error(text, 1, "expected a JSON object with 'actions' and 'result'")
    actions = data.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise _error(text, _value_line(text, "actions"), "'actions' must be a list of strings")
    rings_to_win = data.get("rings_to_win", DEFAULT_RINGS_TO_WIN)
    white, black = data.get("white", "?"), data.get("black", "?")
    for key, value in (("white", white), ("black", black)):
        if not isinstance(value, str):
            raise _error(text, _value_line(text, key), f"'{key}' must be a string")
    try:
        state = State(rings_to_win=rings_to_win)
    except ValueError as err:
        raise _error(text, _value_line(text, "rings_to_win"), err) from None
    for ply, action in enumerate(actions, 1):
        try:
            push_ply(state, ply, action)
        except RecordError as err:
            raise _error(text, _value_line(text, "actions", ply - 1), err) from None
    result_text = data.get("result")
    result_line = _value_line(text, "result")
    if not isinstance(result_text, str):
        raise _error(text, result_line, "'result' must be a string such as 'Black wins 3-2'")
    match = _RESULT.fullmatch(result_text)
    if match is None:
        raise _error(text, result_line, "result must read 'White wins', 'Black wins' or 'Draw'")
    winner = None if match.group("draw") else Player.from_letter(match.group("side")[0])
    result = Result.win_for(winner)
    outcome = state.outcome()
    if outcome is not None:
        termination = outcome.termination
    else:
        rest = match.group("rest").lower()
        found = [term for word, term in _HOW if word in rest]
        default = Termination.AGREEMENT if winner is None else Termination.ADJUDICATION
        termination = found[0] if found else default
    if match.group("win") is not None and winner is not None:
        score = (state.removed[winner], state.removed[winner.other])
        if score != (int(match.group("win")), int(match.group("lose"))):
            raise _error(
                text,
                result_line,
                f"the replayed game ends {state.removed[0]}-{state.removed[1]} "
                "(rings removed by White-Black)",
            )
    tags = {k: v for k, v in data.items() if k not in _OWN_KEYS and isinstance(v, str)}
    try:
        record = GameRecord(
            rings_to_win=rings_to_win,
            white=white,
            black=black,
            result=result,
            termination=termination,
            actions=actions,
            tags=tags,
        )
    except RecordError as err:
        raise _error(text, 1, err) from None
    problem = outcome_problem(record, state)
    if problem:
        raise _error(text, result_line, problem)
    return record
