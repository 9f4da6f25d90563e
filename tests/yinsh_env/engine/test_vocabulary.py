"""The vocabulary: players, phases, results, terminations, outcomes."""

from __future__ import annotations

import json

import pytest

from yinsh_env import Outcome, Phase, Player, Result, State, Termination


def test_player_names_and_opponent() -> None:
    assert (Player.WHITE, Player.BLACK) == (Player.WHITE, Player.BLACK) == (0, 1)
    assert Player.WHITE.other is Player.BLACK and Player.BLACK.other is Player.WHITE
    assert [p.letter for p in Player] == ["W", "B"]
    assert [p.label for p in Player] == ["White", "Black"]
    assert Player.from_letter("b") is Player.BLACK and Player.from_letter("W") is Player.WHITE
    for bad in ("x", "", "WB", 0):
        with pytest.raises(ValueError, match="player letter"):
            Player.from_letter(bad)  # type: ignore[arg-type]


def test_phase_text_round_trips() -> None:
    assert [p.text for p in Phase] == ["place", "move", "row", "ring", "over"]
    assert all(Phase.from_text(p.text) is p for p in Phase)
    with pytest.raises(ValueError, match="unknown phase 'moving'"):
        Phase.from_text("moving")


def test_results_and_terminations_are_their_notation() -> None:
    assert Result.WHITE_WINS == "W" and f"{Result.DRAW}" == "draw" and str(Result.UNFINISHED) == "*"
    assert json.dumps({"r": Result.BLACK_WINS}) == '{"r": "B"}'
    assert [Result.win_for(w) for w in (Player.WHITE, Player.BLACK, None)] == ["W", "B", "draw"]
    assert [r.winner for r in Result] == [Player.WHITE, Player.BLACK, None, None]
    assert [r.white_value for r in Result] == [1.0, -1.0, 0.0, None]
    assert [t for t in Termination if t.by_rules] == ["rings", "pool", "passes"]
    assert Termination.AGREEMENT.results == (Result.DRAW,)
    assert Result.DRAW not in Termination.RESIGN.results


def test_state_outcome_matches_the_old_strings() -> None:
    state = State.from_text("4/7/8/9/10/9/10/9/8/7/4 b over - 2-1 0 0 3")
    assert state.outcome() == Outcome(Termination.POOL, Player.WHITE)
    assert (state.result, state.end_reason, state.winner) == ("W", "pool", Player.WHITE)
    assert state.returns() == Outcome(Termination.POOL, Player.WHITE).returns() == (1.0, -1.0)
    fresh = State()
    assert fresh.outcome() is None and fresh.result == "*" and fresh.end_reason is None
    assert fresh.to_act is Player.WHITE and fresh.phase is Phase.PLACE


def test_to_act_stays_a_player_through_play() -> None:
    state = State()
    for action in range(10):  # the placements, then White's first move
        state.apply(action)
        assert type(state.to_act) is Player and type(state.phase) is Phase
    assert state.phase is Phase.MOVE and state.to_act is Player.WHITE
    state.apply(state.legal_actions()[0])
    assert state.to_act is Player.BLACK
    state.pop()
    assert type(state.to_act) is Player
