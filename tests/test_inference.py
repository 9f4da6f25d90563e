"""The network evaluators: ONNX Runtime answers leaves as PyTorch does."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.search import network_leaf
from train.config import NetworkConfig
from train.inference import NetworkEvaluator
from train.network import PolicyValueNet
from yinsh_env import State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def tiny_model(seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    return PolicyValueNet(NetworkConfig(blocks=1, channels=8, value_hidden=8)).eval()


def game_positions(count: int, seed: int = 0) -> list[State]:
    """Positions of a seeded random game, placements and ring moves."""
    rng = np.random.default_rng(seed)
    state, positions = State(), []
    while len(positions) < count and not state.is_terminal:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
        positions.append(state.copy())
    return positions


def test_the_onnx_evaluator_answers_leaves_as_the_torch_evaluator() -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    from train.onnx_inference import OnnxEvaluator

    model = tiny_model()
    leaves = [network_leaf(s) for s in game_positions(30)[8::3]]
    reference = NetworkEvaluator(model, torch.device("cpu"))
    fast = OnnxEvaluator(model)
    for batch in ([leaves[0]], leaves):  # one leaf (a view, no stacking) and a batch
        logits, values = fast(batch)
        ref_logits, ref_values = reference(batch)
        assert values.shape == (len(batch),)
        np.testing.assert_allclose(values, ref_values, atol=1e-5)
        for leaf, got, want in zip(batch, logits, ref_logits):
            assert got.shape == leaf.actions.shape
            np.testing.assert_allclose(got, want, atol=1e-5)
    assert fast.positions == 1 + len(leaves) and fast.batches == 2
