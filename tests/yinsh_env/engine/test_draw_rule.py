"""The rules page says when a game is drawn, and the engine draws exactly then."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from yinsh_env import Result, State, Termination

RULES_PAGE = Path(__file__).resolve().parents[3] / "docs" / "guide" / "rules.md"


def test_the_rules_page_names_both_ways_to_a_draw() -> None:
    text = RULES_PAGE.read_text(encoding="utf-8")
    section = text.split("### When a game is drawn", 1)[1].split("\n## ", 1)[0]
    for ending in (Termination.POOL, Termination.PASSES):
        assert f"`end_reason` `{ending}`" in section
    assert "equal rings removed" in section and "no draw by repetition" in section


@pytest.mark.slow
def test_a_game_is_drawn_exactly_when_it_ends_without_a_third_ring_and_level() -> None:
    rng = np.random.default_rng(5)
    draws = 0
    for _ in range(40):
        game = State()
        while not game.is_terminal:
            legal = game.legal_actions()
            game.apply(legal[int(rng.integers(len(legal)))])
        level = game.removed[0] == game.removed[1]
        by_count = game.end_reason in (Termination.POOL, Termination.PASSES)
        assert (game.result == Result.DRAW) == (by_count and level)
        draws += game.result == Result.DRAW
    assert draws > 0  # random play draws often: the rule was exercised
