"""The State API: text form, copy, undo, hashing, masks, results, pickling."""

from __future__ import annotations

import copy
import pickle
import random
import subprocess
import sys
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from helpers import random_game

from yinsh_env import (
    N_ACTIONS,
    PASS_ACTION,
    IllegalActionError,
    Phase,
    Player,
    PositionError,
    State,
    str_to_action,
)

PROJECT_ROOT = Path(__file__).resolve().parents[3]
START = "4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0 3"
# White to move; E5-E7 leaves E5 (white row E1-E5) and flips E6 (black row C6-G6).
ROWS_FOR_BOTH = "r2r/6r/5m2/5m3/MMMMRM4/4m4/4m5/9/8/6R/3R w move - 0-0 42 0 3"
#: Neither side's rings can move (the blocked position of test_rules).
BLOCKED = "RrMM/mmRmMmm/1MMmm3/1mM1mm3/1Mm2mm3/mm3MM2/mM4Mm2/m5mM1/6Mm/6m/4 w move - 0-0 17 0 3"


def states_along(seed: int) -> list[State]:
    """Every position of one random game, as independent copies."""
    rng = random.Random(seed)
    state = State()
    out = [state.copy()]
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))
        out.append(state.copy())
    return out


# --- text form ------------------------------------------------------------------


def test_start_position_text() -> None:
    assert State().to_text() == START
    assert State.from_text(START) == State()


def test_rows_for_both_fixture_is_what_its_comment_says() -> None:
    state = State.from_text(ROWS_FOR_BOTH)
    state.push("E5-E7")
    assert (state.phase, state.to_act, state.legal_action_names()) == (
        Phase.ROW,
        Player.WHITE,
        ["xE1-E5"],
    )
    assert state.rows_of(Player.BLACK) == [str_to_action("xC6-G6")]


@pytest.mark.parametrize("seed", range(4))
def test_text_round_trips_at_every_ply(seed: int) -> None:
    for state in states_along(seed):
        text = state.to_text()
        back = State.from_text(text)
        assert back.to_text() == text
        assert back.key() == state.key()
        assert back.legal_actions() == state.legal_actions()


def test_text_round_trips_in_every_phase() -> None:
    state = State.from_text(ROWS_FOR_BOTH)
    seen = set()
    for action in ["E5-E7", "xE1-E5", "xJ11", "xC6-G6", "xA2"]:
        state.push(action)
        seen.add(state.phase)
        assert State.from_text(state.to_text()) == state
    assert seen == {Phase.ROW, Phase.RING, Phase.MOVE}
    over = random_game(3)
    assert over.phase == Phase.OVER
    assert State.from_text(over.to_text()) == over
    assert State.from_text(random_game(1, stop=3).to_text()).phase == Phase.PLACE


def _replace_field(index: int, value: str, text: str = START) -> str:
    fields = text.split()
    fields[index] = value
    return " ".join(fields)


