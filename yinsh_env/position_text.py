"""Position text: the exact one-line form of a position, written and read.

:meth:`State.to_text <yinsh_env.state.State.to_text>` documents the eight
fields; this module formats them and parses them back with every check that a
position the rules can reach a decision in must pass.  It works on any object
with the state's fields (:class:`PositionFields`), so it needs no import of
:mod:`yinsh_env.state` (which imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from .errors import PositionError
from .geometry import COLUMN_LETTERS, POINT_BIT, POINT_INDEX, POINTS
from .rows import has_row
from .vocabulary import RINGS_PER_PLAYER, TOTAL_MARKERS, Phase, Player

__all__ = ["PositionFields", "format_position", "parse_position"]


class PositionFields(Protocol):
    """What a position is made of (the fields of :class:`~yinsh_env.state.State`)."""

    rings: list[int]
    markers: list[int]
    removed: list[int]
    pool: int
    to_act: Player
    phase: Phase
    mover: int
    passes: int
    rings_to_win: int


B = TypeVar("B", bound=PositionFields)

_COLUMN_SIZES = tuple(sum(1 for c, _ in POINTS if c == col) for col in range(11))
_PIECES = {"R": (0, 0), "r": (0, 1), "M": (1, 0), "m": (1, 1)}  # (kind, player)
#: Point indices of each column, from its lowest number up.
_COLUMNS = tuple(tuple(p for p, (c, _n) in enumerate(POINTS) if c == col) for col in range(11))


def format_position(position: PositionFields) -> str:
    """The position's text (see :meth:`State.to_text <yinsh_env.state.State.to_text>`)."""
    boards = ((*position.rings, *position.markers), "RrMm")
    columns = []
    for points in _COLUMNS:
        cells = []
        for p in points:
            bit = POINT_BIT[p]
            cells.append(next((ch for board, ch in zip(*boards) if board & bit), "."))
        columns.append(_compress("".join(cells)))
    board = "/".join(columns)
    mover = "-" if position.mover < 0 else Player(position.mover).letter.lower()
    white, black = position.removed
    return (
        f"{board} {position.to_act.letter.lower()} {position.phase.text} {mover} "
        f"{white}-{black} {position.pool} {position.passes} {position.rings_to_win}"
    )


def _compress(column: str) -> str:
    """A column's cells with each run of empty points (``.``) as its length."""
    out = []
    run = 0
    for ch in column:
        if ch == ".":
            run += 1
            continue
        if run:
            out.append(str(run))
            run = 0
        out.append(ch)
    if run:
        out.append(str(run))
    return "".join(out)


def parse_position(text: str, new: Callable[[int], B]) -> B:
    """The position ``text`` describes, set up on ``new(rings_to_win)``.

    ``new`` makes the empty board (``State``); raises :class:`PositionError`
    naming the problem when the text is malformed or describes a position the
    rules cannot reach a decision in.
    """
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
        state = new(int(rings_to_win))
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
    state.to_act = Player.from_letter(to_act)
    try:
        state.phase = Phase.from_text(phase)
    except ValueError as err:
        raise fail(str(err)) from None
    if mover not in ("w", "b", "-"):
        raise fail(f"mover must be 'w', 'b' or '-', got {mover!r}")
    state.mover = -1 if mover == "-" else Player.from_letter(mover)
    try:
        white_removed, black_removed = (int(x) for x in removed.split("-"))
        state.pool = int(pool)
        state.passes = int(passes)
    except ValueError:
        raise fail("removed must read like 1-0, pool and passes must be integers") from None
    state.removed = [white_removed, black_removed]

    for player in Player:
        on_board = state.rings[player].bit_count()
        if on_board + state.removed[player] > RINGS_PER_PLAYER or state.removed[player] < 0:
            raise fail(f"{player.label} has more than five rings in all")
    markers_on_board = (state.markers[0] | state.markers[1]).bit_count()
    if not 0 <= state.pool <= TOTAL_MARKERS - markers_on_board:
        raise fail(f"pool {state.pool} plus {markers_on_board} markers exceeds {TOTAL_MARKERS}")
    if not 0 <= state.passes <= 2:
        raise fail(f"passes must be 0, 1 or 2, got {state.passes}")
    if state.phase in (Phase.ROW, Phase.RING) and state.mover < 0:
        raise fail(f"phase {phase} needs the mover whose move is being resolved")
    if state.phase in (Phase.PLACE, Phase.MOVE) and state.mover >= 0:
        raise fail(f"phase {phase} has no move being resolved; mover must be '-'")
    if state.phase == Phase.ROW and not has_row(state.markers[state.to_act]):
        raise fail(f"phase row but {state.to_act.label} has no row")
    if state.phase in (Phase.PLACE, Phase.MOVE) and (
        has_row(state.markers[0]) or has_row(state.markers[1])
    ):
        raise fail(f"phase {phase} with a row still standing on the board")
    if state.phase == Phase.PLACE and state.markers[0] | state.markers[1]:
        raise fail("markers on the board during ring placement")
    if state.phase == Phase.PLACE and (
        state.rings[state.to_act].bit_count() + state.removed[state.to_act] >= RINGS_PER_PLAYER
    ):
        raise fail("phase place but the player to act has placed all five rings")
    if state.phase == Phase.MOVE and state.pool == 0:
        raise fail("phase move with an empty pool: the game is over")
    if state.passes == 2 and state.phase != Phase.OVER:
        raise fail("two passes in succession end the game; phase must be over")
    if state.phase == Phase.RING and not state.rings[state.to_act]:
        raise fail("phase ring but the player to act has no ring to remove")
    if state.phase != Phase.OVER and max(state.removed) >= state.rings_to_win:
        raise fail("a player has already removed the winning number of rings; phase must be over")
    return state
