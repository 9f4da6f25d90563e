"""A run's TensorBoard scalars become the small CSV the studies keep."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tensorboard", reason="optional extra: pip install -e '.[sb3]'")

from torch.utils.tensorboard import SummaryWriter

from train.tools.scalars import main, read_scalars, scalars_csv


def write_run(folder: Path) -> None:
    writer = SummaryWriter(str(folder / "sub"))  # SB3 nests its own folder: read below too
    for step, value in ((2048, 0.0), (4096, 0.25), (6144, 0.5)):
        writer.add_scalar("check/greedy", value, step, walltime=1000.0 + step / 1024)
    writer.add_scalar("score/greedy", 0.125, 4096, walltime=1003.0)
    writer.close()


def test_the_chosen_tags_become_one_row_per_step(tmp_path: Path) -> None:
    write_run(tmp_path / "tb")
    out = tmp_path / "curves" / "run.csv"
    assert main([str(tmp_path / "tb"), "check/greedy", "score/greedy", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines == [
        "step,seconds,check/greedy,score/greedy",
        "2048,0,0,",
        "4096,2,0.25,0.125",
        "6144,4,0.5,",
    ]


def test_missing_events_or_tags_are_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="no TensorBoard event files"):
        read_scalars(tmp_path, ["check/greedy"])
    write_run(tmp_path / "tb")
    out = tmp_path / "run.csv"
    with pytest.raises(SystemExit):
        main([str(tmp_path / "tb"), "check/greedy", "check/nobody", "--out", str(out)])
    assert "no scalars tagged check/nobody" in capsys.readouterr().err
    assert not out.exists()
    assert scalars_csv(read_scalars(tmp_path / "tb", ["score/greedy"])).count("\n") == 2
