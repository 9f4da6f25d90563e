"""MaskablePPO's faster pieces: the bool-mask rollout buffer (its masks packed once) and the
fused Adam, the same values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
torch = pytest.importorskip("torch")

from sb3_contrib.common.maskable.buffers import MaskableDictRolloutBuffer  # noqa: E402

from agents.learned.sb3_masking import _legal_slots  # noqa: E402
from train.libraries import sb3_maskable_ppo as example  # noqa: E402
from train.libraries.sb3_fast import BoolMaskDictRolloutBuffer, fused_adam  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")

STEPS, ENVS = 8, 4


def filled(kind: type, env: Any, seed: int) -> Any:
    """A buffer of ``kind`` holding the same random rollout for the same ``seed``."""
    buffer = kind(
        STEPS,
        env.observation_space,
        env.action_space,
        "cpu",
        gae_lambda=0.95,
        gamma=0.99,
        n_envs=ENVS,
    )
    rng = np.random.default_rng(seed)
    for _ in range(STEPS):
        masks = rng.random((ENVS, 2142)) < 0.05
        masks[:, 0] = True
        buffer.add(
            {
                "observation": rng.random((ENVS, 11, 11, 17), dtype=np.float32),
                "action_mask": masks.astype(np.int8),
            },
            np.array([rng.choice(np.flatnonzero(row)) for row in masks]),
            rng.normal(size=ENVS).astype(np.float32),
            (rng.random(ENVS) < 0.2).astype(np.float32),
            torch.as_tensor(rng.normal(size=ENVS), dtype=torch.float32),
            torch.as_tensor(rng.normal(size=ENVS), dtype=torch.float32),
            action_masks=masks,
        )
    buffer.compute_returns_and_advantage(
        torch.as_tensor(rng.normal(size=ENVS), dtype=torch.float32), np.zeros(ENVS, bool)
    )
    return buffer


def test_bool_mask_buffer_gives_sb3_contribs_minibatches_and_the_same_log_probs() -> None:
    env = example.make_vec_env("random", seed=0, rings_to_win=1, envs=ENVS)
    model = example.build_model(env, n_steps=STEPS, batch_size=16, channels=4, features=16)
    assert isinstance(model.rollout_buffer, BoolMaskDictRolloutBuffer)
    original = filled(MaskableDictRolloutBuffer, env, seed=5)
    fast = filled(BoolMaskDictRolloutBuffer, env, seed=5)
    assert fast.action_masks.dtype == np.bool_ and original.action_masks.dtype == np.float32
    np.testing.assert_array_equal(fast.advantages, original.advantages)
    np.testing.assert_array_equal(fast.returns, original.returns)
    np.random.seed(3)
    expected = list(original.get(16))
    np.random.seed(3)
    got = list(fast.get(16))
    assert len(got) == len(expected) == STEPS * ENVS // 16
    for ours, theirs in zip(got, expected):
        for key in ("observation", "action_mask"):
            torch.testing.assert_close(ours.observations[key], theirs.observations[key])
        for name in ("actions", "old_values", "old_log_prob", "advantages", "returns"):
            torch.testing.assert_close(getattr(ours, name), getattr(theirs, name))
        assert ours.action_masks.dtype == torch.bool
        torch.testing.assert_close(ours.action_masks.float(), theirs.action_masks)
        packed = _legal_slots(ours.action_masks)  # what the distribution would find itself
        assert packed is not None
        for carried, found in zip(ours.action_masks.legal_slots, packed):
            torch.testing.assert_close(carried, found)
        with torch.no_grad():  # the policy reads either kind of mask alike
            values = [
                model.policy.evaluate_actions(
                    sample.observations, sample.actions.long().flatten(), sample.action_masks
                )
                for sample in (ours, theirs)
            ]
        for mine, other in zip(*values):
            torch.testing.assert_close(mine, other)


def test_fused_adam_takes_the_same_steps() -> None:
    torch.manual_seed(0)
    nets = [torch.nn.Linear(30, 5) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())

    class Policy:
        def __init__(self, net: torch.nn.Module) -> None:
            self.net = net
            self.optimizer: Any = torch.optim.Adam(net.parameters(), lr=1e-2, eps=1e-5)

        def parameters(self) -> Any:
            return self.net.parameters()

    plain, fused = Policy(nets[0]), fused_adam(Policy(nets[1]))
    if not fused.optimizer.defaults.get("fused"):
        pytest.skip("this torch has no fused Adam for the CPU")
    assert fused.optimizer.defaults["eps"] == 1e-5 and fused.optimizer.defaults["lr"] == 1e-2
    inputs = torch.randn(64, 30)
    for _ in range(5):
        for policy in (plain, fused):
            policy.optimizer.zero_grad()
            policy.net(inputs).pow(2).sum().backward()
            policy.optimizer.step()
    for mine, other in zip(nets[1].parameters(), nets[0].parameters()):
        torch.testing.assert_close(mine, other)
    assert fused_adam(fused) is fused  # an optimizer with state is left as it is
    assert fused.optimizer.state


def test_build_model_uses_the_fused_adam_where_torch_has_it() -> None:
    env = example.make_vec_env("random", seed=0, rings_to_win=1, envs=2)
    model = example.build_model(env, n_steps=8, batch_size=16, channels=4, features=16)
    optimizer = model.policy.optimizer
    assert type(optimizer) is torch.optim.Adam
    assert optimizer.defaults["lr"] == model.learning_rate
    assert [p.data_ptr() for p in optimizer.param_groups[0]["params"]] == [
        p.data_ptr() for p in model.policy.parameters()
    ]
