"""``--rate``: one agent placed on the fixed scale, reproducibly, with a sound interval."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agents.evaluation.elo import elo_bound
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.rate import AnchorScore, RatingResult, _choose, rate_agent
from agents.evaluation.scale import Scale, default_scale
from agents.evaluation.settings import MatchSettings


def cheap_scale() -> Scale:
    """The shipped scale's four cheapest anchors (random and noisy greedy)."""
    scale = default_scale()
    return dataclasses.replace(scale, anchors=scale.anchors[:4])


def test_anchors_are_chosen_around_the_estimate() -> None:
    elos = [0.0, 200.0, 450.0, 700.0]
    assert _choose(None, elos) == [2]
    assert _choose(300.0, elos) == [1, 2]
    assert _choose(450.0, elos) == [2, 3]
    assert _choose(-50.0, elos) == [0]
    assert _choose(900.0, elos) == [3]


@pytest.mark.slow
def test_two_seeds_agree_within_their_intervals() -> None:
    scale = cheap_scale()
    first = rate_agent("greedy:noise=500", scale, MatchSettings(seed=1), ci_width=400, max_games=24)
    second = rate_agent(
        "greedy:noise=500", scale, MatchSettings(seed=2), ci_width=400, max_games=24
    )
    assert first.games != second.games or first.elo != second.elo  # two measurements
    for r in (first, second):
        assert r.ci95[0] < r.elo < r.ci95[1] and len(r.games) <= 24
    assert first.ci95[0] <= second.ci95[1] and second.ci95[0] <= first.ci95[1]
    # The noisy greedy lies between the agents it is made from.
    anchors = {a.spec: a.elo for a in default_scale().anchors}
    assert anchors["random"] < first.elo < anchors["greedy"]


@pytest.mark.slow
def test_an_anchor_rated_lands_on_its_frozen_rating_and_replays_in_workers() -> None:
    scale = cheap_scale()
    anchor = next(a for a in scale.anchors if a.spec == "greedy:noise=300")
    alone = rate_agent(anchor.spec, scale, MatchSettings(seed=4), ci_width=400, max_games=20)
    assert alone.ci95[0] <= anchor.elo <= alone.ci95[1]
    pooled = rate_agent(
        anchor.spec, scale, MatchSettings(seed=4, workers=2), ci_width=400, max_games=20
    )
    assert pooled.elo == alone.elo and pooled.ci95 == alone.ci95
    assert [g.actions for g in pooled.games] == [g.actions for g in alone.games]


def test_cli_rate_prints_the_rating_on_the_named_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scale_file = tmp_path / "scale.json"
    scale_file.write_text(json.dumps(cheap_scale().to_json()))
    out = tmp_path / "rating.json"
    args = ["--rate", "greedy:noise=500", "--scale", str(scale_file), "--json", str(out)]
    assert eval_main([*args, "--games", "12", "--ci-width", "2000", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert "on the yinsh-v1 scale (random = 0)" in text and "after 4 games" in text
    rating = json.loads(out.read_text())["rating"]
    assert set(rating) == {"agent", "spec", "elo", "ci95", "bound", "scale"}
    assert rating["agent"] == rating["spec"] == "greedy:noise=500"
    assert rating["agent"] == "greedy:noise=500" and rating["scale"] == "yinsh-v1"
    assert rating["ci95"][0] < rating["elo"] < rating["ci95"][1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate", "nope"], "unknown agent 'nope'"),
        (["--rate", "mcts:sims=0"], "sims must be >= 1"),
        (["--rate", "net:path=/no/such/run"], "net:path=/no/such/run"),
        (["--rate", "greedy", "random"], "give no other specs"),
        (["--rate", "greedy", "--sprt", "elo0=0,elo1=5"], "do not mix"),
        (["--rate", "greedy", "--ci-width", "0"], "--ci-width"),
        (["--rate", "greedy", "--rings-to-win", "1"], "calibrated for rings_to_win=3"),
    ],
)
def test_cli_refuses_a_rate_that_cannot_run_before_any_game(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    try:
        code = eval_main([*args, "--json", str(out)])
    except SystemExit as exit:  # refused by argparse itself
        code = exit.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_rating_without_a_point_reports_a_bound_not_a_point() -> None:
    lost = AnchorScore(anchor="greedy", anchor_elo=980.0, games=100, losses=100)
    result = RatingResult("x", 59.0, (-423.0, 542.0), "yinsh-v1", [lost], [])
    side, below = result.bound  # type: ignore[misc]
    assert side == "<" and (side, below) == elo_bound(0, [(980.0, 100)])
    line = result.report().splitlines()[-1]
    assert f"Elo < {below:.0f} (one-sided 95%" in line and "542" not in line
    assert result.to_json()["rating"]["bound"] == ["<", round(below, 1)]
    lost.losses, lost.draws = 99, 1  # half a point: the interval again
    assert result.bound is None and "Elo 59 [-423, 542]" in result.report()
