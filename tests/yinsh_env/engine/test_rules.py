"""Every rule of RULES.md (``yinsh-standard-v1``) on small positions set up as text.

Each test builds a position with :func:`position` (which writes the text form
and reads it with :meth:`State.from_text`), then checks the legal actions and
the state after applying actions.  Test names say the rule they check.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers import board_field

from yinsh_env import (
    N_ACTIONS,
    PASS_ACTION,
    IllegalActionError,
    Phase,
    Player,
    State,
    str_to_action,
)
from yinsh_env.engine.geometry import NAME_TO_POINT

# --- helpers -----------------------------------------------------------------


def position(
    *,
    R: str = "",
    r: str = "",
    M: str = "",
    m: str = "",
    to_act: str = "w",
    phase: str = "move",
    mover: str = "-",
    removed: str = "0-0",
    pool: int | None = None,
    passes: int = 0,
    rings_to_win: int = 3,
) -> State:
    """A position from space-separated point lists: ``R``/``r`` white/black
    rings, ``M``/``m`` white/black markers.  ``pool`` defaults to the markers
    not on the board.  Goes through the text form, and checks it reads back."""
    pieces: dict[str, str] = {}
    for char, names in (("R", R), ("r", r), ("M", M), ("m", m)):
        for name in names.split():
            assert name in NAME_TO_POINT and name not in pieces, name
            pieces[name] = char
    board = board_field(pieces)
    if pool is None:
        pool = 51 - len(M.split()) - len(m.split())
    text = f"{board} {to_act} {phase} {mover} {removed} {pool} {passes} {rings_to_win}"
    state = State.from_text(text)
    assert state.to_text() == text
    return state


def destinations(state: State, origin: str) -> set[str]:
    """Destinations of the legal moves of the ring on ``origin``."""
    return {
        name.split("-")[1] for name in state.legal_action_names() if name.startswith(origin + "-")
    }


def pieces(state: State, names: str) -> str:
    """The pieces on the given points, one character each ('.' for empty)."""
    return "".join(state.piece_at(NAME_TO_POINT[name]) or "." for name in names.split())


def ring_removals(names: str) -> set[str]:
    return {f"x{name}" for name in names.split()}


# --- moving a ring -----------------------------------------------------------


def test_ring_slides_over_empty_points_in_six_ways_and_may_stop_on_any() -> None:
    state = position(R="F6", r="A2")
    column = {f"F{n}" for n in range(2, 11)} - {"F6"}
    row = {f"{c}6" for c in "BCDEGHIJ"}
    diagonal = {"B2", "C3", "D4", "E5", "G7", "H8", "I9", "J10"}
    assert destinations(state, "F6") == column | row | diagonal
    assert set(state.legal_action_names()) == {f"F6-{p}" for p in column | row | diagonal}


def test_ring_lands_only_on_the_first_empty_point_after_a_run_of_markers() -> None:
    state = position(R="E3", r="A2", M="E4 E6", m="E5")
    upward = {d for d in destinations(state, "E3") if d[0] == "E" and int(d[1:]) > 3}
    assert upward == {"E7"}


def test_ring_does_not_travel_on_after_a_jump() -> None:
    state = position(R="E2", r="A2", M="E3", m="E5 E6")
    column = {d for d in destinations(state, "E2") if d[0] == "E"}
    assert column == {"E1", "E4"}  # not E7 after the second run, nor E8..E10


def test_ring_may_pass_empty_points_then_jump_one_run() -> None:
    state = position(R="E2", r="A2", M="E5", m="E6")
    column = {d for d in destinations(state, "E2") if d[0] == "E"}
    assert column == {"E1", "E3", "E4", "E7"}


def test_run_followed_by_a_ring_gives_no_destination_beyond() -> None:
    state = position(R="E2", r="E5 A2", M="E3", m="E4")
    column = {d for d in destinations(state, "E2") if d[0] == "E"}
    assert column == {"E1"}


def test_run_followed_by_own_ring_gives_no_destination_beyond() -> None:
    state = position(R="E2 E5", r="A2", M="E3 E4")
    assert {d for d in destinations(state, "E2") if d[0] == "E"} == {"E1"}


def test_run_followed_by_the_edge_gives_no_destination_beyond() -> None:
    state = position(R="E7", r="A2", M="E8 E10", m="E9")
    column = {d for d in destinations(state, "E7") if d[0] == "E"}
    assert column == {f"E{n}" for n in range(1, 7)}


def test_ring_never_passes_over_or_lands_on_a_ring() -> None:
    state = position(R="E2", r="E5 A2")
    column = {d for d in destinations(state, "E2") if d[0] == "E"}
    assert column == {"E1", "E3", "E4"}
    for bad in ("E2-E5", "E2-E6", "E2-E10"):
        with pytest.raises(IllegalActionError):
            state.push(bad)


def test_ring_never_lands_on_a_marker() -> None:
    state = position(R="E2", r="A2", M="E4")
    assert "E4" not in destinations(state, "E2")
    assert {"E3", "E5"} <= destinations(state, "E2")
    with pytest.raises(IllegalActionError):
        state.push("E2-E4")


def test_only_the_rings_of_the_player_to_act_move() -> None:
    state = position(R="E2", r="F6")
    assert {name.split("-")[0] for name in state.legal_action_names()} == {"E2"}
    state = position(R="E2", r="F6", to_act="b")
    assert {name.split("-")[0] for name in state.legal_action_names()} == {"F6"}


def test_origin_marker_is_placed_in_the_movers_colour_and_taken_from_the_pool() -> None:
    state = position(R="E2", r="K10")
    state.push("E2-E4")
    assert pieces(state, "E2 E4") == "MR"
    assert state.pool == 50
    assert (state.to_act, state.phase) == (Player.BLACK, Phase.MOVE)
    state.push("K10-K8")
    assert pieces(state, "K10 K8") == "mr"
    assert state.pool == 49


def test_origin_marker_is_not_flipped_jumped_markers_of_both_colours_flip() -> None:
    state = position(R="E2", r="K10", M="E3 E5 D3", m="E4 F3")
    state.push("E2-E6")
    assert pieces(state, "E2 E3 E4 E5 E6") == "MmMmR"
    assert pieces(state, "D3 F3") == "Mm"  # beside the path: untouched
    assert state.pool == 51 - 5 - 1


def test_black_origin_marker_is_black_and_jumped_markers_flip() -> None:
    state = position(R="K10", r="E2", M="E4", m="E3", to_act="b")
    state.push("E2-E5")
    assert pieces(state, "E2 E3 E4 E5") == "mMmr"


def test_move_that_jumps_nothing_flips_nothing() -> None:
    state = position(R="E2", r="K10", M="E3 F3 D2", m="E4 F2")
    before = {name: pieces(state, name) for name in ("E3", "F3", "D2", "E4", "F2")}
    state.push("E2-D1")  # along the rising diagonal, down: D1 is the neighbour
    after = {name: pieces(state, name) for name in before}
    assert after == before
    assert pieces(state, "E2 D1") == "MR"


# --- rows ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markers", "move", "row"),
    [
        ("E3 E4 E6 E7", "E5-F5", "xE3-E7"),  # along a column
        ("C5 D5 F5 G5", "E5-E6", "xC5-G5"),  # along a row number
        ("C3 D4 F6 G7", "E5-E4", "xC3-G7"),  # along the rising diagonal
    ],
    ids=["column", "row-number", "diagonal"],
)
def test_row_of_five_in_each_direction_costs_one_own_ring(
    markers: str, move: str, row: str
) -> None:
    state = position(R="E5 J11", r="K10 A2", M=markers)
    state.push(move)
    ring_at = move.split("-")[1]
    assert (state.phase, state.to_act, state.mover) == (Phase.ROW, Player.WHITE, Player.WHITE)
    assert state.legal_action_names() == [row]
    state.push(row)
    assert pieces(state, " ".join([*markers.split(), "E5"])) == "....."
    assert state.pool == 51 - 5 + 5
    assert (state.phase, state.to_act) == (Phase.RING, Player.WHITE)
    assert set(state.legal_action_names()) == ring_removals(f"{ring_at} J11")
    state.push(f"x{ring_at}")
    assert state.removed == [1, 0]
    assert (state.phase, state.to_act, state.mover) == (Phase.MOVE, Player.BLACK, -1)
    assert state.ring_points(Player.WHITE) == [NAME_TO_POINT["J11"]]


def test_a_ring_breaks_a_line_of_markers() -> None:
    state = position(R="E2", r="E5 K10", M="E3 E4 E6 E7")
    state.push("E2-D2")
    assert state.rows_of(Player.WHITE) == []
    assert (state.phase, state.to_act) == (Phase.MOVE, Player.BLACK)


@pytest.mark.parametrize(("choice", "left"), [("xE2-E6", "E7"), ("xE3-E7", "E2")])
def test_row_of_six_owner_picks_which_five_and_the_sixth_stays(choice: str, left: str) -> None:
    state = position(R="E5 J11", r="K10", M="E2 E3 E4 E6 E7")
    state.push("E5-F5")
    assert state.legal_action_names() == ["xE2-E6", "xE3-E7"]
    state.push(choice)
    remaining = [p for p in [f"E{n}" for n in range(2, 8)] if pieces(state, p) == "M"]
    assert remaining == [left]
    assert state.phase == Phase.RING


@pytest.mark.parametrize(
    ("choice", "left"), [("xE1-E5", "E6 E7"), ("xE2-E6", "E1 E7"), ("xE3-E7", "E1 E2")]
)
def test_row_of_seven_owner_picks_which_five_and_the_rest_stay(choice: str, left: str) -> None:
    state = position(R="E4 J11", r="K10", M="E1 E2 E3 E5 E6 E7")
    state.push("E4-F4")
    assert state.legal_action_names() == ["xE1-E5", "xE2-E6", "xE3-E7"]
    state.push(choice)
    remaining = [p for p in [f"E{n}" for n in range(1, 8)] if pieces(state, p) == "M"]
    assert remaining == left.split()
    state.push("xJ11")
    assert state.rows_of(Player.WHITE) == []
    assert (state.phase, state.to_act) == (Phase.MOVE, Player.BLACK)


def _two_disjoint_rows(removed: str = "0-0") -> State:
    """White's E5-E8 flips E6 and E7: white rows on numbers 6 and 7."""
    return position(
        R="E5 A2 B1",
        r="K10",
        M="C6 D6 F6 G6 C7 D7 F7 G7",
        m="E6 E7",
        removed=removed,
    )


