"""The picking the three library trainers share (yinsh_env.envs.matchmaking): fixed weighted
mixes (the single-file PPO's), snapshot slots rewritten round-robin, and the league of
labels RLlib maps its modules by."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from yinsh_env.envs.matchmaking import WINDOW, OpponentPool, SnapshotSlots, label_league


def ppo_mix(strategy: str = "weighted") -> OpponentPool:
    """The single-file PPO's default mix: greedy 0.6, random 0.1, two snapshots sharing 0.3."""
    pool = OpponentPool(strategy, max_snapshots=2)
    pool.add("greedy", None, weight=0.6)
    pool.add("random", None, weight=0.1)
    for i in range(2):
        pool.add(f"self{i}", None, snapshot=True, weight=0.3 / 2)
    return pool


def test_a_weighted_mix_draws_each_game_once_from_its_weights() -> None:
    pool = ppo_mix()
    np.testing.assert_allclose(pool.weights(), [0.6, 0.1, 0.15, 0.15])
    # One draw of the generator per game, over the members in order: a seeded run
    # meets the opponents the trainer's own mix met before it moved here.
    rng, reference = np.random.default_rng(5), np.random.default_rng(5)
    p = np.array([0.6, 0.1, 0.15, 0.15]) / 1.0
    drawn = [pool.sample(rng).name for _ in range(7000)]
    assert drawn == [pool.names[int(reference.choice(4, p=p))] for _ in range(7000)]
    counts = Counter(drawn)
    for name, share in zip(pool.names, p):
        assert abs(counts[name] - 7000 * share) < 200, (name, counts)


def test_a_weighted_mix_ignores_the_records_and_refuses_bad_weights() -> None:
    pool = ppo_mix()
    for _ in range(20):
        pool.record(pool.entries[0], -1.0)  # the learner loses every game to greedy
    np.testing.assert_allclose(pool.weights(), [0.6, 0.1, 0.15, 0.15])
    for weight in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="'x': weight"):
            pool.add("x", None, weight=weight)
    assert "x" not in pool.names
    zero = OpponentPool("weighted")
    zero.add("a", None, weight=0.0)
    with pytest.raises(ValueError, match="weighs 0"):
        zero.sample(np.random.default_rng(0))


def test_the_variance_mix_meets_most_the_opponents_the_learner_beats_half_the_time() -> None:
    pool = OpponentPool("variance")
    for name in ("easy", "even", "hard"):
        pool.add(name, None, weight=1.0)
    pool.add("self0", None, snapshot=True, weight=0.25)
    np.testing.assert_allclose(pool.weights(), [1 / 3.25] * 3 + [0.25 / 3.25])  # no results
    for i in range(WINDOW):
        pool.note("easy", 1.0)
        pool.note("even", float(i % 2))
        pool.note("hard", 0.0)
        pool.note("stranger", 1.0)  # not a member: ignored
    easy, even, hard, self_ = pool.weights()
    assert even > 4 * easy and even > 4 * hard
    assert easy == pytest.approx(hard)
    assert self_ == pytest.approx(0.25 / 3.25)  # the snapshots keep their share
    # Only the last WINDOW results count: as many wins against "hard" make it even.
    for i in range(WINDOW):
        pool.note("hard", float(i % 2 == 0))
    _, even, hard, _ = pool.weights()
    assert hard == pytest.approx(even)


def test_the_variance_mix_reads_notes_not_the_environments_rewards() -> None:
    """``record`` gets the last reward, which shaping moves: the window is fed apart."""
    pool = OpponentPool("variance")
    easy = pool.add("easy", None)
    pool.add("hard", None)
    for _ in range(50):
        pool.record(easy, 0.4)  # a shaped draw reads as a win in the record
    assert easy.games == 50 and easy.score == 50
    np.testing.assert_allclose(pool.weights(), [0.5, 0.5])


def test_snapshot_slots_are_rewritten_round_robin_the_oldest_first() -> None:
    slots = SnapshotSlots(["a", "b", "c"])
    assert slots.filled == [] and len(slots) == 3
    assert [slots.take() for _ in range(2)] == ["a", "b"]
    assert slots.filled == ["a", "b"]
    assert [slots.take() for _ in range(3)] == ["c", "a", "b"]
    assert slots.filled == ["c", "a", "b"]  # c is now the oldest
    empty = SnapshotSlots[str]([])
    assert not empty and empty.filled == []
    with pytest.raises(ValueError, match="no snapshot slots"):
        empty.take()


def shares(league_draws: list[str]) -> dict[str, float]:
    return {name: count / len(league_draws) for name, count in Counter(league_draws).items()}


def test_a_label_league_gives_each_kind_of_opponent_its_share() -> None:
    league = label_league(
        "learner", ["snap0", "snap1"], 0.25, recency=0.5, fixed=["f0", "f1"], fixed_share=0.2
    )
    rng = np.random.default_rng(3)
    found = shares([league.sample(rng).name for _ in range(8000)])
    assert found["f0"] == pytest.approx(0.1, abs=0.02)
    assert found["f1"] == pytest.approx(0.1, abs=0.02)
    assert found["learner"] == pytest.approx(0.8 * 0.25, abs=0.02)
    # The snapshots by recency, the newest (last) twice as often at 0.5.
    assert found["snap1"] == pytest.approx(0.6 * 2 / 3, abs=0.02)
    assert found["snap0"] == pytest.approx(0.6 / 3, abs=0.02)


def test_a_label_league_without_snapshots_or_fixed_opponents_is_self_play() -> None:
    rng = np.random.default_rng(0)
    alone = label_league("learner", [], 0.0, fixed_share=0.9)  # no fixed: its share unused
    assert {alone.sample(rng).name for _ in range(50)} == {"learner"}
    fixed_only = label_league("learner", [], 0.0, fixed=["f0"], fixed_share=0.5)
    found = shares([fixed_only.sample(rng).name for _ in range(4000)])
    assert found["f0"] == pytest.approx(0.5, abs=0.03)
    assert set(found) == {"f0", "learner"}
    with pytest.raises(ValueError, match="self_share"):
        label_league("learner", [], 1.5)
    with pytest.raises(ValueError, match="fixed_share"):
        label_league("learner", [], 0.5, fixed=["f0"], fixed_share=-0.1)


def test_a_label_league_pickles_and_picks_the_same_after() -> None:
    """RLlib sends the mapping (and the league in it) to its env runners."""
    import pickle

    league = label_league("learner", ["snap0"], 0.5, fixed=["f0"], fixed_share=0.3)
    copy = pickle.loads(pickle.dumps(league))
    rng, again = np.random.default_rng(9), np.random.default_rng(9)
    assert [league.sample(rng).name for _ in range(50)] == [
        copy.sample(again).name for _ in range(50)
    ]
