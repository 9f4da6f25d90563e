"""benchmarks.bench_learner: float and bfloat16 learners take the same steps, scored alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import replay_file

from agents.network.pretrained import weights_path
from benchmarks import bench_learner
from train.run_checkpoint import load_model

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def table(text: str) -> dict[str, list[float]]:
    """Each printed row's numbers, by its name."""
    rows = {}
    for line in text.splitlines():
        for name in ("start", *bench_learner.PRECISIONS):
            if line.startswith(name + " "):
                rows[name] = [float(x) for x in line[len(name) :].split()]
    return rows


def test_both_precisions_step_and_are_scored_on_held_out_games(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = replay_file(tmp_path)
    args = ["--replay", str(replay), "--network", str(weights_path()), "--batch", "4"]
    assert bench_learner.main([*args, "--steps", "4", "--rounds", "2", "--held-out", "6"]) == 0
    rows = table(capsys.readouterr().out)
    assert set(rows) == {"start", "float32", "bfloat16 autocast"}
    assert len(rows["start"]) == 3  # no timing for the starting network
    assert rows["float32"][1] == 1.0 and rows["bfloat16 autocast"][1] > 0
    # The start row scores the checkpoint itself on the held-out game (6 positions),
    # printed to 4 decimals: within 5e-5 of the losses computed again here.
    _, held_out = bench_learner.split_replay(str(replay))
    start = bench_learner.held_out_losses(load_model(weights_path())[0], held_out, 6)
    assert rows["start"] == pytest.approx(
        [start["policy"], start["policy_kl"], start["value"]], abs=1e-4
    )
    # Four steps at lr 1e-4 move the float network's held-out policy loss.
    assert rows["float32"][2] != rows["start"][0]


def test_bad_numbers_are_refused_before_any_file_is_read() -> None:
    with pytest.raises(SystemExit):
        bench_learner.main(["--replay", "missing.pt", "--steps", "2", "--rounds", "3"])
    with pytest.raises(SystemExit):
        bench_learner.main(["--replay", "missing.pt", "--rounds", "0"])