@pytest.mark.parametrize("first", ["xC6-G6", "xC7-G7"])
def test_two_disjoint_rows_both_resolved_owner_chooses_order_one_ring_each(first: str) -> None:
    state = _two_disjoint_rows()
    state.push("E5-E8")
    assert state.legal_action_names() == ["xC6-G6", "xC7-G7"]
    state.push(first)
    state.push("xA2")
    assert state.phase == Phase.ROW and state.to_act == Player.WHITE
    assert state.legal_action_names() == sorted({"xC6-G6", "xC7-G7"} - {first})
    state.apply(state.legal_actions()[0])
    assert state.phase == Phase.RING
    assert set(state.legal_action_names()) == ring_removals("E8 B1")
    state.push("xB1")
    assert state.removed == [2, 0]
    assert (state.phase, state.to_act) == (Phase.MOVE, Player.BLACK)
    assert state.marker_points(Player.WHITE) == [NAME_TO_POINT[p] for p in ("E5",)]


@pytest.mark.parametrize(("first", "gone"), [("xE3-E7", "xC5-G5"), ("xC5-G5", "xE3-E7")])
def test_two_rows_sharing_a_marker_only_one_can_be_removed_board_is_rescanned(
    first: str, gone: str
) -> None:
    state = position(R="E5 A2", r="K10", M="E3 E4 E6 E7 C5 D5 F5 G5")
    state.push("E5-F6")
    assert state.legal_action_names() == sorted([first, gone])
    state.push(first)
    assert state.phase == Phase.RING
    state.push("xA2")
    assert state.rows_of(Player.WHITE) == []
    assert (state.phase, state.to_act, state.removed) == (Phase.MOVE, Player.BLACK, [1, 0])
    assert len(state.marker_points(Player.WHITE)) == 4  # the other row's four markers stay


