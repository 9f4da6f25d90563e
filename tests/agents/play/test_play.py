"""The ``yinsh-play`` demo command."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agents import Agent, AgentFailure, spec
from agents.play.play_cli import main
from yinsh_env import State
from yinsh_env.records.formats import load_record, read_record

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def record_part(output: str) -> str:
    """The game record printed at the end (from its first header line)."""
    return output[output.index("[Variant") :]


def test_plays_a_game_and_prints_a_replayable_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["random", "random", "--seed", "11", "--every", "30", "--color", "never"]) == 0
    out = capsys.readouterr().out
    record = read_record(record_part(out))
    final = record.replay()
    assert final.is_terminal and record.result == final.result
    assert record.white == record.black == "random"
    assert record.tags["seed"] == "11"
    verdict = "Draw" if final.winner is None else ("White", "Black")[final.winner] + " wins"
    assert f"{verdict}: " in out
    # Boards every 30 plies, and the final one.
    assert out.count("    A  B  C  D  E  F  G  H  I  J  K") == final.ply // 30 + (
        final.ply % 30 != 0
    )
    assert "\x1b[" not in out


def test_same_seed_same_game(capsys: pytest.CaptureFixture[str]) -> None:
    records = []
    for _ in range(2):
        assert main(["--seed", "4", "--every", "0"]) == 0
        records.append(record_part(capsys.readouterr().out))
    assert records[0] == records[1]
    assert main(["--seed", "5", "--every", "0"]) == 0
    assert record_part(capsys.readouterr().out) != records[0]


def test_quiet_blitz_writes_svg_and_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg, rec = tmp_path / "final.svg", tmp_path / "game.yinsh"
    args = [
        "--seed",
        "2",
        "--rings-to-win",
        "1",
        "--quiet",
        "--svg",
        str(svg),
        "--record",
        str(rec),
    ]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "plies" in lines[0]
    record = load_record(rec)
    assert record.rings_to_win == 1 and record.variant == "blitz"
    final = record.replay()
    assert final.is_terminal
    assert f"({final.ply} plies)" in lines[0]
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchagent"], "unknown agent 'nosuchagent'"),
        (["random", "random:depth=2"], "unknown parameter 'depth'"),
        (["--rings-to-win", "7"], "--rings-to-win: must be an integer 1..5"),
        (["--record", "/no/such/dir/game.yinsh"], "does not exist"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


class _Failing(Agent):
    """Plays its first legal action until ply 12, then gives up."""

    def act(self, state: State) -> int:
        if state.ply >= 12:
            raise AgentFailure("out of ideas")
        return state.legal_actions()[0]


def test_failing_agent_forfeits_with_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    spec.register_agent("failing", _Failing)
    try:
        assert main(["failing", "random", "--seed", "1", "--every", "0"]) == 1
    finally:
        spec.unregister_agent("failing")
    out = capsys.readouterr().out
    assert "White (failing) forfeits: out of ideas" in out
    record = read_record(record_part(out))
    assert (record.result, record.termination, record.tags["reason"]) == (
        "B",
        "forfeit",
        "out of ideas",
    )
    assert len(record.actions) == 12


@pytest.mark.slow
def test_command_line_smoke() -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.play.play_cli",
            "greedy",
            "random",
            "--seed",
            "3",
            "--every",
            "0",
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,  # bounds a hang; a loaded machine starts Python slowly
    )
    assert run.returncode == 0, run.stderr
    assert "[Result " in run.stdout and ("wins" in run.stdout or "Draw" in run.stdout)
    bad = subprocess.run(
        [sys.executable, "-m", "agents.play.play_cli", "bogus"],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,  # bounds a hang; a loaded machine starts Python slowly
    )
    assert bad.returncode == 2
    assert "unknown agent 'bogus'" in bad.stderr and "Traceback" not in bad.stderr
