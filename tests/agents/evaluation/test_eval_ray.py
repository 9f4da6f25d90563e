"""Arena games on Ray actors: the same games as one process, on a local Ray cluster.

Runs on the local Ray the tests start (two CPUs, no dashboard; conftest's
``ray_cluster``); skipped where Ray is not installed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.rate import rate_agent
from agents.evaluation.scale import default_scale
from agents.evaluation.sprt import SprtSettings

pytestmark = pytest.mark.ray


@pytest.mark.slow
def test_a_match_on_ray_actors_plays_the_games_of_one_process(ray_cluster: Any) -> None:
    specs = ["greedy:noise=200", "random"]
    local = run_arena(specs, 4, MatchSettings(seed=1), progress=False)
    remote = run_arena(specs, 4, MatchSettings(seed=1, workers=2, backend="ray"), progress=False)
    assert [g.actions for g in remote.games] == [g.actions for g in local.games]
    assert remote.to_json()["pairings"] == local.to_json()["pairings"]
    assert ray_cluster.is_initialized()  # a connection it did not open stays open


def test_an_sprt_and_a_rating_on_ray_decide_as_one_process(ray_cluster: Any) -> None:
    settings = SprtSettings(0, 150)
    local = run_arena(
        ["random", "random"], 200, MatchSettings(seed=1), progress=False, sprt=settings
    )
    remote = run_arena(
        ["random", "random"],
        200,
        MatchSettings(seed=1, workers=2, backend="ray"),
        progress=False,
        sprt=settings,
    )
    assert remote.sprt is not None and local.sprt is not None
    assert remote.sprt.to_json() == local.sprt.to_json()
    scale = default_scale()
    cheap = dataclasses.replace(scale, anchors=scale.anchors[:3])
    alone = rate_agent(
        "greedy:noise=2000", cheap, MatchSettings(seed=2), ci_width=500, max_games=12
    )
    spread = rate_agent(
        "greedy:noise=2000",
        cheap,
        MatchSettings(seed=2, workers=0, backend="ray"),
        ci_width=500,
        max_games=12,
    )
    assert (spread.elo, spread.ci95) == (alone.elo, alone.ci95)


def test_cli_plays_on_ray(ray_cluster: Any, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["greedy", "random", "--games", "2", "--backend", "ray", "--workers", "2"]
    assert eval_main([*args, "--no-progress"]) == 0
    assert "greedy vs random" in capsys.readouterr().out


def test_address_without_the_ray_backend_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["greedy", "random", "--games", "2", "--address", "auto"]) == 2
    assert "--address goes with --backend ray" in capsys.readouterr().err
