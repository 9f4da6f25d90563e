"""--db names a regular file (or a new one): a FIFO or a device is refused before any game."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.evaluation.eval_cli import main as eval_main


@pytest.mark.parametrize("kind", ["fifo", "/dev/null", "link to /dev/null"])
def test_a_db_that_is_no_regular_file_is_refused_in_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    if kind == "fifo":
        os.mkfifo(path)  # SQLite had failed with a traceback after the games
    elif kind == "/dev/null":
        path = Path("/dev/null")
    else:
        path.symlink_to("/dev/null")
    assert eval_main(["random", "random", "--games", "2", "--db", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"yinsh-eval: --db {path}: not a regular file (a device, a pipe or a socket)"]