MALFORMED = [
    ("too-few-fields", "4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0", "7 fields, expected 8"),
    ("too-many-fields", START + " 0", "9 fields, expected 8"),
    ("ten-columns", _replace_field(0, "4/7/8/9/10/9/10/9/8/11"), "10 columns"),
    ("long-column", _replace_field(0, "5/7/8/9/10/9/10/9/8/7/4"), "column A describes 5"),
    ("short-column", _replace_field(0, "4/7/8/9/10/9/10/9/8/7/3"), "column K describes 3"),
    ("unknown-piece", _replace_field(0, "X3/7/8/9/10/9/10/9/8/7/4"), "unknown piece 'X'"),
    ("bad-player", _replace_field(1, "x"), "player to act"),
    ("bad-phase", _replace_field(2, "moving"), "unknown phase 'moving'"),
    ("bad-mover", _replace_field(3, "?"), "mover must be"),
    ("bad-removed", _replace_field(4, "1_0"), "removed must read like"),
    ("bad-pool", _replace_field(5, "many"), "pool"),
    ("pool-too-large", _replace_field(5, "52"), "exceeds 51"),
    ("bad-passes", _replace_field(6, "3"), "passes must be"),
    ("bad-rings-to-win", _replace_field(7, "0"), "rings_to_win"),
    ("too-many-rings", _replace_field(0, "RRRR/RR5/8/9/10/9/10/9/8/7/4"), "more than five"),
    (
        "too-many-rings-with-removed",
        _replace_field(4, "1-0", "RRRR/R6/8/9/10/9/10/9/8/7/4 b move - 0-0 51 0 3"),
        "more than five",
    ),
    ("row-without-row", _replace_field(3, "w", _replace_field(2, "row")), "has no row"),
    ("ring-without-mover", _replace_field(2, "ring", ROWS_FOR_BOTH), "needs the mover"),
    ("move-with-mover", _replace_field(3, "b", ROWS_FOR_BOTH), "mover must be '-'"),
    (
        "row-left-standing",
        "4/7/8/9/MMMMM5/9/10/9/8/7/Rr2 w move - 0-0 46 0 3",
        "row still standing",
    ),
    ("markers-in-placement", "4/7/8/9/M9/9/10/9/8/7/4 w place - 0-0 50 0 3", "placement"),
    (
        "winner-not-over",
        _replace_field(4, "2-0", _replace_field(7, "2", ROWS_FOR_BOTH)),
        "phase must be over",
    ),
    (
        "placement-all-placed",
        "RRRR/Rrrrr2/r7/9/10/9/10/9/8/7/4 w place - 0-0 51 0 3",
        "all five",
    ),
    ("move-with-empty-pool", _replace_field(5, "0", ROWS_FOR_BOTH), "empty pool"),
    ("two-passes-not-over", _replace_field(6, "2", ROWS_FOR_BOTH), "two passes"),
]


