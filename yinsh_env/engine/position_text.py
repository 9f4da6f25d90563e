"""Position text: the exact one-line form of a position, written and read.

:meth:`State.to_text <yinsh_env.engine.state.State.to_text>` documents the eight
fields; this module formats them and parses them back with every check that a
position the rules can reach a decision in must pass.  It works on any object
with the state's fields (:class:`PositionFields`), so it needs no import of
:mod:`yinsh_env.engine.state` (which imports it).

What is checked: the syntax (ASCII digits only, every count bounded, the text
at most :data:`MAX_TEXT_LENGTH` characters, so the work is bounded) and every
count and phase rule a game keeps (at most five rings a side, removed rings
below the winning number unless the game is over, pool plus markers at most
51, placement with no markers, removals or passes and alternating ring
counts, a pass only in the move phase and only after a player with no move,
rows and resolution order consistent with the phase, an ended game with a
reason to end).  What is not checked, so that small study positions can be
set up: that all five rings of a side are on the board or removed, and that
the pool holds every marker not on the board; nor whether the markers'
colours and places are reachable by a sequence of moves.  A set-up with
fewer rings on the board than a side still needs to win (``rings_to_win``
minus removed) can reach a ring removal with no ring left, where no action
is legal: give each side at least that many.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, TypeVar

from yinsh_env.engine.errors import PositionError
from yinsh_env.engine.geometry import COLUMN_LETTERS, POINT_BIT, POINT_INDEX, POINTS
from yinsh_env.engine.rows import has_row
from yinsh_env.engine.vocabulary import RINGS_PER_PLAYER, TOTAL_MARKERS, Phase, Player

__all__ = ["PositionFields", "format_position", "parse_position"]


class PositionFields(Protocol):
    """What a position is made of (the fields of :class:`~yinsh_env.engine.state.State`)."""

    rings: list[int]
    markers: list[int]
    removed: list[int]
    pool: int
    to_act: Player
    phase: Phase
    mover: int
    passes: int
    rings_to_win: int

    def ring_moves(self, player: int) -> list[int]: ...


#: The position type the parser builds (``State``, or a stand-in with its fields).
B = TypeVar("B", bound=PositionFields)

_COLUMN_SIZES = tuple(sum(1 for c, _ in POINTS if c == col) for col in range(11))
_PIECES = {"R": (0, 0), "r": (0, 1), "M": (1, 0), "m": (1, 1)}  # (kind, player)
#: The bits of each column's points, from its lowest number up.
_COLUMN_BITS = tuple(
    tuple(POINT_BIT[p] for p, (c, _n) in enumerate(POINTS) if c == col) for col in range(11)
)
#: Longer than any position text (the longest is about 130 characters).
MAX_TEXT_LENGTH = 256
_COUNT = re.compile(r"[0-9]{1,2}")
_REMOVED = re.compile(r"([0-9])-([0-9])")
_COLUMN = re.compile(r"[0-9]+|[RrMm]|.", re.DOTALL)


def format_position(position: PositionFields) -> str:
    """The position's text (see :meth:`State.to_text <yinsh_env.engine.state.State.to_text>`)."""
    white_rings, black_rings = position.rings
    white_markers, black_markers = position.markers
    columns = []
    for bits in _COLUMN_BITS:
        cells = []
        for bit in bits:
            if white_rings & bit:
                cells.append("R")
            elif black_rings & bit:
                cells.append("r")
            elif white_markers & bit:
                cells.append("M")
            elif black_markers & bit:
                cells.append("m")
            else:
                cells.append(".")
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
    board, to_act, phase, mover, removed, pool, passes, rings_to_win = _fields(text)

    def fail(why: str) -> PositionError:
        return PositionError(f"position {text!r}: {why}")

    try:
        state = new(_count(rings_to_win, "rings_to_win", fail))
    except ValueError as exc:
        raise fail(f"bad rings_to_win {rings_to_win!r} ({exc})") from None
    _read_board(state, board, fail)
    _read_turn(state, to_act, phase, mover, fail)
    removed_match = _REMOVED.fullmatch(removed)
    if removed_match is None:
        raise fail(f"rings removed must read like 1-0, got {removed!r}")
    state.removed = [int(removed_match[1]), int(removed_match[2])]
    state.pool = _count(pool, "pool", fail)
    state.passes = _count(passes, "passes", fail)
    _check_counts(state, fail)
    _check_phase(state, phase, fail)
    _check_reachable(state, fail)
    return state


