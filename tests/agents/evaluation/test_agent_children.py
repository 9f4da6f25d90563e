"""What a ``py:`` agent starts ends with its match, and the command never hangs at exit
(the hardening issue's probes: a non-daemon ``multiprocessing.Process`` made
``yinsh-eval`` hang after its table; ``sleep``, a ``setsid`` daemon and an
``os.fork()`` copy were left running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.evaluation.eval_cli import main as eval_main
from agents.play.play_cli import main as play_main

PROJECT_ROOT = Path(__file__).resolve().parents[3]
#: Generous bounds, never reached when things work: a hang or a survivor fails the test.
RUN_SECONDS = 240.0
GONE_SECONDS = 60.0

MODULE = '''
import multiprocessing
import os
import subprocess
import time

from agents.base import Agent


def _sleep():
    time.sleep(600)


class Starts(Agent):
    """At its first decision starts a process as ``how`` says, noting its pid in ``log``."""

    def __init__(self, seed=None, how="popen", log="pids.txt"):
        super().__init__(seed)
        self.how, self.log, self.started = how, log, False

    def note(self, pid):
        with open(self.log, "a") as handle:
            handle.write(f"{pid}\\n")

    def act(self, state):
        if not self.started:
            self.started = True
            if self.how == "mp":  # not a daemon: the interpreter's exit waits for it
                process = multiprocessing.Process(target=_sleep)
                process.start()
                self.note(process.pid)
            elif self.how.startswith("popen"):
                self.note(subprocess.Popen(["sleep", "600"]).pid)
                if self.how == "popen-then-die":  # its worker cannot end it: its group can
                    os._exit(7)
            elif self.how == "setsid":  # a daemon in a session of its own, its parent gone
                shell = f"sleep 600 & echo $! >> {self.log}"
                subprocess.run(["setsid", "sh", "-c", shell], check=True)
            elif self.how == "fork":
                pid = os.fork()
                if pid == 0:
                    time.sleep(600)
                    os._exit(0)
                self.note(pid)
        return state.legal_actions()[0]
'''

HOWS = ["mp", "popen", "setsid", "fork"]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended: it waits only for its parent to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat.rpartition(b")")[2].split()[0] != b"Z"


def _survivors(log: Path) -> list[int]:
    """The processes the agent noted that still run, after a generous wait for their end."""
    pids = [int(line) for line in log.read_text().split()]
    assert pids, "the agent started nothing"
    deadline = time.monotonic() + GONE_SECONDS
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [pid for pid in pids if _alive(pid)]


@pytest.fixture
def starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The agent above in the current folder; yields its pid log, and ends what it noted."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc")
    (tmp_path / "starts.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "pids.txt"
    log.write_text("")
    yield log
    for pid in (int(line) for line in log.read_text().split()):
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("how", HOWS)
def test_yinsh_eval_ends_what_an_agent_started_and_exits(starts: Path, how: str) -> None:
    code = "from agents.evaluation.eval_cli import main; raise SystemExit(main())"
    argv = [f"py:./starts.py:Starts,how={how}", "random", "--games", "2", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,  # a hang at exit fails here
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "random" in done.stdout and "Traceback" not in done.stderr
    assert _survivors(starts) == []


@pytest.mark.slow
def test_what_an_agent_started_ends_when_its_worker_dies(
    starts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "py:./starts.py:Starts,how=popen-then-die"
    assert eval_main([spec, "random", "--games", "2", "--no-progress"]) == 1
    assert play_main([spec, "random", "--seed", "2", "--quiet"]) == 1
    assert "its worker process died (status 7)" in capsys.readouterr().out
    assert _survivors(starts) == []


@pytest.mark.slow
@pytest.mark.parametrize("how", HOWS)
def test_yinsh_play_ends_what_an_agent_started(
    starts: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert play_main([f"py:./starts.py:Starts,how={how}", "random", "--seed", "2", "--quiet"]) == 0
    assert "wins" in capsys.readouterr().out
    assert _survivors(starts) == []
