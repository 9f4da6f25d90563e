"""The sequential test: its likelihoods, its error rates on simulated matches, real matches.

The simulations play thousands of synthetic matches at a known Elo, all at
once (numpy over the matches), from fixed seeds, so the rates are the same
on every run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from agents.evaluation.arena import MatchSettings, _decision_text, run_arena
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.sprt import (
    PAIR_SCORES,
    Sprt,
    SprtSettings,
    _constrained_mle,
    llr,
    logistic_score,
    pentanomial_probabilities,
)


def simulate(
    elo: float, settings: SprtSettings, matches: int, seed: int, draw: float = 0.05
) -> np.ndarray:
    """Decisions (+1 H1, -1 H0, 0 none) of ``matches`` SPRTs of pairs drawn at ``elo``."""
    rng = np.random.default_rng(seed)
    probs = pentanomial_probabilities(elo, draw)
    counts = np.zeros((matches, 5))
    decision = np.zeros(matches, dtype=int)
    active = np.arange(matches)
    for _ in range(5000):
        cells = rng.choice(5, size=len(active), p=probs)
        counts[active, cells] += 1
        value = llr(counts[active], settings.elo0, settings.elo1)
        up, down = value >= settings.upper, value <= settings.lower
        decision[active[up]] = 1
        decision[active[down]] = -1
        active = active[~(up | down)]
        if len(active) == 0:
            break
    return decision


@pytest.mark.slow
@pytest.mark.parametrize(
    ("settings", "seed"),
    [(SprtSettings(0, 100, 0.05, 0.05), 1), (SprtSettings(-50, 50, 0.05, 0.10), 2)],
)
def test_error_rates_on_simulated_matches_are_near_alpha_and_beta(
    settings: SprtSettings, seed: int
) -> None:
    matches = 2000
    at_elo0 = simulate(settings.elo0, settings, matches, seed)
    at_elo1 = simulate(settings.elo1, settings, matches, seed + 100)
    assert np.all(at_elo0 != 0) and np.all(at_elo1 != 0)  # every test decides
    false_h1 = np.mean(at_elo0 == 1)  # H1 accepted though A is only elo0 better
    false_h0 = np.mean(at_elo1 == -1)  # H0 accepted though A is elo1 better
    # Binomial spread of a rate near 0.05 over 2000 matches: 0.005.
    assert abs(false_h1 - settings.alpha) < 0.02, false_h1
    assert abs(false_h0 - settings.beta) < 0.025, false_h0
    # Far from both hypotheses the test is almost never wrong.
    far = simulate(settings.elo1 + 100, settings, 500, seed + 200)
    assert np.mean(far == 1) > 0.99


def test_the_constrained_mle_has_the_asked_mean_and_beats_its_neighbours() -> None:
    freqs = np.array([0.1, 0.2, 0.35, 0.25, 0.1])
    for score in (0.3, 0.5, 0.64):
        p = _constrained_mle(freqs, score)
        assert p.sum() == pytest.approx(1.0) and (p * PAIR_SCORES).sum() == pytest.approx(score)
        best = float(np.sum(freqs * np.log(p)))
        rng = np.random.default_rng(0)
        for _ in range(50):  # a move that keeps the sum and the mean lowers the likelihood
            d = rng.normal(size=5)
            basis = np.stack([np.ones(5), PAIR_SCORES])
            d -= basis.T @ np.linalg.lstsq(basis.T, d, rcond=None)[0]
            q = p + 1e-3 * d / np.abs(d).max()
            assert float(np.sum(freqs * np.log(q))) < best


def test_llr_is_zero_at_first_symmetric_and_near_the_normal_approximation() -> None:
    assert llr([0, 0, 0, 0, 0], 0, 10) == 0.0
    counts = np.array([5, 20, 40, 20, 15])
    # Swapping the agents mirrors the counts and the hypotheses.
    assert llr(counts[::-1], 0, -10) == pytest.approx(llr(counts, 0, 10))
    assert llr(counts, 0, 10) > 0 > llr(counts[::-1], 0, 10)
    # fishtest's normal approximation N (s1 - s0)(2 mean - s0 - s1) / (2 var) for small steps.
    n, freqs = counts.sum(), counts / counts.sum()
    mean = float(freqs @ PAIR_SCORES)
    var = float(freqs @ (PAIR_SCORES - mean) ** 2)
    s0, s1 = logistic_score(0), logistic_score(10)
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert llr(counts, 0, 10) == pytest.approx(approx, rel=0.01)


def test_bounds_and_the_running_test() -> None:
    settings = SprtSettings.parse("elo0=0, elo1=20, alpha=0.05, beta=0.1")
    assert settings.lower == pytest.approx(math.log(0.1 / 0.95))
    assert settings.upper == pytest.approx(math.log(0.9 / 0.05))
    test = Sprt(settings)
    assert test.decision == "none" and test.to_json()["llr"] == 0
    while test.add_pair(2.0) == "none":
        assert test.pairs < 100
    assert test.decision == "H1" and test.counts == [0, 0, 0, 0, test.pairs]
    with pytest.raises(ValueError, match="pair scores"):
        test.add_pair(0.7)
    assert set(test.to_json()) >= {"elo0", "elo1", "alpha", "beta", "llr", "lower", "upper"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("elo0=0,elo1=10,gamma=1", "unknown key 'gamma'"),
        ("elo0=10,elo1=10", "elo1 > elo0"),
        ("elo0=10,elo1=5", "elo1 > elo0"),
        ("elo0=0,elo1=10,alpha=0.5", "alpha must be in"),
        ("elo0=0,elo1=10,beta=0", "beta must be in"),
        ("elo0=0,elo1=10,alpha=-0.1", "alpha must be in"),
        ("elo1=10", "elo0 missing"),
        ("elo0=0,elo1=ten", "is not a number"),
        ("elo0=0,elo1=nan", "finite"),
        ("elo0=0,elo1", "expected key=value"),
        ("elo0=0,elo0=1,elo1=5", "given twice"),
    ],
)
def test_bad_sprt_settings_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SprtSettings.parse(text)


@pytest.mark.slow
def test_greedy_against_random_accepts_h1_within_a_few_dozen_games() -> None:
    result = run_arena(
        ["greedy", "random"], 200, MatchSettings(seed=1), progress=False, sprt=SprtSettings(0, 100)
    )
    assert result.sprt is not None and result.sprt.decision == "H1"
    games = result.pairings[0].games
    assert games == 2 * result.sprt.pairs and games <= 40
    assert result.to_json()["sprt"]["decision"] == "H1"


@pytest.mark.slow
def test_random_against_random_accepts_h0_the_same_in_workers() -> None:
    settings = SprtSettings(0, 150)
    alone = run_arena(
        ["random", "random"], 400, MatchSettings(seed=1), progress=False, sprt=settings
    )
    assert alone.sprt is not None and alone.sprt.decision == "H0"
    assert alone.pairings[0].games <= 100
    # Pairs count in opening order, whatever order two workers finish them in.
    pooled = run_arena(
        ["random", "random"], 400, MatchSettings(seed=1, workers=2), progress=False, sprt=settings
    )
    assert pooled.sprt is not None
    assert pooled.sprt.to_json() == alone.sprt.to_json()
    assert [g.actions for g in pooled.games] == [g.actions for g in alone.games]


def test_the_games_cap_ends_an_undecided_test() -> None:
    result = run_arena(
        ["random", "random"],
        6,
        MatchSettings(seed=2),
        progress=False,
        sprt=SprtSettings(0, 5, 0.01, 0.01),
    )
    assert result.sprt is not None and result.sprt.decision == "none"
    assert result.pairings[0].games == 6 and result.sprt.pairs == 3
    assert "none: the games ran out" in result.report()


@pytest.mark.slow
def test_cli_prints_the_llr_as_it_goes_and_the_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sprt.json"
    code = eval_main(
        ["greedy", "random", "--sprt", "elo0=0,elo1=100", "--seed", "1", "--json", str(out)]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert text.count("LLR") >= 3 and "decision: H1 accepted" in text
    sprt = json.loads(out.read_text())["sprt"]
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["greedy", "random", "--sprt", "elo0=0,elo1=10,colour=1"], "unknown key 'colour'"),
        (["greedy", "random", "--sprt", "elo0=10,elo1=0"], "elo1 > elo0"),
        (["greedy", "random", "--sprt", "elo0=0,elo1=10,alpha=0.7"], "alpha must be in"),
        (["greedy", "random", "greedy", "--sprt", "elo0=0,elo1=10"], "two agents"),
        (["greedy", "nope", "--sprt", "elo0=0,elo1=10"], "unknown agent 'nope'"),
    ],
)
def test_cli_refuses_bad_sprt_input_before_any_game(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    records = tmp_path / "games"
    assert eval_main([*args, "--json", str(out), "--records", str(records)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not records.exists()


@pytest.mark.parametrize(("points", "decision"), [(2.0, "H1"), (0.0, "H0")])
def test_a_decision_claims_only_the_bound_it_rejected(points: float, decision: str) -> None:
    """H1 rejects elo0 (it does not show elo1); H0 rejects elo1: the report says so."""
    test = Sprt(SprtSettings(elo0=-50, elo1=0))
    for _ in range(200):
        if test.add_pair(points) != "none":
            break
    assert test.decision == decision
    text = _decision_text(test, ["int8", "fp32"])
    if decision == "H1":
        assert "above elo0 = -50" in text and "at least" not in text
    else:
        assert "below elo1 = +0" in text
