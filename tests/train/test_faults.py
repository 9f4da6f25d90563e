"""Faults: killed evaluations and training runs leave no processes behind and lose nothing.

Each kill test starts the command in its own session (so its process group
holds it and every process it starts), waits until its worker processes are
busy, sends the signal (SIGINT to the whole group, as a Ctrl-C does; the
others to the parent only), then counts the processes left in the group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import TINY_TRAIN_CONFIG

from agents.infra.worker_pool import EXIT_GRACE
from train.run_checkpoint import BEST_NAME
from train.trainer import METRICS_NAME, read_metrics

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL]
pytestmark = pytest.mark.slow


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def children(pid: int) -> list[int]:
    return [p for p in group_members(pid) if p != pid]


def as_in_a_terminal() -> None:
    """SIGINT handled as in a terminal's foreground job.

    A shell starts a background job (``cmd &``, ``nohup``) with SIGINT ignored,
    and exec keeps it ignored: Python then installs no KeyboardInterrupt handler,
    and a Ctrl-C test run from such a job would see the command play on to the end.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=as_in_a_terminal,
    )


def wait_for(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def kill_and_count(process: subprocess.Popen[bytes], sig: signal.Signals, workers: int) -> None:
    """Once ``workers`` children run, send ``sig``; then no process of the group may remain."""
    pgid = process.pid
    # Generous: starting Python, torch and the workers takes long on a busy machine.
    wait_for(lambda: len(children(pgid)) >= workers, 300, f"{workers} worker processes")
    time.sleep(1.0)  # the workers are playing
    assert process.poll() is None, process.stderr.read() if process.stderr else ""
    if sig == signal.SIGINT:
        os.killpg(pgid, sig)  # as a Ctrl-C in a terminal
    else:
        os.kill(pgid, sig)
    # The exit is bounded (EXIT_GRACE after the signal); the rest is a loaded machine's margin.
    process.wait(timeout=EXIT_GRACE + 90)
    wait_for(lambda: not group_members(pgid), 60, "the group to be empty")
    assert group_members(pgid) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=[s.name for s in SIGNALS])
def test_killed_eval_leaves_no_worker_processes(sig: signal.Signals, tmp_path: Path) -> None:
    eval_cli = ["-m", "agents.evaluation.eval_cli"]
    command = [*eval_cli, "greedy", "random", "--games", "400", "--workers", "2"]
    process = start([*command, "--no-progress"], tmp_path)
    try:
        kill_and_count(process, sig, workers=2)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    if sig != signal.SIGKILL:
        assert process.returncode in (128 + sig, -sig, 130), process.returncode


#: The tiny run, its evaluation long enough (200 games on 2 workers) to be killed in.
EVALUATING = ["eval.every=1", "eval.games=200", "eval.workers=2", "eval.elo_checkpoints=0"]


@pytest.mark.parametrize("sig", SIGNALS, ids=[s.name for s in SIGNALS])
def test_train_killed_in_an_evaluation_leaves_no_workers_and_redoes_it_on_resume(
    sig: signal.Signals, tmp_path: Path
) -> None:
    from train.train_cli import main as train_main

    (tmp_path / "tiny.yaml").write_text(TINY_TRAIN_CONFIG)
    run_dir = tmp_path / "run"
    # In-process self-play: the only child processes are the evaluation's workers,
    # first those of the untrained network's evaluation (iteration 0).
    command = [
        "-m",
        "train.train_cli",
        "--config",
        "tiny.yaml",
        "--run-dir",
        "run",
        "--no-progress",
    ]
    process = start([*command, *EVALUATING], tmp_path)
    try:
        kill_and_count(process, sig, workers=2)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    if sig != signal.SIGKILL:  # ended through its cleanup, not by the exit deadline
        assert process.returncode in (128 + sig, 130), process.returncode
    assert not (run_dir / METRICS_NAME).exists() or read_metrics(run_dir / METRICS_NAME) == []

    quick = ["eval.games=2", "eval.workers=1"]
    assert train_main(["--run-dir", str(run_dir), "--resume", "--no-progress", *quick]) == 0
    records = read_metrics(run_dir / METRICS_NAME)
    assert [r["iteration"] for r in records] == [0, 1]
    for record in records:  # iteration 0's evaluation was redone, not lost
        assert "eval/raw_vs_random/score" in record, record
    assert (run_dir / BEST_NAME).is_file()
    assert json.loads((run_dir / METRICS_NAME).read_text().splitlines()[-1])["iteration"] == 1