def _row_for_black_only(removed: str = "0-0", pool: int | None = None) -> State:
    """White's E2-E4 flips E3 to black and completes Black's C3-G3."""
    return position(R="E2 J11", r="K10 A5 B7", M="E3", m="C3 D3 F3 G3", removed=removed, pool=pool)


def test_row_made_for_the_opponent_only_opponent_resolves_then_moves() -> None:
    state = _row_for_black_only()
    state.push("E2-E4")
    assert (state.phase, state.to_act, state.mover) == (Phase.ROW, Player.BLACK, Player.WHITE)
    assert state.legal_action_names() == ["xC3-G3"]
    state.push("xC3-G3")
    assert (state.phase, state.to_act) == (Phase.RING, Player.BLACK)
    assert set(state.legal_action_names()) == ring_removals("K10 A5 B7")
    state.push("xA5")
    assert state.removed == [0, 1]
    assert (state.phase, state.to_act, state.mover) == (Phase.MOVE, Player.BLACK, -1)
    assert pieces(state, "E2") == "M"


def _rows_for_both(removed: str = "0-0", rings_to_win: int = 3) -> State:
    """White's E5-E7 leaves E5 (white row E1-E5) and flips E6 (black row C6-G6)."""
    return position(
        R="E5 J11 K10",
        r="A2 B7 A5",
        M="E1 E2 E3 E4 E6",
        m="C6 D6 F6 G6",
        removed=removed,
        rings_to_win=rings_to_win,
    )


