"""Rules corners no other test pins down, each on a hand-made position.

Passes in the middle of a game (after ring moves, in Blitz, a passed player
set free again), and the player who did not move resolving several rows,
runs of six or more and rows sharing a marker that the move made for them.
Positions are built with ``test_rules.position`` (through the text form).
"""

from __future__ import annotations

import pytest
from test_rules import BLOCKED_BLACK_MARKERS, BLOCKED_WHITE_MARKERS, pieces, position

from yinsh_env import PASS_ACTION, Phase, Player, State


def _drop(points: str, remove: str) -> str:
    """``points`` without the names in ``remove``."""
    gone = set(remove.split())
    return " ".join(p for p in points.split() if p not in gone)


# --- passes after the start ---------------------------------------------------------------


def test_double_pass_after_a_ring_move_and_its_row_ends_the_game() -> None:
    """White's only free ring (I8) makes a row, White removes it and that ring: now
    no ring of either side can move, so Black passes, White passes, and it is over."""
    state = position(
        R="A2 B3 I8",
        r="A3",
        M=BLOCKED_WHITE_MARKERS + " I4 I5 I6 I7",
        m=BLOCKED_BLACK_MARKERS,
    )
    assert PASS_ACTION not in state.legal_actions()
    state.apply_all(["I8-J8", "xI4-I8", "xJ8"])
    assert (state.phase, state.to_act, state.removed, state.passes) == (
        Phase.MOVE,
        Player.BLACK,
        [1, 0],
        0,
    )
    assert state.legal_actions() == [PASS_ACTION]
    state.push("pass")
    assert (state.to_act, state.passes, state.is_terminal) == (Player.WHITE, 1, False)
    assert state.legal_actions() == [PASS_ACTION]
    state.push("pass")
    assert (state.phase, state.end_reason, state.result) == (Phase.OVER, "passes", "W")


def _passed_player_can_be_freed(rings_to_win: int) -> State:
    """White (A2, B3) is walled in; Black's ring F2 stands at the end of the run
    B2-E2 that blocks A2's way along row 2, and G2 beyond it is empty."""
    return position(
        R="A2 B3",
        r="A3 F2",
        M=BLOCKED_WHITE_MARKERS,
        m=_drop(BLOCKED_BLACK_MARKERS, "F2 G2"),
        rings_to_win=rings_to_win,
    )


@pytest.mark.parametrize("rings_to_win", [3, 1], ids=["standard", "blitz"])
def test_a_passed_player_is_freed_by_the_opponents_move(rings_to_win: int) -> None:
    state = _passed_player_can_be_freed(rings_to_win)
    assert state.legal_actions() == [PASS_ACTION]
    state.push("pass")
    assert (state.to_act, state.passes, state.phase) == (Player.BLACK, 1, Phase.MOVE)
    assert PASS_ACTION not in state.legal_actions()
    state.push("F2-F4")  # the ring leaves a marker on F2: the run B2-F2 now ends on empty G2
    assert (state.to_act, state.passes) == (Player.WHITE, 0)
    assert state.legal_action_names() == ["A2-G2"]
    state.push("A2-G2")  # jumps B2..F2 and flips them
    assert pieces(state, "A2 B2 C2 D2 E2 F2 G2") == "MMmMmMR"


def test_a_pass_in_blitz_changes_only_the_turn_and_two_end_it() -> None:
    state = position(
        R="A2 B3", r="A3", M=BLOCKED_WHITE_MARKERS, m=BLOCKED_BLACK_MARKERS, rings_to_win=1
    )
    text = state.to_text()
    assert state.legal_actions() == [PASS_ACTION]
    state.push("pass")
    assert state.to_text() == text.replace(" w move - 0-0 17 0 1", " b move - 0-0 17 1 1")
    state.push("pass")
    assert (state.phase, state.end_reason, state.result, state.winner) == (
        Phase.OVER, "passes", "draw", None,
    )  # fmt: skip


# --- the player who did not move resolves several rows ----------------------------------

