"""sb3-contrib's MaskablePPO trains on the Gymnasium wrapper and plays only legal moves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
torch = pytest.importorskip("torch")

from train import sb3_maskable_ppo as example  # noqa: E402

TINY = ["--n-steps", "64", "--batch-size", "32", "--n-epochs", "1", "--hidden", "32"]


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_short_training_run_learns_and_plays_legal_moves() -> None:
    env = example.make_env("random", seed=0, rings_to_win=1)
    model = example.build_model(env, n_steps=64, batch_size=32, n_epochs=2, hidden=(32,))
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=192)
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before)), "no update happened"

    evaluation = example.evaluate(model, example.make_env("random", seed=1, rings_to_win=1), 3)
    assert evaluation.games == 3 and evaluation.moves > 3 * 3
    assert evaluation.wins + evaluation.draws + evaluation.losses == 3

    # Every action the masked policy picks, sampled or greedy, is legal.
    env = example.make_env("random", seed=2)
    obs, _ = env.reset(seed=2)
    for _ in range(40):
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=False)
        assert mask[int(action)]
        obs, _, terminated, _, _ = env.step(int(action))
        if terminated:
            obs, _ = env.reset()


def test_example_script_runs_and_saves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ppo.zip"
    args = ["--timesteps", "128", "--eval-games", "1", "--rings-to-win", "1", "--save", str(path)]
    result = example.main([*args, *TINY])
    assert path.is_file() and result.games == 1 and result.moves > 0
    out = capsys.readouterr().out
    assert "trained 128 steps" in out and "legal moves" in out

    from sb3_contrib import MaskablePPO

    loaded = MaskablePPO.load(path, device="cpu")
    env = example.make_env("random", rings_to_win=1)
    obs, _ = env.reset(seed=0)
    action, _ = loaded.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)] and np.isscalar(int(action))