def test_rows_for_both_mover_resolves_first_then_opponent_then_opponent_moves() -> None:
    state = _rows_for_both()
    state.push("E5-E7")
    assert (state.phase, state.to_act, state.mover) == (Phase.ROW, Player.WHITE, Player.WHITE)
    assert state.legal_action_names() == ["xE1-E5"]
    state.push("xE1-E5")
    assert set(state.legal_action_names()) == ring_removals("E7 J11 K10")
    state.push("xJ11")
    assert (state.phase, state.to_act, state.mover) == (Phase.ROW, Player.BLACK, Player.WHITE)
    assert state.legal_action_names() == ["xC6-G6"]
    state.push("xC6-G6")
    assert set(state.legal_action_names()) == ring_removals("A2 B7 A5")
    state.push("xB7")
    assert state.removed == [1, 1]
    assert (state.phase, state.to_act, state.mover) == (Phase.MOVE, Player.BLACK, -1)


def test_in_the_ring_phase_only_own_rings_may_be_removed() -> None:
    state = _rows_for_both()
    state.apply_all(["E5-E7", "xE1-E5"])
    for other in ("xA2", "xB7", "xA5", "xE5", "pass", "J11-J10", "xC6-G6"):
        with pytest.raises(IllegalActionError):
            state.push(other)
    state.push("xK10")
    assert state.removed == [1, 0]
    assert state.to_act == Player.BLACK


