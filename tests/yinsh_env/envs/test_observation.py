"""Observation planes: exact round trip, points of view, symmetries for augmentation."""

from __future__ import annotations

import random

import numpy as np
import pytest

from yinsh_env import ACTION_SYMMETRIES, N_ACTIONS, N_SYMMETRIES, SYMMETRIES, PositionError, State
from yinsh_env.engine.geometry import POINTS
from yinsh_env.envs.aec_env import raw_env
from yinsh_env.envs.observation import (
    BOARD_PLANE,
    N_PLANES,
    OBS_SHAPE,
    decode,
    encode,
    transform_actions,
    transform_observation,
    transform_planes,
    transform_state,
)


def sample_states(games: int, seed: int, every: int = 1) -> list[State]:
    """Positions from seeded random games, every phase included (terminal ones too)."""
    rng = random.Random(seed)
    states = []
    for _ in range(games):
        state = State(rings_to_win=rng.choice((1, 3)))
        while True:
            if state.ply % every == 0 or state.phase >= 2:
                states.append(state.copy())
            if state.is_terminal:
                break
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
    return states


STATES = sample_states(games=12, seed=1, every=3)


def test_states_cover_every_phase() -> None:
    assert {s.phase for s in STATES} == {0, 1, 2, 3, 4}
    assert any(s.phase == 2 and s.mover != s.to_act for s in STATES)  # opponent's rows


def test_encode_shape_range_and_board_plane() -> None:
    for state in STATES:
        planes = encode(state)
        assert planes.shape == OBS_SHAPE == (11, 11, N_PLANES) and planes.dtype == np.float32
        assert planes.min() >= 0.0 and planes.max() <= 1.0
        assert np.array_equal(planes[:, :, 4], BOARD_PLANE)
        off_board = BOARD_PLANE == 0
        assert not planes[off_board][:, [0, 1, 2, 3, 9]].any()


def test_piece_planes_match_the_position() -> None:
    for state in STATES[::7]:
        planes = encode(state)
        for p, (c, n) in enumerate(POINTS):
            piece = state.piece_at(p)
            expected = [0.0] * 4
            if piece is not None:
                kind = 0 if piece in "Rr" else 2  # rings planes 0-1, markers 2-3
                owner = 0 if piece.isupper() else 1
                expected[kind + (owner != state.to_act)] = 1.0
            assert planes[n - 1, c, :4].tolist() == expected, (state, p)


def test_decode_is_exact_for_the_player_to_act() -> None:
    for state in STATES:
        if state.is_terminal:
            with pytest.raises(PositionError):
                decode(encode(state))
            continue
        back = decode(encode(state))
        assert back == state and back.key() == state.key()
        assert back.legal_actions() == state.legal_actions()


def test_decode_rejects_malformed_arrays() -> None:
    with pytest.raises(PositionError, match="shape"):
        decode(np.zeros((11, 11, 3), np.float32))
    with pytest.raises(PositionError):
        decode(np.zeros(OBS_SHAPE, np.float32))


def test_candidate_rows_and_mover_planes() -> None:
    for state in STATES:
        planes = encode(state)
        if state.phase == 2:
            rows = state.pending_rows()
            assert rows and planes[:, :, 9].sum() >= 5
        else:
            assert not planes[:, :, 9].any()
        assert planes[0, 0, 10] == float(state.phase in (2, 3) and state.mover == state.to_act)


def test_other_players_view_swaps_sides() -> None:
    for state in STATES:
        me, other = encode(state), encode(state, 1 - state.to_act)
        assert np.array_equal(me[:, :, [0, 2]], other[:, :, [1, 3]])
        assert np.array_equal(me[:, :, [1, 3]], other[:, :, [0, 2]])
        assert np.array_equal(me[:, :, [11, 12]], other[:, :, [12, 11]])
        assert me[0, 0, 16] + other[0, 0, 16] == 1.0
        assert np.array_equal(me[:, :, 9], other[:, :, 9])  # rows of the player to act
        assert np.array_equal(encode(state, state.to_act), me)


# --- symmetries -----------------------------------------------------------------------


def test_transform_state_then_observe_equals_observe_then_transform() -> None:
    for state in STATES[::2]:
        planes, mask = encode(state), state.legal_mask()
        for k in range(N_SYMMETRIES):
            image = transform_state(state, k)
            assert np.array_equal(encode(image), transform_planes(planes, k))
            assert np.array_equal(image.legal_mask(), transform_actions(mask, k))


def test_symmetries_map_legal_actions_through_action_symmetries() -> None:
    state = STATES[60]
    for k in range(N_SYMMETRIES):
        image = transform_state(state, k)
        expected = sorted(ACTION_SYMMETRIES[k][a] for a in state.legal_actions())
        assert image.legal_actions() == expected
        for p in range(85):
            assert image.piece_at(SYMMETRIES[k][p]) == state.piece_at(p)


def test_transform_actions_moves_values_with_their_actions() -> None:
    values = np.arange(N_ACTIONS, dtype=np.float32)
    batch = np.stack([values, values * 2])
    for k in range(N_SYMMETRIES):
        out = transform_actions(values, k)
        for a in (0, 100, 1933, 2100, 2141):
            assert out[ACTION_SYMMETRIES[k][a]] == values[a]
        assert np.array_equal(transform_actions(batch, k)[1], out * 2)
    assert np.array_equal(transform_actions(values, 0), values)


def test_transform_planes_works_on_batches_and_composes() -> None:
    batch = np.stack([encode(s) for s in STATES[:8]])
    for k in range(N_SYMMETRIES):
        out = transform_planes(batch, k)
        for i in range(len(batch)):
            assert np.array_equal(out[i], transform_planes(batch[i], k))
    # Symmetries form a group: some power of each returns the identity.
    planes = encode(STATES[50])
    for k in range(N_SYMMETRIES):
        current = planes
        for _ in range(6):
            current = transform_planes(current, k)
            if np.array_equal(current, planes):
                break
        else:
            pytest.fail(f"symmetry {k} has no order up to 6")


def test_environment_observations_transform_consistently() -> None:
    e = raw_env()
    for state in STATES[5:60:9]:
        if state.is_terminal:
            continue
        e.reset(options={"state": state})
        obs = e.observe(e.agent_selection)
        for k in (1, 5, 9):
            e.reset(options={"state": transform_state(state, k)})
            image = e.observe(e.agent_selection)
            expected = transform_observation(obs, k)
            assert np.array_equal(image["observation"], expected["observation"])
            assert np.array_equal(image["action_mask"], expected["action_mask"])


def test_transform_state_rejects_bad_index() -> None:
    with pytest.raises(ValueError, match="symmetry"):
        transform_state(State(), N_SYMMETRIES)
