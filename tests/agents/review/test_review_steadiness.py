"""The value-steadiness figures: what they measure, checked against agents whose lean is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.base import Agent
from agents.review import review_record
from agents.review.steadiness import main, steadiness
from agents.search import Analysis
from yinsh_env import State, load_record

RECORD = "boardspace/Y-DrMih-Dumbot-2026-02-23-1415.sgf"


class LeaningAgent(Agent):
    """Values every position ``lean`` for the player to act, 0 would be even."""

    def __init__(self, lean: float) -> None:
        super().__init__()
        self.lean = lean

    def act(self, state: State) -> int:
        return state.legal_actions()[0]

    def analyse(self, state: State) -> Analysis:
        return Analysis(self.act(state), state.to_act, self.lean)


@pytest.mark.parametrize("lean", [0.0, 0.2])
def test_a_value_leaning_to_the_mover_shows_its_lean(games_dir: Path, lean: float) -> None:
    record = load_record(games_dir / RECORD)
    review = review_record(record, LeaningAgent(lean))
    found = steadiness("lean", [review])
    assert found.games == 1
    assert found.decisions == sum(not d.forced for d in review.decisions)
    assert found.mover_lean == pytest.approx(lean)
    # White's value is +lean or -lean until the final position, which holds the result (+1):
    # it jumps by 2 * lean each time the mover changes, by about 1 on the last decision.
    alternating = [
        d
        for d, n in zip(review.decisions, review.decisions[1:])
        if not d.forced and n.side != d.side
    ]
    expected = (2 * lean * len(alternating) + 1) / found.decisions
    assert found.jitter == pytest.approx(expected, abs=lean / found.decisions + 1e-9)
    if lean == 0:  # every value 0 (error 1 each against the result) but the final one (exact)
        positions = len(review.values())
        assert found.error == pytest.approx((positions - 1) / positions)
    assert found.blunders == 0 or lean > 0


def test_the_cli_prints_a_row_per_agent(
    games_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(games_dir / RECORD), "--agents", "mcts:sims=8", "mcts:sims=16"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == ["`mcts:sims=8`", "`mcts:sims=16`"]


def test_an_agent_without_a_value_is_refused_by_name(
    games_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([str(games_dir / RECORD), "--agents", "greedy"])
    assert exit_.value.code == 2
    assert "greedy" in capsys.readouterr().err
