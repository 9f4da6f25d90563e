"""Progress of library training runs: lines at an interval, TensorBoard scalars, a bar."""

from __future__ import annotations

import importlib
import io
from pathlib import Path

import pytest

from train.libraries.progress import RunProgress, run_log_dir


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def scalars(log_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """The TensorBoard scalars written under ``log_dir``: tag -> [(step, value)]."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(log_dir))
    events.Reload()
    return {
        tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]
    }


def test_a_line_when_the_interval_has_passed_with_returns_and_extras(tmp_path: Path) -> None:
    clock, out = FakeClock(), io.StringIO()
    progress = RunProgress(1000, every=30, log_dir=tmp_path / "tb", stream=out, clock=clock)
    assert progress.bar is None  # not a terminal
    progress.episode(1.0)
    progress.episode(-0.5)
    assert progress.update(100) is None  # not due yet: nothing written
    clock.now += 30
    line = progress.update(200, lambda: {"vs greedy": 0.25, "stage": "random"})
    assert line == (
        "step 200 | 30s | 7 steps/s | return +0.25 (2 episodes) | vs greedy 0.25 | stage random"
    )
    assert out.getvalue() == line + "\n"
    clock.now += 10
    assert progress.update(300) is None
    forced = progress.update(400, force=True)  # returns since the last line only: none
    assert forced is not None and "return" not in forced and forced.startswith("step 400 | 40s")
    progress.scalar("final/score", 0.5, 400)
    progress.close()
    written = scalars(tmp_path / "tb")
    assert written["progress/episode_return"] == [(200, 0.25)]
    assert written["progress/vs greedy"] == [(200, 0.25)]
    assert [step for step, _ in written["progress/steps_per_second"]] == [200, 400]
    assert written["final/score"] == [(400, 0.5)]


def test_every_zero_writes_a_line_at_every_update() -> None:
    out = io.StringIO()
    progress = RunProgress(every=0, stream=out)
    for steps in (1, 2, 3):
        progress.update(steps)
    assert [line.split(" |")[0] for line in out.getvalue().splitlines()] == [
        "step 1",
        "step 2",
        "step 3",
    ]
    with pytest.raises(ValueError, match="every"):
        RunProgress(every=-1)


def test_the_bar_counts_steps_and_lines_go_above_it() -> None:
    out = io.StringIO()
    progress = RunProgress(50, every=0, bar=True, stream=out)
    progress.update(20)
    progress.update(50)
    assert progress.bar.n == 50 and progress.bar.total == 50
    progress.close()
    text = out.getvalue()
    assert "step 20 |" in text and "step 50 |" in text and "50/50" in text


def test_run_log_dir_names_one_folder_per_run(tmp_path: Path) -> None:
    folder = run_log_dir(tmp_path, "sb3")
    assert folder.parent == tmp_path and folder.name.startswith("sb3-")


def test_a_short_sb3_run_prints_progress_lines_and_writes_scalars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
    from train.libraries import sb3_maskable_ppo as example

    args = ["--opponent", "random", "--timesteps", "96", "--eval-games", "2"]
    args += ["--n-steps", "16", "--envs", "2", "--batch-size", "32", "--n-epochs", "1"]
    args += ["--channels", "4", "--features", "16", "--rings-to-win", "1"]
    args += ["--progress-every", "0", "--eval-every", "32", "--eval-every-games", "2"]
    args += ["--tensorboard", str(tmp_path)]
    example.main(args)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(lines) >= 10 and lines[-1].startswith("step 96 |"), out
    assert all("steps/s" in line for line in lines)
    assert any("return" in line for line in lines)
    assert any("| vs random" in line and "(2 games)" in line for line in lines)
    (run,) = tmp_path.iterdir()
    written = scalars(run)
    assert "progress/steps_per_second" in written and "check/random" in written
    assert any(p.is_dir() for p in run.iterdir())  # SB3's own scalars (losses) beside them


#: Every library trainer's command line, its TensorBoard option, the extra it needs.
TRAINERS = [
    ("ppo", "--logdir", "torch.utils.tensorboard"),
    ("sb3_maskable_ppo", "--tensorboard", "sb3_contrib"),
    ("rllib_example", "--tensorboard", "ray.rllib"),
]


@pytest.mark.parametrize(("module", "option", "extra"), TRAINERS)
@pytest.mark.parametrize("where", ["/dev/null", "a file"])
def test_every_library_trainer_refuses_a_log_folder_that_is_a_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    module: str,
    option: str,
    extra: str,
    where: str,
) -> None:
    pytest.importorskip(extra, reason=f"optional extra ({extra})")
    trainer = importlib.import_module(f"train.libraries.{module}")
    path = where if where == "/dev/null" else str(tmp_path / "notes.txt")
    if where == "a file":
        Path(path).write_text("notes\n")
    with pytest.raises(SystemExit) as refused:
        trainer.main([option, path])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"python -m train.libraries.{module}: error: argument {option}: "
        f"{path!r} is a file, not a folder"
    )
    assert "Traceback" not in err


def test_ppos_default_log_folder_beside_save_is_checked_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch.utils.tensorboard")
    from train.libraries import ppo

    (tmp_path / "policy-tb").write_text("not a folder\n")
    with pytest.raises(SystemExit) as refused:
        ppo.main(["--save", str(tmp_path / "policy.pt")])
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m train.libraries.ppo: error: argument --logdir: "
        f"{str(tmp_path / 'policy-tb')!r} is a file, not a folder"
    )
