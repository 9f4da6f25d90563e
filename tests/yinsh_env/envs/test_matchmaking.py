"""Opponent pools, curricula and leagues (yinsh_env.envs.matchmaking), alone and in Yinsh-v0."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from agents import AgentSpecError, GreedyAgent, RandomAgent
from agents.league import curriculum_from_specs, pool_from_specs
from yinsh_env.envs.gym_env import YinshGymEnv
from yinsh_env.envs.matchmaking import (
    Curriculum,
    Entry,
    League,
    OpponentPool,
    OpponentSampler,
    learner_score,
)


def draws(sampler: OpponentSampler, n: int, seed: int = 0) -> Counter[str]:
    rng = np.random.default_rng(seed)
    return Counter(sampler.sample(rng).name for _ in range(n))


class Closable:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_uniform_pool_samples_every_member_about_equally_and_repeats_with_its_seed() -> None:
    pool = OpponentPool("uniform")
    for name in "abcd":
        pool.add(name, None)
    counts = draws(pool, 4000)
    assert set(counts) == set("abcd")
    assert all(850 < c < 1150 for c in counts.values()), counts
    assert draws(pool, 50, seed=3) == draws(pool, 50, seed=3)
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    assert [pool.sample(rng_a).name for _ in range(30)] == [
        pool.sample(rng_b).name for _ in range(30)
    ]


def test_recent_pool_weights_newer_members_geometrically() -> None:
    pool = OpponentPool("recent", recency=0.5)
    for step in (0, 100, 200):
        pool.add_snapshot(None, step)
    assert pool.names == ["snapshot@0", "snapshot@100", "snapshot@200"]
    np.testing.assert_allclose(pool.weights(), np.array([1, 2, 4]) / 7)
    counts = draws(pool, 7000)
    assert counts["snapshot@200"] > counts["snapshot@100"] > counts["snapshot@0"]


def test_pfsp_meets_the_opponents_the_learner_beats_least_most() -> None:
    pool = OpponentPool("pfsp", power=2.0)
    easy, hard = pool.add("easy", None), pool.add("hard", None)
    np.testing.assert_allclose(pool.weights(), [0.5, 0.5])  # no games yet: even
    for _ in range(8):
        pool.record(easy, +1.0)
        pool.record(hard, -1.0)
    assert easy.games == hard.games == 8 and easy.score == 8 and hard.score == 0
    assert easy.win_rate == pytest.approx(0.9) and hard.win_rate == pytest.approx(0.1)
    np.testing.assert_allclose(pool.weights(), np.array([0.01, 0.81]) / 0.82)
    counts = draws(pool, 2000)
    assert counts["easy"] > 0 and counts["hard"] > 30 * counts["easy"] / 2


def test_snapshots_beyond_the_limit_drop_the_oldest_and_fixed_members_stay() -> None:
    pool = OpponentPool("uniform", max_snapshots=2)
    pool.add("greedy", "fixed")
    handles = [Closable() for _ in range(4)]
    for step, handle in enumerate(handles):
        pool.add_snapshot(handle, step)
    assert pool.names == ["greedy", "snapshot@2", "snapshot@3"]
    assert [h.closed for h in handles] == [True, True, False, False]
    with pytest.raises(ValueError, match="snapshot@3"):
        pool.add_snapshot(None, 3)
    assert pool.names == ["greedy", "snapshot@2", "snapshot@3"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"strategy": "best"}, "strategy 'best'"),
        ({"max_snapshots": 0}, "max_snapshots"),
        ({"recency": 0.0}, "recency"),
        ({"power": float("nan")}, "power"),
    ],
)
def test_bad_pool_settings_are_refused_by_name(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OpponentPool(**kwargs)


def test_an_empty_pool_says_so() -> None:
    with pytest.raises(ValueError, match="empty"):
        OpponentPool().sample(np.random.default_rng(0))


def test_curriculum_promotes_once_the_window_reaches_the_threshold() -> None:
    ladder = Curriculum([("random", None), ("greedy", None), ("alphabeta", None)], 0.75, 4)
    rng = np.random.default_rng(0)
    for reward in (1, 1, -1, -1, 1, 1):  # the last four score 0.5 at most: no promotion
        assert ladder.sample(rng).name == "random"
        ladder.record(ladder.sample(rng), reward)
    ladder.record(ladder.sample(rng), 1)  # the last four: -1, 1, 1, 1 score 0.75
    assert ladder.current.name == "greedy" and ladder.promotions == [("greedy", 7)]
    assert len(ladder.recent) == 0  # the new stage starts its own window
    ladder.record(ladder.stages[0], -1)  # an earlier stage's game: counted, not judged
    assert ladder.stages[0].games == 8 and len(ladder.recent) == 0
    for _ in range(4):
        ladder.record(ladder.sample(rng), 0)  # draws: 0.5 < 0.75
    assert ladder.current.name == "greedy"
    for _ in range(4):
        ladder.record(ladder.sample(rng), 1)
    assert ladder.finished and ladder.current.name == "alphabeta"
    for _ in range(10):
        ladder.record(ladder.sample(rng), 1)
    assert ladder.current.name == "alphabeta"  # the last stage stays
    assert [p[0] for p in ladder.promotions] == ["greedy", "alphabeta"]


def test_bad_curricula_and_leagues_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one stage"):
        Curriculum([])
    with pytest.raises(ValueError, match="repeat"):
        Curriculum([("a", None), ("a", None)])
    with pytest.raises(ValueError, match="threshold"):
        Curriculum([("a", None)], threshold=1.5)
    with pytest.raises(ValueError, match="window"):
        Curriculum([("a", None)], window=0)
    with pytest.raises(ValueError, match="weights"):
        League([(0.0, OpponentPool())])
    with pytest.raises(TypeError, match="not an opponent sampler"):
        League([(1.0, RandomAgent())])  # type: ignore[list-item]
    stranger = Entry("stranger", None)
    pool = OpponentPool()
    pool.add("a", None)
    with pytest.raises(ValueError, match="stranger"):
        League([(1.0, pool)]).record(stranger, 1.0)


def test_league_mixes_its_samplers_and_sends_results_back_to_the_one_that_chose() -> None:
    ladder = Curriculum([("random", None), ("greedy", None)], threshold=1.0, window=2)
    pool = OpponentPool("uniform")
    pool.add_snapshot(None, 0)
    league = League([(3.0, ladder), (1.0, pool)])
    counts = draws(league, 4000)
    assert 2800 < counts["random"] < 3200 and counts["random"] + counts["snapshot@0"] == 4000
    rng = np.random.default_rng(1)
    chosen = [league.sample(rng) for _ in range(40)]
    for entry in chosen:
        league.record(entry, 1.0)
    assert ladder.current.name == "greedy"  # the curriculum heard its wins
    assert pool.entries[0].games == sum(e.name == "snapshot@0" for e in chosen)
    assert isinstance(league, OpponentSampler)


def test_learner_score() -> None:
    assert [learner_score(r) for r in (1.0, 0.0, -1.0)] == [1.0, 0.5, 0.0]


# --- in the Gymnasium wrapper ------------------------------------------------------


def run_episodes(env: YinshGymEnv, episodes: int, seed: int) -> list[tuple[str, float]]:
    """Random masked learner moves; (opponent name, final reward) per episode."""
    rng = np.random.default_rng(seed)
    out = []
    for episode in range(episodes):
        _, info = env.reset(seed=seed if episode == 0 else None)
        name, done, reward = info["opponent"], False, 0.0
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, reward, done, _, info = env.step(action)
            assert info["opponent"] == name
        out.append((name, float(reward)))
    return out


def test_gym_env_meets_the_pools_opponents_and_reports_each_result_once() -> None:
    pool = OpponentPool("uniform")
    pool.add("random", RandomAgent())
    pool.add("greedy", GreedyAgent())
    env = YinshGymEnv(opponent=pool, rings_to_win=1)
    results = run_episodes(env, 8, seed=5)
    assert {name for name, _ in results} == {"random", "greedy"}
    for entry in pool.entries:
        mine = [r for name, r in results if name == entry.name]
        assert entry.games == len(mine)
        assert entry.score == sum(learner_score(r) for r in mine)
    env.reset()  # an episode abandoned before its end reports nothing
    assert sum(e.games for e in pool.entries) == 8
    # The same seed, a fresh pool: the same opponents and games.
    again = OpponentPool("uniform")
    again.add("random", RandomAgent())
    again.add("greedy", GreedyAgent())
    assert run_episodes(YinshGymEnv(opponent=again, rings_to_win=1), 8, seed=5) == results


def test_gym_env_scores_an_illegal_learner_move_as_a_loss_against_the_sampled_opponent() -> None:
    pool = OpponentPool()
    entry = pool.add("random", None)
    env = YinshGymEnv(opponent=pool, rings_to_win=1)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["opponent"] == "random"
    assert entry.games == 1 and entry.score == 0.0


def test_a_curriculum_in_the_env_moves_to_its_next_stage() -> None:
    ladder = Curriculum(
        [("pass-through", RandomAgent()), ("greedy", GreedyAgent())], threshold=0.01, window=2
    )
    env = YinshGymEnv(opponent=ladder, rings_to_win=1)
    names = [name for name, _ in run_episodes(env, 6, seed=0)]
    # Two games against the first stage, then (any score above 0 promotes) the second.
    assert names[:2] == ["pass-through"] * 2
    assert ladder.promotions and names[-1] == "greedy"


def test_spec_built_pools_and_curricula() -> None:
    pool = pool_from_specs(["random", "greedy", "random"], strategy="pfsp", seed=3)
    assert pool.names == ["random", "greedy"] and pool.strategy == "pfsp"
    assert isinstance(pool.entries[1].opponent, GreedyAgent)
    ladder = curriculum_from_specs(["random", "alphabeta:depth=1"], threshold=0.6, window=10)
    assert [s.name for s in ladder.stages] == ["random", "alphabeta:depth=1"]
    assert ladder.stages[1].opponent.spec == "alphabeta:depth=1"
    with pytest.raises(AgentSpecError, match="no-such"):
        pool_from_specs(["random", "no-such"])
    with pytest.raises(ValueError, match="threshold"):
        curriculum_from_specs(["random"], threshold=0)


def test_a_snapshot_dropped_during_its_episode_still_gets_its_result() -> None:
    """A pool full of snapshots drops one while an environment still plays against it."""
    pool = OpponentPool("uniform", max_snapshots=1)
    pool.add_snapshot(None, 0)
    league = League([(1.0, pool)])
    chosen = league.sample(np.random.default_rng(0))
    pool.add_snapshot(None, 100)  # drops snapshot@0, whose game is under way
    assert chosen not in pool and pool.names == ["snapshot@100"]
    league.record(chosen, 1.0)  # counted for the dropped snapshot, no error
    assert chosen.games == 1 and chosen.score == 1.0
    newest = league.sample(np.random.default_rng(0))
    league.record(newest, -1.0)
    assert newest.games == 1 and newest.score == 0.0
    pool.record(chosen, 0.0)  # a bare pool takes a dropped member's result too
    assert chosen.games == 2


def test_a_dropped_snapshot_gets_the_results_of_all_its_games_under_way() -> None:
    """In a vector environment several games can be under way against one snapshot."""
    pool = OpponentPool("uniform", max_snapshots=1)
    pool.add_snapshot(None, 0)
    league = League([(1.0, pool)])
    rng = np.random.default_rng(0)
    first, second = league.sample(rng), league.sample(rng)
    assert first is second
    pool.add_snapshot(None, 100)  # drops snapshot@0 while both its games go on
    league.record(first, 1.0)
    league.record(second, -1.0)  # the second result once raised: no sampler of this league
    assert first.games == 2 and first.score == 1.0  # points: a win and a loss
    with pytest.raises(ValueError, match="snapshot@0"):
        league.record(first, 1.0)  # a third result: no game was under way
