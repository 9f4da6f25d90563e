"""Opponents that decide for many games at once: ``act_batch`` of the network and library agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.learned.library_agent import (  # noqa: E402
    LibraryPolicyAgent,
    legal_slots,
    sample_rows,
)
from yinsh_env.engine.state import State  # noqa: E402
from yinsh_env.envs.observation import encode  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def positions(count: int, seed: int = 0, rings_to_win: int = 3) -> list[State]:
    """``count`` positions where someone is to act, from random games (all phases)."""
    rng = np.random.default_rng(seed)
    found: list[State] = []
    state = State(rings_to_win=rings_to_win)
    while len(found) < count:
        if state.is_terminal:
            state = State(rings_to_win=rings_to_win)
        if rng.random() < 0.3:
            found.append(state.copy())
        state.apply(int(rng.choice(state.legal_actions())))
    return found


def batch(states: list[State]) -> tuple[np.ndarray, np.ndarray]:
    planes = np.stack([encode(s) for s in states]).astype(np.float32)
    masks = np.stack([s.legal_mask() for s in states]).astype(np.int8)
    return planes, masks


def test_sample_rows_draws_in_proportion_and_never_a_zero_weight() -> None:
    rng = np.random.default_rng(0)
    weights = np.array([[0.0, 1.0, 0.0, 3.0], [0.0, 0.0, 0.0, 2.0]])
    draws = np.stack([sample_rows(weights, rng) for _ in range(4000)])
    assert set(draws[:, 0]) == {1, 3} and set(draws[:, 1]) == {3}
    assert (draws[:, 0] == 3).mean() == pytest.approx(0.75, abs=0.03)
    with pytest.raises(ValueError, match="row 1"):
        sample_rows(np.array([[1.0, 0.0], [0.0, 0.0]]), rng)


def test_legal_slots_pack_each_rows_legal_actions_in_order() -> None:
    masks = np.zeros((3, 2142), dtype=bool)
    masks[0, [2, 7]] = True
    masks[1, [0, 4, 2141]] = True
    masks[2, 5] = True
    slots = legal_slots(masks)
    assert slots.valid.tolist() == [[True, True, False], [True, True, True], [True, False, False]]
    assert slots.actions.tolist() == [[2, 7, 0], [0, 4, 2141], [5, 0, 0]]


class Weights(LibraryPolicyAgent):
    """Plays the fixed weights it is given, through the full-width batched form."""

    def __init__(self, weights: np.ndarray, seed: int, greedy: bool) -> None:
        super().__init__(seed, greedy)
        self.weights = weights

    def batch_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.weights * (masks > 0)


@pytest.mark.parametrize("greedy", [True, False])
def test_the_legal_actions_alone_give_the_full_widths_choices(greedy: bool) -> None:
    """act_batch chooses among each row's legal actions only: the same draws, the same
    seed, as sampling over all 2,142 columns (an illegal column adds exactly 0)."""
    rng = np.random.default_rng(8)
    masks = (rng.random((50, 2142)) < 0.02).astype(np.int8)
    masks[:, 2141] = 1
    weights = rng.random((50, 2142)) ** 4
    planes = np.zeros((50, 11, 11, 17), dtype=np.float32)
    agent = Weights(weights, seed=3, greedy=greedy)
    full = weights * (masks > 0)
    draws = np.random.default_rng(3)
    for _ in range(20):
        expected = full.argmax(axis=1) if greedy else sample_rows(full, draws)
        assert agent.act_batch(planes, masks).tolist() == expected.tolist()


def test_raw_network_decides_a_batch_in_one_call_as_act_does() -> None:
    agent: Any = make_agent("pretrained:sims=0,backend=torch", seed=0)
    states = positions(40)
    planes, masks = batch(states)
    before = agent.evaluator.batches
    actions = agent.act_batch(planes, masks, np.random.default_rng(0))
    assert agent.evaluator.batches == before + 1  # one network call for the 40 games
    assert actions.dtype == np.int64 and actions.shape == (40,)
    # Exact: each position's top two logits are at least 3e-3 apart, float32 rounding
    # (a batch of 40 or of one, any CPU's kernels) moves them by about 1e-5.
    assert actions.tolist() == [agent.act(s) for s in states]
    assert agent.act_batch(planes[:0], masks[:0]).shape == (0,)
    with pytest.raises(ValueError, match="row 1"):
        agent.act_batch(planes[:2], np.concatenate([masks[:1], 0 * masks[1:2]]))
    with pytest.raises(ValueError, match="masks"):
        agent.act_batch(planes, masks[:3])


def test_network_with_search_decides_each_game_as_act_does() -> None:
    spec = "pretrained:sims=3,backend=torch"
    batched: Any = make_agent(spec, seed=5)
    single: Any = make_agent(spec, seed=5)
    states = positions(6, seed=1)
    planes, masks = batch(states)
    assert batched.act_batch(planes, masks).tolist() == [single.act(s) for s in states]


@pytest.fixture(scope="module")
def snapshot() -> Any:
    pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
    from train.libraries import sb3_maskable_ppo as example
    from train.libraries.sb3_selfplay import PolicySnapshot

    env = example.make_vec_env("random", seed=0, rings_to_win=3, envs=1)
    model = example.build_model(env, n_steps=32, batch_size=32, channels=4, features=16)
    return PolicySnapshot(model.policy, seed=3)


def test_sb3_snapshot_decides_a_batch_in_one_forward_pass(snapshot: Any) -> None:
    states = positions(30, seed=2)
    planes, masks = batch(states)
    calls = []
    extractor = snapshot.policy.features_extractor
    forward = extractor.forward

    def counted(observations: Any) -> Any:
        calls.append(len(observations["observation"]))
        return forward(observations)

    extractor.forward = counted
    try:
        probs = snapshot.batch_probabilities(planes, masks)
        assert calls == [30]
        calls.clear()
        one_by_one = np.stack([snapshot.legal_probabilities(s) for s in states])
        np.testing.assert_allclose(probs, one_by_one, rtol=1e-4, atol=1e-7)
        assert not probs[masks == 0].any() and np.allclose(probs.sum(axis=1), 1.0)
        calls.clear()
        slots = legal_slots(masks > 0)  # the action layer's legal rows only: the same values
        packed = snapshot.packed_probabilities(planes, masks, slots)
        assert calls == [30]
        np.testing.assert_allclose(
            packed, np.take_along_axis(probs, slots.actions, axis=1) * slots.valid, atol=1e-6
        )
        assert not packed[~slots.valid].any()
        snapshot.greedy = True
        np.testing.assert_array_equal(snapshot.act_batch(planes, masks), probs.argmax(axis=1))
        snapshot.greedy = False
        for _ in range(5):
            sampled = snapshot.act_batch(planes, masks)
            assert masks[np.arange(30), sampled].all()
    finally:
        del extractor.forward


def test_sb3_model_file_plays_a_batch(snapshot: Any, tmp_path: Path) -> None:
    from agents.learned.sb3_masking import FastMaskableCategoricalDistribution
    from train.libraries import sb3_maskable_ppo as example

    env = example.make_vec_env("random", seed=0, rings_to_win=3, envs=1)
    model = example.build_model(env, n_steps=32, batch_size=32, channels=4, features=16)
    model.save(tmp_path / "m.zip")
    agent: Any = make_agent(f"sb3:path={tmp_path / 'm.zip'}")
    assert isinstance(agent.model.policy.action_dist, FastMaskableCategoricalDistribution)
    states = positions(12, seed=4)
    planes, masks = batch(states)
    probs = agent.batch_probabilities(planes, masks)
    np.testing.assert_allclose(
        probs, np.stack([agent.legal_probabilities(s) for s in states]), rtol=1e-4, atol=1e-7
    )
    np.testing.assert_array_equal(agent.act_batch(planes, masks), probs.argmax(axis=1))


def test_rllib_module_plays_a_batch_in_one_forward_pass(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib", reason="optional extra: pip install -e '.[rllib]'")
    from train.libraries import rllib_example as example

    env: Any = example.make_env({"rings_to_win": 3})
    module = example.MaskedPolicyModule(
        observation_space=env.observation_space["player_0"],
        action_space=env.action_space["player_0"],
        model_config={"channels": 4, "hidden": 8},
    )
    module.save_to_path(str(tmp_path / "module"))
    agent: Any = make_agent(f"rllib:path={tmp_path / 'module'}")
    states = positions(10, seed=6)
    planes, masks = batch(states)
    probs = agent.batch_probabilities(planes, masks)
    one_by_one = np.stack([agent.legal_probabilities(s) for s in states])
    np.testing.assert_allclose(probs, one_by_one, rtol=1e-4, atol=1e-7)
    assert not probs[masks == 0].any()
    np.testing.assert_array_equal(agent.act_batch(planes, masks), probs.argmax(axis=1))


def test_network_opponent_moves_in_every_game_of_the_vector_env_at_once() -> None:
    from yinsh_env.vector.batch_agents import random_legal
    from yinsh_env.vector.env import YinshVectorEnv

    agent: Any = make_agent("pretrained:sims=0,backend=torch", seed=0)
    env = YinshVectorEnv(num_envs=8, opponent=agent, learner="player_1", illegal_reward=None)
    observations, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    batches = agent.evaluator.batches
    assert batches == 1  # White's first placing in all 8 games: one network call
    for _ in range(20):
        actions = random_legal(observations["action_mask"], rng)
        observations, *_ = env.step(actions)
    # One call per opponent decision round (a row and a ring may follow a move), not per game.
    assert agent.evaluator.batches - batches <= 20 * 3 < 20 * 8


def test_random_agent_decides_from_the_masks_alone_with_its_own_generator() -> None:
    states = positions(20, seed=7)
    _, masks = batch(states)
    first, second = make_agent("random", seed=4), make_agent("random", seed=4)
    actions = first.act_batch(None, masks)  # type: ignore[attr-defined]
    assert first.observes is False and masks[np.arange(20), actions].all()  # type: ignore[attr-defined]
    assert actions.tolist() == second.act_batch(None, masks).tolist()  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="row 0"):
        first.act_batch(None, 0 * masks)  # type: ignore[attr-defined]
