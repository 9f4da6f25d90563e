"""Replay storage and symmetry augmentation: planes, policy targets and masks agree."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import game_of, random_positions

from train.replay import (
    ACTION_PERMUTATIONS,
    ReplayBuffer,
    make_batch,
    pack_planes,
    unpack_planes,
)
from yinsh_env import N_SYMMETRIES, State
from yinsh_env.envs.observation import decode, encode, transform_planes

positions = random_positions


def test_packing_planes_is_lossless() -> None:
    planes = np.stack([encode(s) for s in positions(200)])
    bits, values = pack_planes(planes)
    assert bits.dtype == np.uint8 and bits.shape == (200, 258)
    assert np.array_equal(unpack_planes(bits, values), planes)


def test_packing_refuses_planes_it_would_corrupt() -> None:
    planes = encode(State())[None].copy()
    planes[0, 5, 5, 4] = 0.5  # a board point worth 0.5 beside the 1s of the board plane
    with pytest.raises(ValueError, match="non-zero values"):
        pack_planes(planes)


def test_symmetries_map_planes_and_actions_consistently() -> None:
    """The position read back from transformed planes has the transformed legal actions."""
    for state in positions(40, seed=1):
        planes = encode(state)
        legal = np.asarray(state.legal_actions())
        for k in range(N_SYMMETRIES):
            image = decode(transform_planes(planes, k))
            assert image.legal_actions() == sorted(ACTION_PERMUTATIONS[k, legal].tolist())
            assert image.to_act == state.to_act and image.phase == state.phase


def test_sampled_batches_carry_targets_through_the_symmetry() -> None:
    states = positions(30, seed=2)
    game = game_of(states)
    # An action for the opponent-policy target that is legal here (so its image must be
    # legal in the image), and one sample whose game ended first.
    game.opponent_actions = np.array([s.legal_actions()[-1] for s in states], dtype=np.int16)
    game.opponent_actions[-1] = -1
    for k in range(N_SYMMETRIES):
        items = [(game, i) for i in range(len(states))]
        batch = make_batch(items, np.full(len(items), k))
        for j, state in enumerate(states):
            assert np.array_equal(batch.planes[j], transform_planes(encode(state), k))
            image = decode(batch.planes[j])
            # The legal mask is exactly the transformed position's legal actions ...
            assert np.flatnonzero(batch.legal[j]).tolist() == image.legal_actions()
            if j < len(states) - 1:
                assert batch.opponent_action[j] in image.legal_actions()
            # ... and each action's target probability moved with it.
            lo, hi = game.policy_offsets[j], game.policy_offsets[j + 1]
            for action, prob in zip(game.policy_actions[lo:hi], game.policy_probs[lo:hi]):
                assert batch.policy[j, ACTION_PERMUTATIONS[k, action]] == prob
            assert batch.policy[j].sum() == pytest.approx(1.0, abs=1e-5)
            sign = 1.0 if state.to_act == 0 else -1.0
            assert batch.value[j] == sign  # White won this game
            assert batch.margin[j] == pytest.approx(sign * 2 / 3)
            ownership = transform_planes(
                (game.final_markers[state.to_act] - game.final_markers[1 - state.to_act])[
                    ..., None
                ].astype(np.float32),
                k,
            )[..., 0]
            assert np.array_equal(batch.ownership[j], ownership)
        assert batch.opponent_action[-1] == -1


def test_the_window_drops_old_games_and_sampling_is_reproducible() -> None:
    buffer = ReplayBuffer(window=50)
    games = [game_of(positions(20, seed=s), seed=s) for s in range(5)]
    for game in games:
        buffer.add(game)
    assert buffer.games_added == 5
    assert 50 <= len(buffer) < 70 and list(buffer.games) == games[-len(buffer.games) :]
    a = buffer.sample(64, np.random.default_rng(7))
    b = buffer.sample(64, np.random.default_rng(7))
    assert np.array_equal(a.planes, b.planes) and np.array_equal(a.policy, b.policy)
    assert len(set(a.symmetries.tolist())) > 1
    restored = ReplayBuffer(window=50)
    restored.load_state_dict(buffer.state_dict())
    c = restored.sample(64, np.random.default_rng(7))
    assert np.array_equal(a.planes, c.planes) and np.array_equal(a.value, c.value)
    # A window saved before games kept their search values still loads.
    state = buffer.state_dict()
    for game in state["games"]:
        del game["search_values"]
    restored.load_state_dict(state)
    assert not restored.sample(8, np.random.default_rng(7)).search_value_mask.any()


def test_sampling_an_empty_buffer_is_an_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(10).sample(4, np.random.default_rng(0))