def _fields(text: str) -> list[str]:
    """The eight fields of a position text, its type and length checked first."""
    if not isinstance(text, str):
        raise PositionError(f"position text must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_LENGTH:
        raise PositionError(
            f"position text {text[:40]!r}... is {len(text)} characters, at most {MAX_TEXT_LENGTH}"
        )
    fields = text.split()
    if len(fields) != 8:
        raise PositionError(
            f"position {text!r} has {len(fields)} fields, expected 8: "
            "board to_act phase mover removed pool passes rings_to_win"
        )
    return fields


def _count(value: str, name: str, fail: Callable[[str], PositionError]) -> int:
    if not _COUNT.fullmatch(value):
        raise fail(f"{name} must be a number 0..99 in ASCII digits, got {value!r}")
    return int(value)


def _read_board(state: B, board: str, fail: Callable[[str], PositionError]) -> None:
    """The rings and markers of the board field, column by column, onto ``state``."""
    columns = board.split("/")
    if len(columns) != 11:
        raise fail(f"board has {len(columns)} columns, expected 11 (A..K separated by '/')")
    for col, spec in enumerate(columns):
        first = min(num for c, num in POINTS if c == col)
        for k, piece in enumerate(_read_column(col, spec, fail)):
            if piece is None:
                continue
            kind, player = _PIECES[piece]
            bit = POINT_BIT[POINT_INDEX[(col, first + k)]]
            if kind == 0:
                state.rings[player] |= bit
            else:
                state.markers[player] |= bit


def _read_column(col: int, spec: str, fail: Callable[[str], PositionError]) -> list[str | None]:
    """Column ``col``'s points from its field: a piece letter each, or runs of empties."""
    n = _COLUMN_SIZES[col]
    cells: list[str | None] = []
    for token in _COLUMN.findall(spec):
        if token.isascii() and token.isdigit():
            run = int(token[:3]) if len(token) <= 3 else 1000  # bounded: no huge ints
            if run == 0 or len(cells) + run > n:
                described = "an empty run of 0" if run == 0 else f"{len(cells) + run}"
                raise fail(f"column {COLUMN_LETTERS[col]} describes {described} points, it has {n}")
            cells.extend([None] * run)
        elif token in _PIECES:
            cells.append(token)
        else:
            raise fail(f"column {COLUMN_LETTERS[col]} has unknown piece {token!r} (use R r M m)")
        if len(cells) > n:
            break
    if len(cells) != n:
        raise fail(f"column {COLUMN_LETTERS[col]} describes {len(cells)} points, it has {n}")
    return cells


def _read_turn(
    state: B, to_act: str, phase: str, mover: str, fail: Callable[[str], PositionError]
) -> None:
    """Who is to act, the phase, and whose move is being resolved, onto ``state``."""
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


def _check_counts(state: B, fail: Callable[[str], PositionError]) -> None:
    """Rings, markers and passes within what a game holds."""
    for player in Player:
        on_board = state.rings[player].bit_count()
        if on_board + state.removed[player] > RINGS_PER_PLAYER or state.removed[player] < 0:
            raise fail(f"{player.label} has more than five rings in all")
    markers_on_board = (state.markers[0] | state.markers[1]).bit_count()
    if not 0 <= state.pool <= TOTAL_MARKERS - markers_on_board:
        raise fail(f"pool {state.pool} plus {markers_on_board} markers exceeds {TOTAL_MARKERS}")
    if not 0 <= state.passes <= 2:
        raise fail(f"passes must be 0, 1 or 2, got {state.passes}")


def _check_phase(state: B, phase: str, fail: Callable[[str], PositionError]) -> None:
    """The phase agrees with the board: a mover, rows, placements, the pool, the end."""
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


def _check_reachable(state: B, fail: Callable[[str], PositionError]) -> None:
    """The count and phase rules a game keeps (beyond the field-by-field checks above)."""
    rings = [state.rings[0].bit_count(), state.rings[1].bit_count()]
    for player in Player:
        if state.removed[player] > state.rings_to_win:
            raise fail(
                f"{player.label} has removed {state.removed[player]} rings; "
                f"the game ends at {state.rings_to_win}"
            )
    if min(state.removed) >= state.rings_to_win:
        raise fail("both players have removed the winning number of rings; the mover wins first")
    if state.phase == Phase.PLACE:
        if state.removed != [0, 0] or state.pool != TOTAL_MARKERS or state.passes:
            raise fail("during ring placement no ring is removed, no marker played, no pass made")
        if rings[0] - rings[1] != state.to_act:
            raise fail(
                f"White places first: {rings[0]} white and {rings[1]} black rings "
                f"cannot have {state.to_act.label} to place"
            )
    waiting = Player(1 - state.to_act)
    if state.passes == 1:
        if state.phase != Phase.MOVE:
            raise fail(f"one pass played: the phase must be move, not {state.phase.text}")
        if state.ring_moves(waiting):
            raise fail(f"one pass played, but {waiting.label} has a ring move")
    if (
        state.phase in (Phase.ROW, Phase.RING)
        and state.to_act != state.mover
        and has_row(state.markers[waiting])
    ):
        raise fail(
            f"{state.to_act.label} resolves rows while {waiting.label}, "
            "who moved, still has a row (the mover resolves first)"
        )
    if state.phase == Phase.OVER and not (
        max(state.removed) >= state.rings_to_win or state.pool == 0 or state.passes == 2
    ):
        raise fail("phase over, but no one has won on rings, the pool is not empty, no two passes")
