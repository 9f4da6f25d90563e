"""An agent that exits (sys.exit, KeyboardInterrupt in a worker, os._exit) forfeits
its game with a reason; the match goes on (the hardening issue's probes)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from agents.base import Agent, RandomAgent
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.match import play_match
from agents.infra.worker_pool import SignalExit
from agents.play.play_cli import main as play_main

MODULE = '''
import os
import sys

from agents.base import Agent, RandomAgent


class Quits(Agent):
    """Plays its first legal action twice, then leaves as ``how`` says."""

    def __init__(self, seed=None, how: str = "exit"):
        super().__init__(seed)
        self.how, self.turns = how, 0
        if how == "exit-when-built":
            sys.exit(5)

    def reset(self, seed=None):
        super().reset(seed)
        self.turns = 0
        if self.how == "exit-in-reset":
            sys.exit(6)
        if self.how == "crash-in-reset":
            raise RuntimeError("no model")

    def act(self, state):
        self.turns += 1
        if self.turns > 2:
            if self.how == "exit":
                sys.exit(3)
            if self.how == "interrupt":
                raise KeyboardInterrupt
            if self.how == "die":
                os._exit(7)
        return state.legal_actions()[0]
'''


@pytest.fixture
def quits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The spec prefix of the agent above, in a file of the current folder."""
    (tmp_path / "quits.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "quits", raising=False)
    return "py:./quits.py:Quits"


def _forfeits(specs: list[str], workers: int) -> list[tuple[int, str, str]]:
    """The forfeits of a 4-game match, as ``yinsh-eval --json`` reports them."""
    out = Path("result.json")
    argv = [*specs, "--games", "4", "-w", str(workers), "--no-progress", "--json", str(out)]
    assert eval_main(argv) == 1  # games were forfeited
    result = json.loads(out.read_text())
    assert result["pairings"][0]["games"] == 4
    return sorted((f["game"], f["agent"], f["reason"]) for f in result["forfeits"])


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_sys_exit_in_act_forfeits_the_game(quits: str, workers: int) -> None:
    spec = f"{quits},how=exit"
    forfeits = _forfeits([spec, "random"], workers)
    assert forfeits == [(i, spec, "exited: SystemExit(3)") for i in range(4)]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_an_agents_keyboard_interrupt_forfeits_the_game(quits: str, workers: int) -> None:
    # With one worker a py: agent played in yinsh-eval's own process: rc 130, no results.
    spec = f"{quits},how=interrupt"
    forfeits = _forfeits([spec, "random"], workers)
    assert forfeits == [(i, spec, "raised KeyboardInterrupt") for i in range(4)]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_loses_its_game_and_the_match_goes_on(quits: str, workers: int) -> None:
    # With one worker a py: agent's os._exit(7) ended yinsh-eval itself (rc 7, no line).
    spec = f"{quits},how=die"
    forfeits = _forfeits([spec, "random"], workers)
    reason = "crashed: its worker process died (status 7)"
    assert forfeits == [(i, spec, reason) for i in range(4)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("die", "crashed: its worker process died (status 7)"),
        ("interrupt", "raised KeyboardInterrupt"),
        ("exit", "exited: SystemExit(3)"),
        ("crash-in-reset", "crashed in reset: RuntimeError: no model"),
    ],
)
def test_yinsh_play_scores_what_a_py_agent_does_as_its_forfeit(
    quits: str, how: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # yinsh-play ended with the agent's rc 7 (no line), or 130 ("Interrupted") for its
    # KeyboardInterrupt; the agent now plays in a process of its own.
    spec = f"{quits},how={how}"
    assert play_main(["random", spec, "--seed", "1", "--quiet"]) == 1
    out, err = capsys.readouterr()
    (line,) = out.splitlines()
    assert re.fullmatch(
        rf"White wins: Black \({re.escape(spec)}\) forfeits: {re.escape(reason)} \(\d+ plies\)",
        line,
    )
    assert "Traceback" not in err


@pytest.mark.slow
def test_yinsh_eval_names_the_agent_and_the_game_in_one_line(
    quits: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{quits},how=die"
    assert eval_main([spec, "random", "--games", "2", "-w", "2", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    assert "game 0: " in out and "Traceback" not in out + err
    last = err.strip().splitlines()[-1]
    assert f"first: game 0, {spec}: crashed: its worker process died (status 7)" in last


class _Signalled(Agent):
    def act(self, state: object) -> int:
        raise SignalExit(143)


def test_a_signals_exit_is_no_forfeit() -> None:
    with pytest.raises(SignalExit):
        play_match((_Signalled(), RandomAgent(seed=0)))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("exit-in-reset", "exited in reset: SystemExit(6)"),
        ("crash-in-reset", "crashed in reset: RuntimeError: no model"),
    ],
)
@pytest.mark.parametrize("workers", [1, 2])
def test_a_crash_or_exit_in_reset_forfeits_the_game(
    quits: str, how: str, reason: str, workers: int
) -> None:
    spec = f"{quits},how={how}"
    assert _forfeits([spec, "random"], workers) == [(i, spec, reason) for i in range(4)]


def test_an_exit_while_being_built_is_a_spec_error_in_one_line(
    quits: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{quits},how=exit-when-built"
    assert eval_main([spec, "random", "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("exited while being built: SystemExit(5)"), err