def test_movers_third_ring_wins_first_even_if_the_opponent_would_reach_three() -> None:
    state = _rows_for_both(removed="2-2")
    state.apply_all(["E5-E7", "xE1-E5", "xK10"])
    assert state.phase == Phase.OVER
    assert (state.winner, state.result, state.end_reason) == (Player.WHITE, "W", "rings")
    assert state.removed == [3, 2]
    assert state.rows_of(Player.BLACK) == [str_to_action("xC6-G6")]  # never resolved
    assert state.legal_actions() == []


def test_opponent_wins_at_once_when_resolving_the_movers_move() -> None:
    state = _row_for_black_only(removed="0-2")
    state.apply_all(["E2-E4", "xC3-G3", "xK10"])
    assert (state.phase, state.winner, state.end_reason) == (Phase.OVER, Player.BLACK, "rings")
    assert state.returns() == (-1.0, 1.0)


def test_several_rings_removed_in_one_turn_third_ring_wins_at_once() -> None:
    """E5-E9 flips E6, E7, E8 to white: three white rows in one move."""
    state = position(
        R="E5 A2 B1 A5",
        r="K10",
        M="C6 D6 F6 G6 C7 D7 F7 G7 C8 D8 F8 G8",
        m="E6 E7 E8",
    )
    state.push("E5-E9")
    assert state.legal_action_names() == ["xC6-G6", "xC7-G7", "xC8-G8"]
    state.apply_all(["xC7-G7", "xA2"])
    assert state.legal_action_names() == ["xC6-G6", "xC8-G8"]
    state.apply_all(["xC6-G6", "xB1"])
    assert (state.phase, state.to_act, state.removed) == (Phase.ROW, Player.WHITE, [2, 0])
    state.apply_all(["xC8-G8", "xA5"])
    assert (state.phase, state.winner, state.end_reason) == (Phase.OVER, Player.WHITE, "rings")
    assert state.removed == [3, 0]
    assert state.ring_points(Player.WHITE) == [NAME_TO_POINT["E9"]]


def test_third_ring_wins_immediately() -> None:
    state = position(R="E5 J11", r="K10", M="E3 E4 E6 E7", removed="2-1")
    state.apply_all(["E5-F5", "xE3-E7"])
    assert state.phase == Phase.RING
    state.push("xJ11")
    assert (state.phase, state.result, state.end_reason) == (Phase.OVER, "W", "rings")
    assert state.returns() == (1.0, -1.0)
    assert state.legal_actions() == []


# --- end of the game -------------------------------------------------------------


def test_last_marker_taken_with_a_row_game_goes_on_as_markers_return() -> None:
    state = position(R="E5 J11", r="K10", M="E3 E4 E6 E7", pool=1)
    state.push("E5-F5")
    assert (state.pool, state.phase) == (0, Phase.ROW)
    state.apply_all(["xE3-E7", "xJ11"])
    assert state.pool == 5
    assert (state.phase, state.to_act, state.is_terminal) == (Phase.MOVE, Player.BLACK, False)


def test_last_marker_taken_with_a_row_for_the_opponent_game_goes_on() -> None:
    state = _row_for_black_only(pool=1)
    state.push("E2-E4")
    assert (state.pool, state.phase, state.to_act) == (0, Phase.ROW, Player.BLACK)
    state.apply_all(["xC3-G3", "xK10"])
    assert (state.pool, state.phase, state.to_act) == (5, Phase.MOVE, Player.BLACK)


@pytest.mark.parametrize(
    ("removed", "result", "returns"),
    [("1-0", "W", (1.0, -1.0)), ("0-2", "B", (-1.0, 1.0)), ("1-1", "draw", (0.0, 0.0))],
)
def test_last_marker_taken_without_a_row_ends_the_game_more_rings_wins(
    removed: str, result: str, returns: tuple[float, float]
) -> None:
    state = position(R="E5", r="K10", M="C3 C4", m="D3", removed=removed, pool=1)
    state.push("E5-E7")
    assert state.pool == 0
    assert (state.phase, state.result, state.end_reason) == (Phase.OVER, result, "pool")
    assert state.returns() == returns
    assert state.winner == {"W": Player.WHITE, "B": Player.BLACK, "draw": None}[result]
    assert state.legal_actions() == []


