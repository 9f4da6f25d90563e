"""The position as text for terminals: ``str(state)`` and ``yinsh-play``.

A text board laid out like the diagram in the rules (numbers 11..1 from top
to bottom, columns A..K from left to right).  Symbols: ``.`` empty point,
``R``/``r`` White/Black ring, ``M``/``m`` White/Black marker (as in the
position text), ``*`` a highlighted empty point, ``(X)`` a highlighted piece,
``[X]`` a point of the last action.  ``color=True`` keeps the same characters
and adds ANSI colours.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from yinsh_env.engine.actions import (
    MOVE_OFFSET,
    PASS_ACTION,
    RING_OFFSET,
    ROW_OFFSET,
    action_to_str,
)
from yinsh_env.engine.geometry import COLUMN_LETTERS, MOVE_PAIRS, POINT_INDEX, SEGMENTS
from yinsh_env.render.layout import ActionLike, Drawable, PointLike, describe, to_action, to_point

__all__ = ["ansi_board"]


_RESET: Final = "\x1b[0m"
_BG_BOARD: Final = "\x1b[48;5;137m"
_BG_HIGHLIGHT: Final = "\x1b[48;5;71m"
_BG_LAST: Final = "\x1b[48;5;167m"
_BG_ROW: Final = "\x1b[48;5;179m"
_FG: Final = {
    ".": "\x1b[38;5;180m",
    "*": "\x1b[1;38;5;231m",
    "R": "\x1b[1;38;5;231m",
    "M": "\x1b[1;38;5;231m",
    "r": "\x1b[1;38;5;16m",
    "m": "\x1b[1;38;5;16m",
}
_CELL: Final = 3


def _action_points(action: int) -> tuple[int, ...]:
    """The points an action touches (for marking the last action)."""
    if action < MOVE_OFFSET:
        return (action,)
    if action < ROW_OFFSET:
        return MOVE_PAIRS[action - MOVE_OFFSET]
    if action < RING_OFFSET:
        return SEGMENTS[action - ROW_OFFSET]
    if action < PASS_ACTION:
        return (action - RING_OFFSET,)
    return ()


def ansi_board(
    state: Drawable,
    color: bool = True,
    highlight: Iterable[PointLike] = (),
    last_action: ActionLike | None = None,
) -> str:
    """The position as text: 11 rows (11 at the top), a letter row, a status line.

    Columns are aligned as in the rules' diagram.  Symbols: ``.`` empty,
    ``R``/``r`` White/Black ring, ``M``/``m`` White/Black marker, ``*`` a
    highlighted empty point, ``(X)`` a highlighted piece, ``[X]`` a point of
    the last action.  With ``color=False`` the text is plain ASCII; with
    ``color=True`` the same characters carry ANSI colours (256-colour palette).
    """
    marked = {to_point(p) for p in highlight}
    last = to_action(last_action)
    last_points = set(_action_points(last)) if last is not None else set()
    row_points = {p for a in state.pending_rows() for p in SEGMENTS[a - ROW_OFFSET]}
    lines = []
    for n in range(11, 0, -1):
        cells = [f"{n:>2} "]
        for c in range(11):
            p = POINT_INDEX.get((c, n))
            if p is None:
                cells.append(" " * _CELL)
                continue
            piece = state.piece_at(p)
            char = piece or ("*" if p in marked else ".")
            if p in last_points:
                text = f"[{char}]"
            elif p in marked and piece is not None:
                text = f"({char})"
            else:
                text = f" {char} "
            if color:
                if p in last_points:
                    bg = _BG_LAST
                elif p in marked:
                    bg = _BG_HIGHLIGHT
                elif p in row_points:
                    bg = _BG_ROW
                else:
                    bg = _BG_BOARD
                text = f"{bg}{_FG[char]}{text}{_RESET}"
            cells.append(text)
        lines.append("".join(cells).rstrip())
    lines.append("   " + "".join(f" {letter} " for letter in COLUMN_LETTERS).rstrip())
    status = describe(state)
    if last is not None:
        status += f" · last {action_to_str(last)}"
    if row_points:
        status += " · rows " + " ".join(action_to_str(a) for a in state.pending_rows())
    lines.append(status.replace("·", "|"))  # keep the text ASCII apart from colour codes
    return "\n".join(lines)