# White's ring B5 jumps C5 D5 E5 (white) to F5 and flips them black.  Black markers
# fill C1-C4 and D1-D4 (and E1-E4 for three rows): each flip completes a black column.
JUMP = "B5-F5"
BLACK_RINGS = "K10 J11 I11"


def _rows_for_black(columns: str, removed: str = "0-0") -> State:
    black = " ".join(f"{c}{n}" for c in columns for n in range(1, 5))
    return position(R="B5 K7", r=BLACK_RINGS, M="C5 D5 E5", m=black, removed=removed)


def test_the_opponent_removes_two_rows_and_two_rings_then_moves() -> None:
    state = _rows_for_black("CD")
    state.push(JUMP)
    assert (state.phase, state.to_act, state.mover) == (Phase.ROW, Player.BLACK, Player.WHITE)
    assert set(state.legal_action_names()) == {"xC1-C5", "xD1-D5"}
    state.apply_all(["xD1-D5", "xK10"])
    assert (state.phase, state.to_act) == (Phase.ROW, Player.BLACK)  # the second row, still Black's
    assert state.legal_action_names() == ["xC1-C5"]
    state.apply_all(["xC1-C5", "xJ11"])
    assert (state.phase, state.to_act, state.mover, state.removed) == (
        Phase.MOVE,
        Player.BLACK,
        -1,
        [0, 2],
    )
    # Left on the board: White's origin marker B5 and the flipped E5 (no row in E).
    assert pieces(state, "B5 C1 C5 D1 D5 E5") == "M....m" and state.pool == 51 - 2


def test_the_opponent_removes_three_rows_at_once_and_wins_on_the_third_ring() -> None:
    state = _rows_for_black("CDE")
    state.push(JUMP)
    assert set(state.legal_action_names()) == {"xC1-C5", "xD1-D5", "xE1-E5"}
    for row, ring, removed in [("xE1-E5", "xI11", 1), ("xC1-C5", "xK10", 2)]:
        state.apply_all([row, ring])
        assert (state.phase, state.to_act, state.removed) == (Phase.ROW, Player.BLACK, [0, removed])
    state.push("xD1-D5")
    assert (state.phase, state.to_act) == (Phase.RING, Player.BLACK)
    state.push("xJ11")
    assert (state.phase, state.end_reason, state.result) == (Phase.OVER, "rings", "B")


@pytest.mark.parametrize(
    ("column", "choices"),
    [
        ("C1 C2 C3 C4 C6", {"xC1-C5", "xC2-C6"}),
        ("C1 C2 C3 C4 C6 C7", {"xC1-C5", "xC2-C6", "xC3-C7"}),
    ],
    ids=["six", "seven"],
)
def test_the_opponents_run_of_six_or_more_is_a_choice_of_five(
    column: str, choices: set[str]
) -> None:
    """White's jump flips C5, joining Black's markers into a run of six or seven."""
    state = position(R="B5 K7", r=BLACK_RINGS, M="C5", m=column)
    state.push("B5-D5")
    assert (state.phase, state.to_act) == (Phase.ROW, Player.BLACK)
    assert set(state.legal_action_names()) == choices
    state.apply_all(["xC2-C6", "xK10"])
    left = {"C1"} | ({"C7"} if "C7" in column else set())
    assert {p for p in [*column.split(), "C5"] if pieces(state, p) == "m"} == left
    assert (state.phase, state.to_act) == (Phase.MOVE, Player.BLACK)  # no five left: Black moves


def test_the_opponents_rows_sharing_the_flipped_marker_give_one_removal() -> None:
    """The flip of D5 completes Black's column D1-D5 and diagonal B3-F7 at once; after
    one of them is removed the board is rescanned and the other is gone."""
    state = position(R="B5 K7", r=BLACK_RINGS, M="C5 D5", m="D1 D2 D3 D4 B3 C4 E6 F7")
    state.push("B5-E5")
    assert set(state.legal_action_names()) == {"xD1-D5", "xB3-F7"}
    state.apply_all(["xB3-F7", "xK10"])
    assert (state.phase, state.to_act, state.removed) == (Phase.MOVE, Player.BLACK, [0, 1])
    assert pieces(state, "D1 D2 D3 D4 D5") == "mmmm."
