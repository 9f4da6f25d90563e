"""The fixed rating scale: its shipped data, anchors by identity, ratings on it everywhere."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.calibrate import LADDER, fit
from agents.evaluation.elo import fit_bradley_terry
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.scale import (
    Scale,
    ScaleError,
    default_scale,
    load_scale,
    spec_identities,
)
from agents.network.pretrained import weights_path
from agents.spec import canonical_spec


def cheap_scale() -> Scale:
    """The shipped scale's four cheapest anchors (random and noisy greedy)."""
    scale = default_scale()
    return dataclasses.replace(scale, anchors=scale.anchors[:4])


def test_the_shipped_scale_is_calibrated_and_documented() -> None:
    scale = default_scale()
    assert scale.name == "yinsh-v1" and scale.rings_to_win == 3
    assert [a.spec for a in scale.anchors] == list(LADDER)
    assert scale.anchors[0].spec == "random" and scale.anchors[0].elo == 0.0
    elos = [a.elo for a in scale.anchors]
    assert elos == sorted(elos), "the ladder climbs"
    calibration = scale.calibration
    assert "python -m agents.evaluation.calibrate" in calibration["command"]
    assert calibration["date"] and calibration["games"] == sum(
        p["games"] for p in calibration["pairings"]
    )
    # The frozen ratings are the fit of the recorded games (nothing typed in by hand).
    # Both are rounded to 0.1 Elo; the float64 Newton fit converges to about 1e-8 Elo,
    # so on another CPU a rating at a rounding boundary may land one step over: 0.11.
    refit = fit(LADDER, calibration["pairings"])
    assert [a["elo"] for a in refit] == pytest.approx(elos, abs=0.11)
    # Budgets are simulations and depths, never time: the same moves on any machine.
    for anchor in scale.anchors:
        assert "time=0" in canonical_spec(anchor.spec) or "time" not in canonical_spec(anchor.spec)


def test_anchor_identities_are_what_the_specs_build() -> None:
    scale = default_scale()
    assert [a.identity for a in scale.anchors] == spec_identities(a.spec for a in scale.anchors)


@pytest.mark.slow
def test_anchors_are_recognised_by_what_they_play_not_how_they_are_spelt() -> None:
    scale = default_scale()
    anchor_file = weights_path("anchor-v1")
    ids = spec_identities(
        [
            "alphabeta",
            "alphabeta:depth=2",
            f"net:path={anchor_file},sims=0,precision=fp32",  # net plays int8 by default
            "pretrained:weights=anchor-v1,sims=1",
            "greedy:noise=0",
            "greedy:noise=1",
        ]
    )
    fixed = scale.fixed(ids)
    ab2 = next(a.elo for a in scale.anchors if a.spec == "alphabeta:depth=2")
    net0 = next(
        a.elo
        for a in scale.anchors
        if a.spec == "pretrained:weights=anchor-v1,sims=0,precision=fp32"
    )
    greedy = next(a.elo for a in scale.anchors if a.spec == "greedy")
    assert fixed == {0: ab2, 1: ab2, 2: net0, 4: greedy}


@pytest.mark.slow
def test_a_match_with_an_anchor_is_on_the_scale_whatever_the_order() -> None:
    scale = cheap_scale()
    noisy = next(a for a in scale.anchors if a.spec == "greedy:noise=1000")
    for specs in (["greedy:noise=500", "random"], ["random", "greedy:noise=500"]):
        result = run_arena(specs, 4, MatchSettings(seed=3), progress=False, scale=scale)
        ratings = {r.agent: r for r in result.elo}
        assert result.scale == "yinsh-v1" and ratings["random"].elo == 0.0
        assert result.anchors == {"random": 0.0}
        assert "on the yinsh-v1 scale" in result.report()
        assert result.to_json()["elo_scale"]["name"] == "yinsh-v1"
    # Two anchors keep both their ratings; the other agent is placed between them.
    result = run_arena(
        ["greedy:noise=1000", "greedy:noise=500", "random"],
        2,
        MatchSettings(seed=3),
        progress=False,
        scale=scale,
    )
    ratings = {r.agent: r.elo for r in result.elo}
    assert ratings["greedy:noise=1000"] == noisy.elo and ratings["random"] == 0.0
    assert result.anchors == {"greedy:noise=1000": noisy.elo, "random": 0.0}


def test_a_pool_without_anchors_says_its_ratings_are_relative() -> None:
    result = run_arena(
        ["greedy:noise=500", "greedy:noise=700"], 2, MatchSettings(seed=3), progress=False
    )
    assert result.scale is None and result.elo[0].elo == 0.0
    assert "relative to this pool (greedy:noise=500 = 0)" in result.report()
    assert result.to_json()["elo_scale"] == {
        "name": None,
        "anchors": {},
        "relative_to": "greedy:noise=500",
    }


def test_blitz_games_are_not_put_on_the_standard_scale() -> None:
    result = run_arena(
        ["greedy", "random"], 2, MatchSettings(seed=3, rings_to_win=1), progress=False
    )
    assert result.scale is None


def test_the_multi_anchor_fit_keeps_the_anchors_and_places_the_rest() -> None:
    from agents.evaluation.elo import PairResult

    # Agent 2 scores 50% against both anchors 0 (at 100) and 1 (at 300): it sits between.
    results = [PairResult(2, 0, 50, 100), PairResult(2, 1, 50, 100)]
    elo, stderr = fit_bradley_terry(3, results, fixed={0: 100.0, 1: 300.0}, prior=0.0)
    assert elo[0] == 100.0 and elo[1] == 300.0 and elo[2] == pytest.approx(200.0, abs=1e-6)
    assert stderr[0] == stderr[1] == 0.0 and stderr[2] > 0
    with pytest.raises(ValueError, match="not connected"):
        fit_bradley_terry(4, results, fixed={0: 100.0, 1: 300.0})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "is not a rating scale"),
        ('{"name": "x"}', "is not a rating scale"),
        ('{"name": "x", "anchors": []}', "no anchors"),
        (
            '{"name": "x", "anchors": [{"spec": "random", "identity": "random", "elo": 0},'
            ' {"spec": "random", "identity": "random", "elo": 5}]}',
            "one anchor twice",
        ),
    ],
)
def test_a_bad_scale_file_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "scale.json"
    path.write_text(text)
    with pytest.raises(ScaleError, match=message):
        load_scale(path)
    with pytest.raises(ScaleError, match="No such file"):
        load_scale(tmp_path / "missing.json")


def test_cli_refuses_a_bad_scale_file_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scale.json"
    path.write_text(json.dumps({"name": "x", "anchors": []}))
    out = tmp_path / "out.json"
    args = ["greedy", "random", "--games", "2", "--scale", str(path), "--json", str(out)]
    assert eval_main(args) == 2
    assert "no anchors" in capsys.readouterr().err and not out.exists()