def test_empty_pool_with_equal_rings_is_a_draw() -> None:
    state = position(R="E5", r="K10", removed="0-0", pool=1)
    state.push("E5-F5")
    assert (state.result, state.winner, state.end_reason) == ("draw", None, "pool")


# --- passing ------------------------------------------------------------------------

# White rings A2 and B3, black ring A3: every ray of the three rings ends on a
# ring or runs over markers to the edge (two colours, no row of five).
BLOCKED_WHITE_MARKERS = "A4 A5 B5 C2 C3 D3 E2 F7 F8 G3 G8 H10 I10"
BLOCKED_BLACK_MARKERS = "B1 B2 B4 B6 B7 C4 C5 D2 D5 D6 E3 E6 E7 F2 F3 G2 G9 H3 H9 I11 J11"


def _blocked(black_free_ring: str = "", removed: str = "0-0") -> State:
    return position(
        R="A2 B3",
        r=f"A3 {black_free_ring}",
        M=BLOCKED_WHITE_MARKERS,
        m=BLOCKED_BLACK_MARKERS,
        removed=removed,
    )


def test_pass_is_the_only_legal_action_when_no_ring_can_move() -> None:
    state = _blocked("K10")
    assert state.legal_actions() == [PASS_ACTION]
    text = state.to_text()
    state.push("pass")
    assert state.to_text() == text.replace(" w move - 0-0 17 0 ", " b move - 0-0 17 1 ")
    assert (state.to_act, state.phase, state.passes, state.pool) == (
        Player.BLACK,
        Phase.MOVE,
        1,
        17,
    )


def test_pass_is_not_allowed_when_a_move_exists() -> None:
    state = _blocked("K10")
    state.push("pass")
    assert PASS_ACTION not in state.legal_actions()
    assert state.legal_actions()
    with pytest.raises(IllegalActionError, match="pass"):
        state.push("pass")


def test_pass_followed_by_a_move_resets_the_pass_count() -> None:
    state = _blocked("K10")
    state.apply_all(["pass", "K10-K9"])
    assert (state.passes, state.to_act, state.phase) == (0, Player.WHITE, Phase.MOVE)
    state.push("pass")
    assert (state.passes, state.phase, state.to_act) == (1, Phase.MOVE, Player.BLACK)
    assert not state.is_terminal


@pytest.mark.parametrize(("removed", "result"), [("0-0", "draw"), ("1-0", "W"), ("1-2", "B")])
def test_two_passes_in_succession_end_the_game_scored_as_for_an_empty_pool(
    removed: str, result: str
) -> None:
    state = _blocked(removed=removed)
    state.push("pass")
    assert not state.is_terminal
    state.push("pass")
    assert (state.phase, state.result, state.end_reason) == (Phase.OVER, result, "passes")
    assert state.legal_actions() == []


# --- Blitz ----------------------------------------------------------------------------


def test_blitz_first_row_and_its_ring_win() -> None:
    state = position(R="E5 J11", r="K10", M="E3 E4 E6 E7", rings_to_win=1)
    state.apply_all(["E5-F5", "xE3-E7"])
    assert state.phase == Phase.RING
    state.push("xJ11")
    assert (state.phase, state.winner, state.end_reason, state.removed) == (
        Phase.OVER,
        Player.WHITE,
        "rings",
        [1, 0],
    )


def test_blitz_rows_for_both_mover_wins_first() -> None:
    state = _rows_for_both(rings_to_win=1)
    state.apply_all(["E5-E7", "xE1-E5", "xK10"])
    assert (state.phase, state.winner) == (Phase.OVER, Player.WHITE)


