"""sb3-contrib's MaskablePPO trains on the Gymnasium wrapper and plays only legal moves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
torch = pytest.importorskip("torch")

from train.libraries import sb3_maskable_ppo as example  # noqa: E402

TINY = ["--n-steps", "32", "--envs", "2", "--batch-size", "32", "--n-epochs", "1"]
TINY += ["--no-tensorboard", "--channels", "4", "--features", "16"]


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_short_training_run_learns_and_plays_legal_moves() -> None:
    env = example.make_env("random", seed=0, rings_to_win=1)
    model = example.build_model(env, n_steps=64, batch_size=32, n_epochs=2, channels=4, features=16)
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
    path = tmp_path / "runs" / "sb3" / "ppo.zip"  # folders made when the model is saved
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

    # The zip says which variant it was trained for; the arena refuses another.
    from agents import make_agent
    from agents.evaluation.arena import MatchSettings, run_arena
    from agents.evaluation.match import VariantMismatchError

    assert make_agent(f"sb3:path={path}").rings_to_win == 1
    with pytest.raises(VariantMismatchError):
        run_arena([f"sb3:path={path}", "random"], 1, MatchSettings(rings_to_win=3), progress=False)


def test_cpu_minutes_stop_training_once_the_process_has_used_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The process has used more than 0.001 CPU-minutes before training starts: the
    # first step stops it, far short of --timesteps.
    args = ["--timesteps", "1000000", "--cpu-minutes", "0.001", "--eval-games", "1"]
    example.main([*args, "--rings-to-win", "1", *TINY])
    steps = int(capsys.readouterr().out.split("trained ", 1)[1].split(" steps", 1)[0])
    assert 0 < steps <= 2  # one step of each of the two games
    assert example.CpuTimeLimit(1e9)._on_step()


def test_variant_records_are_checked_and_optional(tiny_model: Path, tmp_path: Path) -> None:
    import shutil
    import zipfile

    from agents.learned.library_agent import VARIANT_FILE, load_variant, save_variant

    assert load_variant(tiny_model) is None  # saved by SB3 alone: plays any variant
    marked = tmp_path / "marked.zip"
    shutil.copy(tiny_model, marked)
    save_variant(marked, 1)
    assert load_variant(marked) == 1
    from agents import make_agent

    assert make_agent(f"sb3:path={marked}").rings_to_win == 1  # SB3 still loads the zip
    bad = tmp_path / "bad.zip"
    shutil.copy(tiny_model, bad)
    with zipfile.ZipFile(bad, "a") as archive:
        archive.writestr(VARIANT_FILE, '{"rings_to_win": 9}')
    with pytest.raises(ValueError, match=r"bad\.zip.*1\.\.5"):
        load_variant(bad)
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / VARIANT_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not a variant record"):
        load_variant(tmp_path / "dir")


def test_default_model_file_is_small(tmp_path: Path) -> None:
    # The CNN features extractor keeps the file (weights plus Adam's state) small;
    # SB3's default flattening extractor made it 34 MB.
    model = example.build_model(example.make_vec_env("random", envs=2))
    assert model.policy.features_extractor.__class__ is example.PlanesCNN
    path = tmp_path / "default.zip"
    model.save(path)
    weights = sum(p.numel() for p in model.policy.parameters())
    assert weights < 600_000 and path.stat().st_size < 8_000_000


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MaskablePPO model trained for a few steps, saved once for the module's tests."""
    torch.set_num_threads(1)
    env = example.make_vec_env("random", seed=0, rings_to_win=1, envs=2)
    model = example.build_model(env, n_steps=32, batch_size=32, n_epochs=1, channels=4, features=16)
    model.learn(total_timesteps=64)
    path = tmp_path_factory.mktemp("sb3") / "tiny.zip"
    model.save(path)
    return path


