"""Tests of the Bradley-Terry Elo fit and the score intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.evaluation.elo import (
    ELO_PER_NATURAL_UNIT,
    PairResult,
    Tally,
    elo_bound,
    elo_ratings,
    expected_score,
    fit_bradley_terry,
    wilson_interval,
)

TRUE_ELO = [0.0, 120.0, -80.0, 300.0]


def synthetic_results(games: float = 200.0) -> list[PairResult]:
    """Every pairing scoring exactly its expected score under TRUE_ELO."""
    return [
        PairResult(i, j, games * expected_score(TRUE_ELO[i], TRUE_ELO[j]), games)
        for i in range(len(TRUE_ELO))
        for j in range(i + 1, len(TRUE_ELO))
    ]


def test_fit_recovers_known_ratings() -> None:
    elo, stderr = fit_bradley_terry(len(TRUE_ELO), synthetic_results(), prior=0.0)
    np.testing.assert_allclose(elo, TRUE_ELO, atol=1e-6)
    assert stderr[0] == 0.0 and np.all(stderr[1:] > 0)


def test_anchor_shifts_the_scale() -> None:
    elo, _ = fit_bradley_terry(
        len(TRUE_ELO), synthetic_results(), anchor=3, anchor_elo=1500.0, prior=0.0
    )
    np.testing.assert_allclose(elo, [e - 300.0 + 1500.0 for e in TRUE_ELO], atol=1e-6)


def test_two_player_interval_matches_the_binomial_formula() -> None:
    # One pairing: the Fisher information of theta is n p (1 - p).
    n, p = 400, 0.64
    ratings = elo_ratings(["a", "b"], [PairResult(0, 1, n * p, n)], prior=0.0)
    expected_elo = -ELO_PER_NATURAL_UNIT * math.log(p / (1 - p))
    half_width = 1.959963984540054 * ELO_PER_NATURAL_UNIT / math.sqrt(n * p * (1 - p))
    b = ratings[1]
    assert b.elo == pytest.approx(expected_elo, abs=1e-6)
    assert b.ci95[0] == pytest.approx(expected_elo - half_width, abs=1e-6)
    assert b.ci95[1] == pytest.approx(expected_elo + half_width, abs=1e-6)
    assert ratings[0].ci95 == (0.0, 0.0)
    assert b.games == n


def test_more_games_narrow_the_interval() -> None:
    few = fit_bradley_terry(len(TRUE_ELO), synthetic_results(50), prior=0.0)[1]
    many = fit_bradley_terry(len(TRUE_ELO), synthetic_results(800), prior=0.0)[1]
    np.testing.assert_allclose(many[1:] * 4, few[1:], rtol=1e-6)


def test_perfect_score_needs_the_prior() -> None:
    with pytest.raises(ValueError, match="prior"):
        fit_bradley_terry(2, [PairResult(0, 1, 10, 10)], prior=0.0)
    elo, stderr = fit_bradley_terry(2, [PairResult(0, 1, 10, 10)], prior=1.0)
    # 10.5 of 11 points: finite and on the right side.
    assert elo[1] == pytest.approx(-ELO_PER_NATURAL_UNIT * math.log(10.5 / 0.5), abs=1e-6)
    assert stderr[1] > 0


def test_disconnected_agents_and_bad_results_are_rejected() -> None:
    with pytest.raises(ValueError, match="not connected"):
        fit_bradley_terry(3, [PairResult(0, 1, 5, 10)])
    with pytest.raises(ValueError):
        fit_bradley_terry(2, [PairResult(0, 1, 11, 10)])
    with pytest.raises(ValueError):
        fit_bradley_terry(2, [PairResult(0, 0, 5, 10)])


def test_draws_count_as_half_wins() -> None:
    all_draws = elo_ratings(["a", "b"], [PairResult(0, 1, 5.0, 10)], prior=0.0)
    assert all_draws[1].elo == pytest.approx(0.0, abs=1e-9)


def test_wilson_interval() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(100, 100)
    assert hi == 1.0 and lo == pytest.approx(0.9630, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_tally_counts_each_game_by_its_points() -> None:
    tally = Tally()
    assert (tally.score, tally.score_ci95) == (0.0, (0.0, 1.0))
    for points in (1.0, 0.5, 0.0, 1.0, 0.75):  # above a half wins, as a reward of +0.5 would
        tally.add(points)
    assert (tally.games, tally.wins, tally.draws, tally.losses) == (5, 3, 1, 1)
    assert tally.wdl == "3-1-1" and tally.points == 3.5 and tally.score == 0.7
    assert tally.score_ci95 == wilson_interval(3.5, 5)


@pytest.mark.parametrize("games", [1, 20, 100])
def test_no_point_gives_the_elo_where_that_happens_one_time_in_twenty(games: int) -> None:
    side, below = elo_bound(0, [(980.0, games)])  # type: ignore[misc]
    assert side == "<" and (below < 980.0) == (games > 4)  # one loss says little
    assert (1 - expected_score(below, 980.0)) ** games == pytest.approx(0.05)
    side, above = elo_bound(games, [(980.0, games)])  # type: ignore[misc]
    assert side == ">" and above - 980.0 == pytest.approx(980.0 - below)


def test_a_bound_against_several_opponents_meets_their_expected_score() -> None:
    side, below = elo_bound(0.0, [(0.0, 30), (400.0, 10)])  # type: ignore[misc]
    mean = (30 * expected_score(below, 0.0) + 10 * expected_score(below, 400.0)) / 40
    assert side == "<" and mean == pytest.approx(1 - 0.05 ** (1 / 40))
    assert elo_bound(0.5, [(0.0, 30)]) is None and elo_bound(29.5, [(0.0, 30)]) is None
    assert elo_bound(0.0, []) is None


def test_ratings_bound_an_agent_with_no_point_and_no_other() -> None:
    results = [PairResult(0, 1, 100, 100), PairResult(0, 2, 60, 100), PairResult(1, 2, 0, 100)]
    anchor, loser, middle = elo_ratings(["a", "b", "c"], results)
    assert anchor.bound is None and middle.bound is None  # the anchor is fixed
    assert loser.bound is not None and loser.bound[0] == "<" and loser.bound[1] > loser.elo
    assert loser.to_json()["bound"] == ["<", round(loser.bound[1], 1)]