@pytest.mark.parametrize(
    ("text", "problem"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_from_text_rejects_malformed_text_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(PositionError) as info:
        State.from_text(text)
    assert isinstance(info.value, ValueError)
    assert problem in str(info.value)
    assert repr(text) in str(info.value)


def test_from_text_rejects_a_non_string() -> None:
    with pytest.raises(PositionError, match="must be a string"):
        State.from_text(42)  # type: ignore[arg-type]


def test_malformed_fixtures_differ_from_a_valid_text_only_where_intended() -> None:
    # Guards the table above: the base texts it edits are valid.
    for text in (START, ROWS_FOR_BOTH):
        assert State.from_text(text).to_text() == text


# --- copy --------------------------------------------------------------------------


def test_copy_is_independent_both_ways() -> None:
    original = random_game(5, stop=20)
    text, key = original.to_text(), original.key()
    clone = original.copy()
    assert clone == original and clone is not original
    assert clone.rings is not original.rings and clone.markers is not original.markers
    assert clone.removed is not original.removed
    clone.apply(clone.legal_actions()[0])
    assert (original.to_text(), original.key()) == (text, key)
    clone_key = clone.key()
    original.apply(original.legal_actions()[-1])
    assert clone.key() == clone_key


def test_copy_history_controls_undo() -> None:
    state = random_game(6, stop=12)
    assert state.copy().actions == []
    with pytest.raises(IndexError):
        state.copy().pop()
    full = state.copy(history=True)
    assert full.actions == state.actions
    full.pop()
    assert len(state.actions) == 12
    assert copy.deepcopy(state).actions == state.actions
    assert copy.copy(state) == state


def test_apply_all_push_accept_notation_in_any_case() -> None:
    a = State().apply_all(["e5", "F6"])
    b = State()
    b.push("E5")
    b.push(b.legal_actions()[b.legal_action_names().index("F6")])
    assert a == b


# --- undo --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_pop_undoes_a_whole_game_exactly(seed: int) -> None:
    rng = random.Random(seed)
    state = State()
    trail = []
    while not state.is_terminal:
        trail.append((state.to_text(), state.key(), state.ply, list(state.legal_actions())))
        action = rng.choice(state.legal_actions())
        state.apply(action)
        assert state.actions[-1] == action
    for text, key, ply, legal in reversed(trail):
        state.pop()
        assert (state.to_text(), state.key(), state.ply, state.legal_actions()) == (
            text,
            key,
            ply,
            legal,
        )
    with pytest.raises(IndexError):
        state.pop()


def test_pop_undoes_through_row_and_ring_phases() -> None:
    state = State.from_text(ROWS_FOR_BOTH)
    trail = []
    actions = ["E5-E7", "xE1-E5", "xJ11", "xC6-G6", "xA2"]
    for action in actions:
        trail.append((state.to_text(), state.key(), state.zobrist()))
        state.push(action)
    assert state.removed == [1, 1]
    popped = []
    for text, key, zobrist in reversed(trail):
        popped.append(state.pop())
        assert (state.to_text(), state.key(), state.zobrist()) == (text, key, zobrist)
    assert popped[::-1] == [str_to_action(a) for a in actions]
    assert state == State.from_text(ROWS_FOR_BOTH)


# --- hashing ------------------------------------------------------------------------


def test_transpositions_hash_equal() -> None:
    a = State().apply_all(["E5", "F6", "A2", "K10", "B1", "J11", "E1", "G11", "A5", "K7"])
    b = State().apply_all(["A2", "K7", "E5", "J11", "A5", "K10", "E1", "G11", "B1", "F6"])
    assert a.actions != b.actions
    assert (a.key(), a.zobrist(), hash(a)) == (b.key(), b.zobrist(), hash(b))
    assert a == b
    a.apply_all(["E5-E6", "K10-K9", "A2-A3", "J11-I11"])
    b.apply_all(["A2-A3", "J11-I11", "E5-E6", "K10-K9"])
    assert a == b and a.zobrist() == b.zobrist()
    assert a.to_text() == b.to_text()


def test_zobrist_differs_for_different_positions() -> None:
    by_hash: dict[int, tuple[int, ...]] = {}
    for seed in range(6):
        for state in states_along(seed):
            other = by_hash.setdefault(state.zobrist(), state.key())
            assert other == state.key(), "zobrist collision between different positions"
    assert len(by_hash) > 300


@pytest.mark.parametrize(
    ("field", "value"),
    [(1, "b"), (4, "1-0"), (4, "0-1"), (5, "40"), (6, "1"), (7, "2")],
    ids=["to-act", "white-removed", "black-removed", "pool", "passes", "rings-to-win"],
)
def test_zobrist_and_key_see_every_field(field: int, value: str) -> None:
    # One pass needs a player who could not move: the passes field on a blocked position.
    base_text = BLOCKED if field == 6 else ROWS_FOR_BOTH
    base = State.from_text(base_text)
    other = State.from_text(_replace_field(field, value, base_text))
    assert other != base
    assert other.key() != base.key()
    assert other.zobrist() != base.zobrist()


def test_zobrist_sees_phase_and_mover() -> None:
    state = State.from_text(ROWS_FOR_BOTH)
    seen = {state.zobrist()}
    for action in ["E5-E7", "xE1-E5", "xJ11", "xC6-G6"]:
        state.push(action)
        seen.add(state.zobrist())
    assert len(seen) == 5


def test_zobrist_is_deterministic_across_processes() -> None:
    state = random_game(7, stop=40)
    code = f"from yinsh_env import State;print(State.from_text({state.to_text()!r}).zobrist())"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PROJECT_ROOT
    ).stdout
    assert int(out) == state.zobrist()
    assert 0 <= state.zobrist() < 2**64


# --- masks, results, pickling, numpy ------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_legal_mask_matches_legal_actions(seed: int) -> None:
    for state in states_along(seed):
        mask = state.legal_mask()
        assert mask.shape == (N_ACTIONS,) and mask.dtype == np.int8
        assert np.flatnonzero(mask).tolist() == state.legal_actions()
        assert set(np.unique(mask).tolist()) <= {0, 1}


@pytest.mark.parametrize("seed", range(3))
def test_play_read_from_masks_agrees_with_play_read_from_lists(seed: int) -> None:
    """The environment's path (a mask, then apply checked against it) accepts and
    refuses exactly what the list path does, placements and passes included."""
    rng = random.Random(seed)
    by_mask, by_list = State(), State()
    while not by_list.is_terminal:
        mask = by_mask.legal_mask()  # by_mask is never asked for its list
        legal = by_list.legal_actions()
        assert np.flatnonzero(mask).tolist() == legal
        mask[:] = 1 - mask  # the caller's copy: changing it changes nothing
        assert by_mask.legal_mask().tolist() == (1 - mask).tolist()
        illegal = next(a for a in range(N_ACTIONS) if a not in legal)
        for bad in (illegal, np.int64(illegal), -1, N_ACTIONS, True, float(legal[0]), "E5"):
            if type(bad) is int:
                assert not by_mask.is_legal(bad)
            with pytest.raises(IllegalActionError):
                by_mask.apply(bad)  # type: ignore[arg-type]
        action = rng.choice(legal)
        assert by_mask.is_legal(action)
        by_mask.apply(np.int64(action) if rng.random() < 0.5 else action)  # type: ignore[arg-type]
        by_list.apply(action)
        assert by_mask == by_list
    assert not by_mask.legal_mask().any()


def test_results_while_playing() -> None:
    state = random_game(8, stop=30)
    assert (state.is_terminal, state.winner, state.result, state.end_reason) == (
        False,
        None,
        "*",
        None,
    )
    assert state.returns() == (0.0, 0.0)


@pytest.mark.parametrize(
    ("removed", "pool", "passes", "winner", "result", "reason", "returns"),
    [
        ("3-1", "30", "0", Player.WHITE, "W", "rings", (1.0, -1.0)),
        ("0-3", "30", "0", Player.BLACK, "B", "rings", (-1.0, 1.0)),
        ("2-1", "0", "0", Player.WHITE, "W", "pool", (1.0, -1.0)),
        ("1-1", "0", "0", None, "draw", "pool", (0.0, 0.0)),
        ("0-1", "20", "2", Player.BLACK, "B", "passes", (-1.0, 1.0)),
        ("2-2", "20", "2", None, "draw", "passes", (0.0, 0.0)),
    ],
)
def test_results_of_finished_games(
    removed: str,
    pool: str,
    passes: str,
    winner: int | None,
    result: str,
    reason: str,
    returns: tuple[float, float],
) -> None:
    text = f"4/7/8/9/4R5/9/10/9/8/7/3r b over w {removed} {pool} {passes} 3"
    state = State.from_text(text)
    assert state.is_terminal and state.legal_actions() == []
    assert (state.winner, state.result, state.end_reason, state.returns()) == (
        winner,
        result,
        reason,
        returns,
    )


def test_finished_random_games_have_consistent_results() -> None:
    for seed in range(5):
        state = random_game(seed)
        assert state.end_reason in ("rings", "pool", "passes")
        assert state.result == {Player.WHITE: "W", Player.BLACK: "B", None: "draw"}[state.winner]
        white, black = state.returns()
        assert white == -black
        if state.end_reason == "rings":
            assert max(state.removed) == state.rings_to_win


def test_pickle_round_trip_keeps_position_ply_and_undo() -> None:
    state = random_game(9, stop=25)
    back = pickle.loads(pickle.dumps(state))
    assert back == state and back.to_text() == state.to_text()
    assert (back.ply, back.actions) == (state.ply, state.actions)
    assert back.legal_actions() == state.legal_actions()
    back.pop()
    state.pop()
    assert back == state


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint16, np.intp])
def test_apply_accepts_numpy_integer_actions(dtype: type[np.integer]) -> None:
    plain = random_game(10, stop=15)
    numpy_state = plain.copy()
    action = plain.legal_actions()[len(plain.legal_actions()) // 2]
    plain.apply(action)
    numpy_state.apply(cast(int, dtype(action)))  # the annotation says int; numpy works too
    assert numpy_state == plain
    assert type(numpy_state.actions[-1]) is int


def test_pass_action_round_trips_through_text_and_undo() -> None:
    # White's only ring is walled in by black rings: pass is forced.
    state = State.from_text("Rr2/1rr4/8/9/10/9/10/9/8/7/4 w move - 0-0 51 0 3")
    assert state.legal_actions() == [PASS_ACTION]
    before = state.key()
    state.push("pass")
    assert (state.passes, state.to_act) == (1, Player.BLACK)
    assert State.from_text(state.to_text()) == state
    state.pop()
    assert state.key() == before
    assert state.phase == Phase.MOVE


@pytest.mark.parametrize(
    "bad", [True, False, 3.0, np.float64(3.0), "A3", None], ids=lambda b: f"{type(b).__name__}"
)
def test_apply_rejects_non_integer_actions_naming_them(bad: object) -> None:
    # True == 1 and 3.0 == 3 are legal placements by value: they must not slip through.
    state = State()
    with pytest.raises(IllegalActionError) as info:
        state.apply(bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value) and "not an action index" in str(info.value)
    assert state == State() and state.actions == []
