"""benchmarks.interleave: two code trees, rounds in turn, ratios and a digest of the games."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agents.search.cache import EvaluationCache
from benchmarks import interleave

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert (
        interleave.main(["--rounds", "2", "--side", f"a={ROOT}", "--side", f"b={ROOT}", *args]) == 0
    )
    return capsys.readouterr().out


@pytest.mark.slow
def test_the_same_agent_on_both_sides_plays_the_same_decisions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(capsys, "--positions", "2", "--sims", "8", "agent", "mcts:sims=8")
    assert "round 2:" in out and "simulations/CPU-s" in out
    assert "games played: the same on every side" in out


@pytest.mark.slow
def test_a_match_job_plays_seeded_games_and_a_side_may_take_its_own_spec(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sides = ["--side", f"a={ROOT}", "--side", f"b={ROOT}@random"]
    out = interleave.main(["--rounds", "1", "--games", "1", *sides, "match", "greedy"])
    assert out == 0
    text = capsys.readouterr().out
    assert "| b | match random |" in text
    assert "games played: different" in text  # greedy and random do not play alike


def test_a_side_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not a checkout"):
        interleave.parse_side(f"x={tmp_path}", ["agent", "random"])
    with pytest.raises(argparse.ArgumentTypeError, match="LABEL=TREE"):
        interleave.parse_side(str(ROOT), ["agent", "random"])


def test_forget_empties_an_agents_cache_and_ignores_an_agent_without_one() -> None:
    class Holder:
        cache = EvaluationCache(lambda leaves: ([], None), capacity=4)  # type: ignore[arg-type,return-value]

    holder = Holder()
    holder.cache._store["position"] = (None, 0.0)  # type: ignore[assignment]
    interleave.forget(holder)
    assert len(holder.cache) == 0
    interleave.forget(object())  # no cache: nothing to do
