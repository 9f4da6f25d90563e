"""Batch opponents (yinsh_env.vector.batch_agents): random choices, and agents asked per game.

The batched greedy agent has its tests in tests/agents/baselines/test_greedy_batch.py.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from agents.baselines.greedy import GreedyAgent
from yinsh_env.engine.state import State
from yinsh_env.vector.batch_agents import (
    BatchOpponent,
    ObservationOpponent,
    RandomOpponent,
    StateOpponent,
    batch_opponent,
    random_legal,
)
from yinsh_env.vector.env import YinshVectorEnv


@pytest.mark.parametrize("copies", [1, 10], ids=["row-by-row", "packed"])
def test_random_legal_is_uniform_over_each_rows_legal_actions(copies: int) -> None:
    """A few rows are drawn one by one, more through packed words: both uniform."""
    masks = np.zeros((3, 2142), dtype=np.int8)
    masks[0, [5, 2141]] = 1
    masks[1, [0, 7, 8, 9, 63, 64, 1000]] = 1
    masks[2, 2141] = 1
    masks = np.tile(masks, (copies, 1))
    rng = np.random.default_rng(0)
    seen = Counter(
        (row % 3, int(action))
        for _ in range(3000 // copies)
        for row, action in enumerate(random_legal(masks, rng))
    )
    assert set(seen) == {(0, 5), (0, 2141), (2, 2141)} | {
        (1, a) for a in (0, 7, 8, 9, 63, 64, 1000)
    }
    assert 1300 < seen[0, 5] < 1700
    assert all(330 < seen[1, a] < 530 for a in (0, 7, 8, 9, 63, 64, 1000))


@pytest.mark.parametrize("rows", [[2, 0], [2, 0] * 5, list(range(1, 30))])
def test_random_legal_draws_for_the_rows_asked(rows: list[int]) -> None:
    masks = np.zeros((30, 2142), dtype=np.bool_)
    masks[np.arange(30), np.arange(30) * 70] = True  # row r: action 70 r only
    actions = random_legal(masks, np.random.default_rng(0), np.array(rows))
    assert actions.tolist() == [70 * r for r in rows]


@pytest.mark.parametrize("n", [2, 20])
def test_random_legal_refuses_a_mask_without_actions(n: int) -> None:
    masks = np.ones((n, 2142), dtype=np.int8)
    masks[1] = 0
    with pytest.raises(ValueError, match="row 1"):
        random_legal(masks, np.random.default_rng(0))


class FirstLegal:
    """An agent that reads engine states (``act(state)``) and has no batched form."""

    def act(self, state: State) -> int:
        return state.legal_actions()[0]


def test_agents_and_callables_are_adapted() -> None:
    assert isinstance(batch_opponent(None), RandomOpponent)
    assert isinstance(batch_opponent("random"), RandomOpponent)
    assert isinstance(batch_opponent(FirstLegal()), StateOpponent)
    assert isinstance(batch_opponent(lambda observation: 0), ObservationOpponent)
    mine = RandomOpponent()
    assert batch_opponent(mine) is mine and isinstance(mine, BatchOpponent)
    with pytest.raises(TypeError, match="act_batch"):
        batch_opponent(42)
    with pytest.raises(ValueError, match=r"make_agent\('greedy'\)"):
        batch_opponent("greedy")  # the engine knows no agents: the spec is refused by name


def test_a_greedy_opponent_is_reseeded_by_a_seeded_reset() -> None:
    def play(seed: int) -> list[Any]:
        vec = YinshVectorEnv(4, opponent=GreedyAgent(), rings_to_win=1, learner="player_1")
        observations, _ = vec.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = [observations["observation"]]
        for _ in range(25):
            observations, *_ = vec.step(random_legal(observations["action_mask"], rng))
            out.append(observations["observation"])
        return out

    assert all(np.array_equal(a, b) for a, b in zip(play(3), play(3)))
