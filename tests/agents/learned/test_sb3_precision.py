"""MaskablePPO's PlanesPolicy: the standard policy's values in fp32; in bf16, rollouts and
updates agree exactly, outputs stay float32, and saved models play in float32."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
torch = pytest.importorskip("torch")

from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.utils import configure_logger  # noqa: E402

from agents.learned import precision  # noqa: E402
from agents.learned.sb3_agent import batch_policy_probabilities, load_maskable_ppo  # noqa: E402
from agents.learned.sb3_models import PlanesPolicy  # noqa: E402
from train.libraries import sb3_maskable_ppo as example  # noqa: E402
from train.libraries.sb3_selfplay import PolicySnapshot  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")

ENVS, STEPS = 4, 16


class _NoCallback(BaseCallback):
    def _on_step(self) -> bool:
        return True


def rolled_out(precision_name: str, seed: int = 0) -> Any:
    """A small model of ``precision_name`` with one rollout collected against random."""
    env = example.make_vec_env("random", seed=seed, rings_to_win=1, envs=ENVS)
    model = example.build_model(
        env, seed=seed, n_steps=STEPS, batch_size=32, channels=4, features=16,
        precision=precision_name,
    )  # fmt: skip
    model._setup_learn(10**6, None)
    model.set_logger(configure_logger(0, None, "", True))
    callback = _NoCallback()
    callback.init_callback(model)
    model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
    return model


def test_precision_names_are_checked_and_auto_follows_the_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match=r"'fp16'.*auto, fp32, bf16"):
        precision.uses_bf16("fp16")
    monkeypatch.setattr(precision, "native_bf16", lambda: True)
    assert precision.uses_bf16("auto") and precision.uses_bf16("bf16")
    assert not precision.uses_bf16("fp32")
    monkeypatch.setattr(precision, "native_bf16", lambda: False)
    assert not precision.uses_bf16("auto") and precision.uses_bf16("bf16")
    with pytest.raises(SystemExit):
        example.main(["--precision", "half"])


def test_fp32_planes_policy_gives_the_standard_policys_values() -> None:
    model = rolled_out("fp32")
    assert type(model.policy) is PlanesPolicy and not model.policy.bf16
    standard = example.MaskablePPO(
        "MultiInputPolicy",
        model.env,
        policy_kwargs={
            "features_extractor_class": example.PlanesCNN,
            "features_extractor_kwargs": {"channels": 4, "features_dim": 16},
            "net_arch": [],
        },
        device="cpu",
    )
    example.use_fast_masking(standard.policy)
    standard.policy.load_state_dict(model.policy.state_dict())
    data = next(model.rollout_buffer.get(ENVS * STEPS))
    actions = data.actions.long().flatten()
    with torch.no_grad():
        ours = model.policy.evaluate_actions(data.observations, actions, data.action_masks)
        theirs = standard.policy.evaluate_actions(data.observations, actions, data.action_masks)
    for a, b in zip(ours, theirs):
        assert a is not None and b is not None
        torch.testing.assert_close(a, b)


def test_bf16_rollouts_and_updates_agree_and_give_float32() -> None:
    model = rolled_out("bf16")
    assert model.policy.bf16
    data = next(model.rollout_buffer.get(ENVS * STEPS))
    with torch.no_grad():
        values, log_prob, entropy = model.policy.evaluate_actions(
            data.observations, data.actions.long().flatten(), data.action_masks
        )
    assert values.dtype == log_prob.dtype == torch.float32
    assert entropy is not None and entropy.dtype == torch.float32
    # The log-probabilities the rollout stored are the ones the update recomputes,
    # whatever the batch: PPO's ratio starts at exactly 1.
    torch.testing.assert_close(log_prob, data.old_log_prob, rtol=0, atol=1e-6)
    torch.testing.assert_close(values.flatten(), data.old_values, rtol=0, atol=1e-6)
    model.train()  # one update runs and leaves finite weights
    assert all(torch.isfinite(p).all() for p in model.policy.parameters())


def test_bf16_probabilities_are_the_fp32_ones_to_bf16_rounding() -> None:
    model = rolled_out("bf16")
    data = next(model.rollout_buffer.get(ENVS * STEPS))
    planes = data.observations["observation"]
    legal = data.action_masks.bool()
    with torch.no_grad():
        rounded = model.policy.legal_probabilities(planes, legal)
        model.policy.bf16 = False
        exact = model.policy.legal_probabilities(planes, legal)
    assert not rounded[~legal].any() and not exact[~legal].any()
    assert float((rounded - exact).abs().max()) < 0.02
    assert not torch.equal(rounded, exact)  # bf16 did run


def test_a_bf16_model_saves_loads_without_pickles_and_plays_in_float32(tmp_path: Path) -> None:
    model = rolled_out("bf16")
    path = tmp_path / "bf16.zip"
    model.save(path)
    loaded = load_maskable_ppo(str(path))
    assert type(loaded.policy) is PlanesPolicy and loaded.policy.precision == "bf16"
    assert not loaded.policy.bf16
    data = next(model.rollout_buffer.get(ENVS * STEPS))
    planes = data.observations["observation"].numpy()
    masks = data.action_masks.numpy()
    model.policy.bf16 = False
    np.testing.assert_allclose(
        batch_policy_probabilities(loaded.policy, planes, masks),
        batch_policy_probabilities(model.policy, planes, masks),
        rtol=1e-5,
        atol=1e-7,
    )


def test_a_precision_other_than_the_known_words_is_refused(tmp_path: Path) -> None:
    model = rolled_out("fp32")
    path = tmp_path / "fp32.zip"
    model.save(path)
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(tampered, "w") as new:
        for name in old.namelist():
            raw = old.read(name)
            if name == "data":
                data = json.loads(raw)
                assert data["policy_kwargs"]["precision"] == "fp32"
                data["policy_kwargs"]["precision"] = "__import__('os')"
                raw = json.dumps(data).encode()
            new.writestr(name, raw)
    with pytest.raises(ValueError, match=r"tampered\.zip.*policy_kwargs"):
        load_maskable_ppo(str(tampered))


def test_snapshots_of_a_bf16_learner_play_in_float32() -> None:
    model = rolled_out("bf16")
    snapshot = PolicySnapshot(model.policy, seed=1)
    assert model.policy.bf16 and not snapshot.policy.bf16


def test_bf16_gradients_point_where_the_fp32_ones_do() -> None:
    model = rolled_out("bf16", seed=3)
    data = next(model.rollout_buffer.get(ENVS * STEPS))

    def gradient(bf16: bool) -> torch.Tensor:
        model.policy.bf16 = bf16
        model.policy.zero_grad()
        values, log_prob, entropy = model.policy.evaluate_actions(
            data.observations, data.actions.long().flatten(), data.action_masks
        )
        assert entropy is not None
        ratio = torch.exp(log_prob - data.old_log_prob)
        value_loss = ((data.returns - values.flatten()) ** 2).mean()
        loss = -(data.advantages * ratio).mean() - 0.01 * entropy.mean() + 0.5 * value_loss
        loss.backward()
        parameters = model.policy.parameters()
        return torch.cat([p.grad.flatten() for p in parameters if p.grad is not None])

    rounded, exact = gradient(True), gradient(False)
    assert float(torch.nn.functional.cosine_similarity(rounded, exact, dim=0)) > 0.99
    assert 0.95 < float(rounded.norm() / exact.norm()) < 1.05