def test_sb3_spec_plays_legal_games_through_the_arena(tiny_model: Path, tmp_path: Path) -> None:
    from agents.evaluation.arena import MatchSettings, run_arena
    from yinsh_env import load_record

    specs = [f"sb3:path={tiny_model}", f"sb3:path={tiny_model},greedy=false", "random"]
    result = run_arena(
        specs, 2, MatchSettings(workers=1, rings_to_win=1), progress=False, records_dir=tmp_path
    )
    assert [p.games for p in result.pairings] == [2, 2, 2]
    assert all(p.a_forfeits == p.b_forfeits == 0 for p in result.pairings)
    records = sorted(tmp_path.glob("*.yinsh"))
    assert len(records) == 6
    for path in records:
        assert load_record(path).replay().is_terminal  # every move legal, to the end


def test_sb3_agent_is_seeded_and_follows_the_policy(tiny_model: Path) -> None:
    from agents import make_agent
    from yinsh_env import State

    state = State().apply_all(["E5", "F6", "G7"])
    greedy = make_agent(f"sb3:path={tiny_model}")
    choices = {greedy.act(state) for _ in range(3)}
    assert len(choices) == 1 and choices <= set(state.legal_actions())
    sampler = make_agent(f"sb3:path={tiny_model},greedy=false", seed=3)
    first = [sampler.act(state) for _ in range(8)]
    sampler.reset(seed=3)
    assert [sampler.act(state) for _ in range(8)] == first
    assert set(first) <= set(state.legal_actions()) and len(set(first)) > 1


def test_sb3_spec_names_a_missing_or_corrupt_model(tmp_path: Path) -> None:
    from agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match=r"nowhere\.zip' not found"):
        make_agent(f"sb3:path={tmp_path / 'nowhere.zip'}")
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"PK\x03\x04 not really a model")
    with pytest.raises(AgentSpecError, match=r"cannot load SB3 model .*corrupt\.zip"):
        make_agent(f"sb3:path={corrupt}")
    assert corrupt.read_bytes() == b"PK\x03\x04 not really a model"  # left intact


def test_sb3_model_with_nan_weights_is_refused_naming_the_tensor(
    tiny_model: Path, tmp_path: Path
) -> None:
    from sb3_contrib import MaskablePPO

    from agents import AgentSpecError, make_agent

    model = MaskablePPO.load(tiny_model, device="cpu")
    name, weights = next(iter(model.policy.state_dict().items()))
    with torch.no_grad():
        weights.view(-1)[0] = float("nan")
    diverged = tmp_path / "diverged.zip"
    model.save(diverged)
    with pytest.raises(AgentSpecError, match=rf"diverged\.zip.*{name}.*NaN or infinite"):
        make_agent(f"sb3:path={diverged}")


def test_predict_outputs_step_both_environments_as_written(tiny_model: Path) -> None:
    """``model.predict(obs, action_masks=...)`` then ``env.step(action)``: no cast anywhere."""
    from sb3_contrib import MaskablePPO

    from yinsh_env import env as make_aec_env

    model = MaskablePPO.load(tiny_model, device="cpu")
    env = example.make_env("random", seed=4, rings_to_win=1)  # illegal moves raise here
    obs, _ = env.reset(seed=4)
    for deterministic in [True, False] * 15:
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=deterministic)
        assert isinstance(action, np.ndarray) and action.shape == ()  # the exact output
        obs, reward, terminated, truncated, info = env.step(action)
        assert reward in (-1.0, 0.0, 1.0) and info["opponent_actions"] is not None
        if terminated or truncated:
            obs, _ = env.reset()

    aec = make_aec_env(rings_to_win=1)
    aec.reset(seed=4)
    for _ in aec.agent_iter(max_iter=2000):  # both sides played by the policy, to the end
        obs, _, termination, truncation, _ = aec.last()
        chosen = None
        if not (termination or truncation):
            chosen, _ = model.predict(obs, action_masks=obs["action_mask"])
        aec.step(chosen)
    game = aec.unwrapped.game
    assert game.is_terminal and len(game.actions) > 10  # ended by the rules, not a forfeit
