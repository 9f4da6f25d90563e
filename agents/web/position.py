"""The position as the page draws it, and positions read from pasted text.

:func:`position_json` is the board part of a game's view (pieces, phase,
pending rows, the result); :func:`last_action_json` what the last decision
did (its points and the markers it flipped); :func:`parse_game_text` reads
what a person pastes or loads (a position text or a record in any format the
project reads).
"""

from __future__ import annotations

from typing import Any

from agents.web.http_errors import ECHO_LIMIT, SessionError, short
from yinsh_env import (
    MOVE_OFFSET,
    RING_OFFSET,
    ROW_OFFSET,
    GameRecord,
    State,
    action_to_str,
    read_bga_json,
    read_record,
    read_sgf,
    str_to_action,
)
from yinsh_env.engine.actions import action_kind
from yinsh_env.engine.geometry import MOVE_PAIRS, POINT_NAMES, SEGMENTS
from yinsh_env.render import describe

SIDES = ("white", "black")


def parse_game_text(text: str) -> tuple[State, list[int], GameRecord | None]:
    """A start position, its actions and the record, from pasted text.

    Accepts a position text (``State.to_text()``), a record in the project's
    format, a boardspace ``.sgf`` or a BGA JSON transcription; raises
    :class:`SessionError` naming the problem.
    """
    text = text.strip()
    if not text:
        raise SessionError("nothing to load: paste a position text or a record")
    try:
        if text.startswith("("):
            record = read_sgf(text)
        elif text.startswith("{"):
            record = read_bga_json(text)
        elif text.startswith("[") or "\n" in text:
            record = read_record(text)
        else:
            return State.from_text(text), [], None
        start = State(rings_to_win=record.rings_to_win)
        actions = [str_to_action(a) for a in record.actions]
    except (ValueError, RecursionError) as exc:  # the parsers' YinshError, or Python's own
        # The parsers quote the text they stumbled on: keep that quote to a bounded slice.
        raise SessionError(f"cannot load it: {short(str(exc), ECHO_LIMIT + 20)}") from None
    return start, actions, record


def flipped_markers(before: State, after: State) -> list[int]:
    """Points whose marker changed colour between two positions."""
    return [
        p
        for player in (0, 1)
        for p in before.marker_points(player)
        if after.piece_at(p) == "Mm"[1 - player]
    ]


def action_points(action: int) -> list[int]:
    """The points an action names: a placement's point, a move's two ends, a row's five."""
    kind = action_kind(action)
    if kind == "place":
        return [action]
    if kind == "move":
        return list(MOVE_PAIRS[action - MOVE_OFFSET])
    if kind == "row":
        return list(SEGMENTS[action - ROW_OFFSET])
    if kind == "ring":
        return [action - RING_OFFSET]
    return []


def _action_point_names(action: int) -> list[str]:
    return [POINT_NAMES[p] for p in action_points(action)]


def position_json(state: State) -> dict[str, Any]:
    rows = state.pending_rows()
    return {
        "text": state.to_text(),
        "to_act": SIDES[state.to_act],
        "phase": state.phase_name,
        "mover": None if state.mover < 0 else SIDES[state.mover],
        "removed": {"white": state.removed[0], "black": state.removed[1]},
        "rings_to_win": state.rings_to_win,
        "pool": state.pool,
        "passes": state.passes,
        "rings": {s: [POINT_NAMES[p] for p in state.ring_points(i)] for i, s in enumerate(SIDES)},
        "markers": {
            s: [POINT_NAMES[p] for p in state.marker_points(i)] for i, s in enumerate(SIDES)
        },
        "rows": [{"action": action_to_str(a), "points": _action_point_names(a)} for a in rows],
        "over": state.is_terminal,
        "result": state.result,
        "winner": None if state.winner is None else SIDES[state.winner],
        "end_reason": state.end_reason,
        "caption": describe(state),
    }


def last_action_json(before: State, action: int, after: State) -> dict[str, Any]:
    """What ``action`` (played from ``before``, reaching ``after``) did, for the page."""
    return {
        "action": action_to_str(action),
        "side": "WB"[before.to_act],
        "kind": action_kind(action),
        "points": _action_point_names(action),
        "flipped": [POINT_NAMES[p] for p in flipped_markers(before, after)],
    }
