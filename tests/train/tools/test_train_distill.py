"""A supervised start from search games (train.tools.distill): the games, the fit, the files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import game_of, random_positions

from agents.spec import make_agent
from train.replay import ReplayBuffer
from train.run_checkpoint import CheckpointError, atomic_save, latest_checkpoint, load_model
from train.tools.distill import (
    GAMES_KIND,
    held_out_batches,
    main,
    measure,
    read_games,
    split_games,
    student_from,
)
from yinsh_env.engine.state import State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def games_file(tiny_run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("distill") / "games.pt"
    teacher = ["--teacher", str(tiny_run_dir), "--sims", "3", "--chunk", "2", "--seed", "5"]
    assert main(["generate", *teacher, "--games", "3", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_generate_plays_every_move_as_a_full_search_and_appends_on_a_second_run(
    games_file: Path, tiny_run_dir: Path, tmp_path: Path
) -> None:
    buffer, made_by = read_games(games_file)
    assert len(buffer.games) == 3 and buffer.games_added == 3
    assert made_by == {"teacher": str(tiny_run_dir), "sims": 3, "seed": 5}
    for game in buffer.games:
        # Every position with a choice was searched (full_search_prob 1): its value is known.
        choices = np.diff(game.policy_offsets) > 1
        assert game.search_values is not None and choices.any()
        assert np.isfinite(game.search_values[choices]).all()
    copy = tmp_path / "games.pt"
    copy.write_bytes(games_file.read_bytes())
    teacher = ["--teacher", str(tiny_run_dir), "--sims", "3", "--chunk", "2", "--seed", "5"]
    assert main(["generate", *teacher, "--games", "5", "--out", str(copy)]) == 0
    more, _ = read_games(copy)
    assert more.games_added == 5 and len(more.games) == 5
    for old, new in zip(buffer.games, list(more.games)[:3]):  # the first three untouched
        np.testing.assert_array_equal(old.policy_probs, new.policy_probs)


def test_generate_refuses_to_mix_other_settings_into_a_file(
    games_file: Path, tiny_run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = games_file.read_bytes()
    args = ["generate", "--teacher", str(tiny_run_dir), "--sims", "4", "--seed", "5"]
    assert main([*args, "--games", "4", "--out", str(games_file)]) == 2
    err = capsys.readouterr().err
    assert str(games_file) in err and "other settings" in err
    other_teacher = ["generate", "--teacher", "pretrained", "--sims", "3", "--seed", "5"]
    assert main([*other_teacher, "--games", "4", "--out", str(games_file)]) == 2
    assert "other settings" in capsys.readouterr().err
    assert games_file.read_bytes() == before


def test_measure_is_zero_kl_and_full_agreement_against_the_networks_own_policy(
    tiny_run_dir: Path,
) -> None:
    model, _, _ = load_model(tiny_run_dir)
    model.eval()
    buffer = ReplayBuffer(10**6)
    for g in range(3):
        buffer.add(game_of(random_positions(5, seed=g), seed=g))
    batches = held_out_batches(buffer, size=4)
    assert sum(len(b.value) for b in batches) == len(buffer)
    with torch.no_grad():
        for batch in batches:  # the targets become the network's own policy
            legal = torch.from_numpy(batch.legal)
            logits = model(torch.from_numpy(batch.planes), legal).policy
            own = torch.softmax(logits.masked_fill(~legal, -torch.inf), 1)
            batch.policy[:] = own.numpy()
    fit = measure(model, batches)
    assert fit.policy_kl == pytest.approx(0.0, abs=1e-5)
    assert fit.top1 == 1.0 and fit.policy > 0


def test_a_grown_student_starts_with_the_teachers_outputs(tiny_run_dir: Path) -> None:
    model, config, _ = load_model(tiny_run_dir)
    bigger = config.network.__class__(
        **{**config.network.__dict__, "blocks": config.network.blocks + 1, "channels": 16}
    )
    student = student_from(model, config.network, bigger)
    assert sum(p.numel() for p in student.parameters()) > sum(p.numel() for p in model.parameters())
    buffer = ReplayBuffer(10**6)
    buffer.add(game_of(random_positions(6, seed=1), seed=1))
    batches = held_out_batches(buffer)
    teacher_fit, student_fit = measure(model, batches), measure(student, batches)
    assert student_fit.policy == pytest.approx(teacher_fit.policy, rel=1e-4)
    assert student_fit.value == pytest.approx(teacher_fit.value, rel=1e-4, abs=1e-6)
    smaller = config.network.__class__(**{**config.network.__dict__, "channels": 4})
    with pytest.raises(ValueError, match="cannot grow"):
        student_from(model, config.network, smaller)


def test_fit_saves_a_student_that_plays_and_says_how_it_was_made(
    games_file: Path, tiny_run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "student.pt"
    args = ["fit", "--data", str(games_file), "--teacher", str(tiny_run_dir)]
    size = ["--blocks", "2", "--channels", "12", "--steps", "4", "--report", "2"]
    assert main([*args, *size, "--batch-size", "8", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "teacher held-out" in printed and "step 4: held-out" in printed
    _, config, data = load_model(out)
    assert (config.network.blocks, config.network.channels) == (2, 12)
    made = data["metadata"]["distilled"]
    assert made["steps"] == 4 and made["sims"] == 3 and 0 <= made["held_out"]["top1"] <= 1
    assert made["search_value_weight"] == 0.5 and config.optim.search_value_weight == 0.5
    agent = make_agent(f"net:path={out},sims=0")
    state = State()
    assert agent.act(state) in state.legal_actions()


def test_games_files_that_are_not_games_are_refused_by_name(
    tiny_run_dir: Path, tmp_path: Path
) -> None:
    checkpoint = latest_checkpoint(tiny_run_dir)
    assert checkpoint is not None
    with pytest.raises(CheckpointError, match="holds no games"):
        read_games(checkpoint)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a file of games")
    with pytest.raises(CheckpointError, match=r"garbage\.pt"):
        read_games(garbage)
    broken = tmp_path / "broken.pt"
    atomic_save({"format": "yinsh-train-checkpoint", "version": 1, "kind": GAMES_KIND}, broken)
    with pytest.raises(CheckpointError, match=r"broken\.pt holds no readable games"):
        read_games(broken)


def test_too_few_games_to_hold_any_out_is_an_error() -> None:
    buffer = ReplayBuffer(10**6)
    buffer.add(game_of(random_positions(4, seed=0), seed=0))
    with pytest.raises(ValueError, match="1 games are too few"):
        split_games(buffer, 0.1)


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "--games", "0", "--out", "x.pt"],
        ["generate", "--games", "2", "--sims", "-1", "--out", "x.pt"],
        ["fit", "--data", "missing.pt", "--out", "x.pt"],
        ["fit", "--data", "missing.pt", "--lr", "nan", "--out", "x.pt"],
    ],
)
def test_bad_arguments_exit_with_a_usage_error(args: list[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    assert not (tmp_path / "x.pt").exists()
