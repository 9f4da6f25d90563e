"""Parsing of the position text form written by :meth:`State.to_text`."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from .errors import PositionError
from .geometry import COLUMN_LETTERS, POINT_BIT, POINT_INDEX, POINTS

if TYPE_CHECKING:
    from .state import State

S = TypeVar("S", bound="State")

_COLUMN_SIZES = tuple(sum(1 for c, _ in POINTS if c == col) for col in range(11))
_PIECES = {"R": (0, 0), "r": (0, 1), "M": (1, 0), "m": (1, 1)}  # (kind, player)


def parse_position(cls: type[S], text: str) -> S:
    from .state import (
        MOVE,
        OVER,
        PHASE_NAMES,
        PLACE,
        RING,
        RINGS_PER_PLAYER,
        ROW,
        TOTAL_MARKERS,
        _has_row,
    )

    if not isinstance(text, str):
        raise PositionError(f"position text must be a string, got {text!r}")
    fields = text.split()
    if len(fields) != 8:
        raise PositionError(
            f"position {text!r} has {len(fields)} fields, expected 8: "
            "board to_act phase mover removed pool passes rings_to_win"
        )
    board, to_act, phase, mover, removed, pool, passes, rings_to_win = fields

    def fail(why: str) -> PositionError:
        return PositionError(f"position {text!r}: {why}")

    try:
        state = cls(rings_to_win=int(rings_to_win))
    except ValueError as exc:
        raise fail(f"bad rings_to_win {rings_to_win!r} ({exc})") from None

    columns = board.split("/")
    if len(columns) != 11:
        raise fail(f"board has {len(columns)} columns, expected 11 (A..K separated by '/')")
    for col, spec in enumerate(columns):
        n = _COLUMN_SIZES[col]
        first = min(num for c, num in POINTS if c == col)
        cells: list[str | None] = []
        digits = ""
        for ch in spec + " ":
            if ch.isdigit():
                digits += ch
                continue
            if digits:
                cells.extend([None] * int(digits))
                digits = ""
            if ch == " ":
                break
            if ch not in _PIECES:
                raise fail(f"column {COLUMN_LETTERS[col]} has unknown piece {ch!r} (use R r M m)")
            cells.append(ch)
        if len(cells) != n:
            raise fail(f"column {COLUMN_LETTERS[col]} describes {len(cells)} points, it has {n}")
        for k, piece in enumerate(cells):
            if piece is None:
                continue
            kind, player = _PIECES[piece]
            bit = POINT_BIT[POINT_INDEX[(col, first + k)]]
            if kind == 0:
                state.rings[player] |= bit
            else:
                state.markers[player] |= bit

    if to_act not in ("w", "b"):
        raise fail(f"player to act must be 'w' or 'b', got {to_act!r}")
    state.to_act = "wb".index(to_act)
    if phase not in PHASE_NAMES:
        raise fail(f"unknown phase {phase!r} (one of {', '.join(PHASE_NAMES)})")
    state.phase = PHASE_NAMES.index(phase)
    if mover not in ("w", "b", "-"):
        raise fail(f"mover must be 'w', 'b' or '-', got {mover!r}")
    state.mover = -1 if mover == "-" else "wb".index(mover)
    try:
        white_removed, black_removed = (int(x) for x in removed.split("-"))
        state.pool = int(pool)
        state.passes = int(passes)
    except ValueError:
        raise fail("removed must read like 1-0, pool and passes must be integers") from None
    state.removed = [white_removed, black_removed]

    for player in (0, 1):
        on_board = state.rings[player].bit_count()
        if on_board + state.removed[player] > RINGS_PER_PLAYER or state.removed[player] < 0:
            raise fail(f"{'White' if player == 0 else 'Black'} has more than five rings in all")
    markers_on_board = (state.markers[0] | state.markers[1]).bit_count()
    if not 0 <= state.pool <= TOTAL_MARKERS - markers_on_board:
        raise fail(f"pool {state.pool} plus {markers_on_board} markers exceeds {TOTAL_MARKERS}")
    if not 0 <= state.passes <= 2:
        raise fail(f"passes must be 0, 1 or 2, got {state.passes}")
    if state.phase in (ROW, RING) and state.mover < 0:
        raise fail(f"phase {phase} needs the mover whose move is being resolved")
    if state.phase in (PLACE, MOVE) and state.mover >= 0:
        raise fail(f"phase {phase} has no move being resolved; mover must be '-'")
    if state.phase == ROW and not _has_row(state.markers[state.to_act]):
        raise fail(f"phase row but {'White' if state.to_act == 0 else 'Black'} has no row")
    if state.phase in (PLACE, MOVE) and (_has_row(state.markers[0]) or _has_row(state.markers[1])):
        raise fail(f"phase {phase} with a row still standing on the board")
    if state.phase == PLACE and state.markers[0] | state.markers[1]:
        raise fail("markers on the board during ring placement")
    if state.phase == PLACE and (
        state.rings[state.to_act].bit_count() + state.removed[state.to_act] >= RINGS_PER_PLAYER
    ):
        raise fail("phase place but the player to act has placed all five rings")
    if state.phase == MOVE and state.pool == 0:
        raise fail("phase move with an empty pool: the game is over")
    if state.passes == 2 and state.phase != OVER:
        raise fail("two passes in succession end the game; phase must be over")
    if state.phase == RING and not state.rings[state.to_act]:
        raise fail("phase ring but the player to act has no ring to remove")
    if state.phase != OVER and max(state.removed) >= state.rings_to_win:
        raise fail("a player has already removed the winning number of rings; phase must be over")
    return state
