"""Playing in the terminal (``yinsh-play --human ...``), driven through stdin and stdout."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import pieces, position_text

from agents import make_agent
from agents.play.terminal import TerminalGame
from yinsh_env import State, read_record

PROJECT_ROOT = Path(__file__).resolve().parents[3]
#: White (two rings removed) wins with E5-E8, a row and a ring.
ROW_WIN = position_text(
    pieces(R="E5 A2 B1", r="J10", M="C6 D6 F6 G6 C7 D7 F7 G7", m="E6 E7"), "w move - 2-0 41 0 3"
)


def play(lines: list[str], humans: tuple[int, ...] = (0,), state: State | None = None) -> str:
    """Run a terminal game on the given input lines; return everything it printed."""
    out = io.StringIO()
    opponent = make_agent("random", seed=1) if len(humans) < 2 else None
    game = TerminalGame(
        humans, opponent, "greedy", io.StringIO("\n".join(lines) + "\n"), out, False, state
    )
    assert game.run() == 0
    game.close()
    return out.getvalue()


def test_a_game_to_its_end_with_row_and_ring_removal() -> None:
    out = play(["E5-E8", "xC6-G6", "xA2"], state=State.from_text(ROW_WIN))
    assert "Game over: White wins (rings)" in out
    assert "rows xC6-G6 xC7-G7" in out  # the pending rows are listed under the board


def test_placements_against_the_agent_and_the_record_at_quit() -> None:
    out = play(["E5", "F6", "quit"])
    assert out.count("Black plays ") == 2
    record = read_record(out[out.index("[Variant") :])
    assert record.actions[0] == "E5" and record.actions[2] == "F6" and len(record.actions) == 4
    assert (record.white, record.black) == ("human", "random")


def test_bad_input_is_explained_and_never_fatal() -> None:
    out = play(["Z99", "E5-E8", "", "E5", "E5", "quit"])
    assert "Z99" in out and "'help'" in out
    assert "E5-E8 is not legal in the place phase" in out
    assert "E5 is not legal" in out  # the second E5: the point is taken
    assert "Stopped after" in out


def test_help_legal_position_and_ring_destinations() -> None:
    state = State.from_text(ROW_WIN)
    out = play(["help", "legal", "position", "B1", "G2", "quit"], state=state)
    assert "xE5-E9" in out and "hint [SPEC]" in out  # help
    assert " ".join(state.legal_action_names()) in out  # legal
    assert ROW_WIN in out  # position
    assert "B1 can go to: B2" in out
    assert "G2 holds no ring of yours that can move" in out


def test_row_phase_tells_which_rows_to_remove() -> None:
    out = play(["E5-E8", "A2-A3", "quit"], state=State.from_text(ROW_WIN))
    assert "remove one of your rows first: xC6-G6 xC7-G7" in out


def test_undo_goes_back_to_the_persons_decision() -> None:
    out = play(["undo", "E5", "undo", "position", "quit"])
    assert "Nothing to undo" in out
    assert "4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0 3" in out  # back at the start
    assert "Stopped after 0 actions" in out


@pytest.mark.parametrize("argument", ["\u0662", "2", "x"])
def test_undo_takes_no_argument_and_says_so(argument: str) -> None:
    out = play(["E5", f"undo {argument}", "position", "quit"])
    assert (
        f"'undo' takes no argument (got {argument!r}): type 'undo' alone "
        "to go back to your previous decision." in out
    )
    record = read_record(out[out.index("[Variant") :])
    assert record.actions[0] == "E5" and len(record.actions) == 2  # nothing was undone


def test_hint_from_the_default_and_from_any_spec() -> None:
    out = play(["hint", "hint mcts:sims=30", "hint nosuch", "quit"], state=State.from_text(ROW_WIN))
    assert "greedy suggests " in out
    assert "mcts:sims=30 suggests " in out and " visits" in out
    assert "hint: unknown agent 'nosuch'" in out


def test_pass_when_boxed_in() -> None:
    boxed = position_text(pieces(R="A2", r="B2 A3 B3"), "w move - 0-0 51 0 3")
    out = play(["A2-A3", "pass", "quit"], humans=(0, 1), state=State.from_text(boxed))
    assert "you must 'pass'" in out
    assert "Black (move)>" in out


def test_end_of_input_stops_cleanly() -> None:
    out = play([])
    assert "Stopped after 0 actions" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "colour, first", [("white", "White (place)>"), ("black", "Black (place)>")]
)
def test_yinsh_play_human_from_the_command_line(colour: str, first: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.play.play_cli",
            "--human",
            colour,
            "--opponent",
            "random",
            "--seed",
            "3",
        ],
        input="legal\nquit\n",
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,  # bounds a hang; a loaded machine starts Python slowly
    )
    assert proc.returncode == 0, proc.stderr
    assert first in proc.stdout and "A2 A3 A4" in proc.stdout


@pytest.mark.slow
def test_yinsh_play_rejects_a_bad_opponent() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agents.play.play_cli", "--human", "white", "--opponent", "nosuch"],
        input="",
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,  # bounds a hang; a loaded machine starts Python slowly
    )
    assert proc.returncode == 2 and "nosuch" in proc.stderr