def test_blitz_is_a_game_parameter() -> None:
    assert State(rings_to_win=1).to_text().endswith(" 1")
    assert State().rings_to_win == 3
    for bad in (0, 6, True, "3"):
        with pytest.raises(ValueError):
            State(rings_to_win=bad)  # type: ignore[arg-type]


# --- placement --------------------------------------------------------------------------


def test_placement_white_first_alternate_black_places_tenth_white_moves_first() -> None:
    state = State()
    assert (state.phase, state.to_act) == (Phase.PLACE, Player.WHITE)
    assert len(state.legal_actions()) == 85
    points = ["E5", "F6", "A2", "K10", "B1", "J11", "E1", "G11", "A5", "K7"]
    for i, point in enumerate(points):
        assert (state.phase, state.to_act) == (Phase.PLACE, i % 2)
        assert len(state.legal_actions()) == 85 - i
        state.push(point)
        assert state.piece_at(NAME_TO_POINT[point]) == "Rr"[i % 2]
    assert (state.phase, state.to_act, state.mover) == (Phase.MOVE, Player.WHITE, -1)
    assert state.ring_points(Player.WHITE) == sorted(NAME_TO_POINT[p] for p in points[0::2])
    assert state.ring_points(Player.BLACK) == sorted(NAME_TO_POINT[p] for p in points[1::2])
    assert (state.pool, state.marker_points(Player.WHITE), state.marker_points(Player.BLACK)) == (
        51,
        [],
        [],
    )
    assert all(name.count("-") == 1 for name in state.legal_action_names())


def test_placement_edge_points_allowed_occupied_points_not() -> None:
    state = State().apply_all(["A2", "B1"])
    assert "E5" in state.legal_action_names()
    assert "A2" not in state.legal_action_names() and "B1" not in state.legal_action_names()
    with pytest.raises(IllegalActionError):
        state.push("A2")
    with pytest.raises(IllegalActionError):
        state.push("B1")


# --- illegal actions --------------------------------------------------------------------------


ILLEGAL_CASES: list[tuple[str, Callable[[], State], str]] = [
    ("place-occupied", lambda: State().apply_all(["E5"]), "E5"),
    ("move-in-placement", lambda: State().apply_all(["E5"]), "E5-E6"),
    ("place-in-move-phase", lambda: position(R="E5", r="K10"), "F6"),
    ("move-opponents-ring", lambda: position(R="E5", r="K10"), "K10-K9"),
    ("move-through-ring", lambda: position(R="E5", r="E7"), "E5-E8"),
    ("row-without-row", lambda: position(R="E5", r="K10"), "xE1-E5"),
    ("ring-removal-in-move-phase", lambda: position(R="E5", r="K10"), "xE5"),
    ("pass-with-a-move", lambda: position(R="E5", r="K10"), "pass"),
    ("opponent-row", lambda: _rows_for_both().apply_all(["E5-E7"]), "xC6-G6"),
    ("move-in-row-phase", lambda: _rows_for_both().apply_all(["E5-E7"]), "E7-E8"),
    ("after-game-over", lambda: _blocked().apply_all(["pass", "pass"]), "pass"),
]


@pytest.mark.parametrize(
    ("make", "action"), [case[1:] for case in ILLEGAL_CASES], ids=[c[0] for c in ILLEGAL_CASES]
)
def test_illegal_action_raises_naming_action_and_position_state_unchanged(
    make: Callable[[], State], action: str
) -> None:
    state = make()
    text, key, legal = state.to_text(), state.key(), list(state.legal_actions())
    with pytest.raises(IllegalActionError) as info:
        state.push(action)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert action in message and text in message
    assert (state.to_text(), state.key(), state.legal_actions()) == (text, key, legal)


@pytest.mark.parametrize("index", [-1, N_ACTIONS, 10**6])
def test_out_of_range_action_index_raises_and_state_unchanged(index: int) -> None:
    state = State()
    with pytest.raises(IllegalActionError, match=str(index)):
        state.apply(index)
    assert state.key() == State().key()
