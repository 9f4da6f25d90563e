"""Reviews refuse what is not a YINSH game and values that are not numbers; an agent
that exits stops the review with a reason (the hardening issue's probes)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from agents.base import Agent
from agents.infra.worker_pool import SignalExit
from agents.review import review_game
from agents.review.review_cli import main as review_main
from agents.review.reviewer import check_values
from agents.search import Analysis
from agents.web.http_errors import SessionError
from agents.web.position import parse_game_text
from yinsh_env import State, action_to_str
from yinsh_env.records.formats import RecordError, read_record
from yinsh_env.records.sgf import read_sgf

NOT_YINSH = {
    "go.sgf": "(;GM[1]FF[4]SZ[19];B[pd];W[dp])",
    "chess.sgf": "(;GM[3])",
    "other.sgf": "(;SU[Go])",
    "nothing.sgf": "(;)",
    "empty.yinsh": "",
    "blank.yinsh": "\n  \n",
    "comments.yinsh": "; only a comment\n{ and another }\n",
}


@pytest.mark.parametrize("name", sorted(NOT_YINSH))
def test_review_refuses_what_is_no_yinsh_game_and_writes_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(NOT_YINSH[name])
    out = tmp_path / "out"
    assert review_main([str(path), "--agent", "mcts:sims=2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"yinsh-review: {path}"), err
    assert not out.exists()


def test_review_refuses_a_game_without_moves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "unplayed.yinsh"
    path.write_text('[White "a"]\n[Black "b"]\n')
    assert review_main([str(path), "--agent", "mcts:sims=2", "--out", str(tmp_path / "o")]) == 2
    assert "no moves to review" in capsys.readouterr().err


@pytest.mark.parametrize("text", [NOT_YINSH[n] for n in ("go.sgf", "chess.sgf", "nothing.sgf")])
def test_the_web_loader_refuses_what_is_no_yinsh_game(text: str) -> None:
    with pytest.raises(SessionError, match="not a Yinsh game"):
        parse_game_text(text)


def test_the_readers_still_take_yinsh_games() -> None:
    assert read_sgf("(;GM[24]SU[Yinsh])").actions == []
    assert read_record('[White "a"]\n').actions == []
    with pytest.raises(RecordError, match="no game in it"):
        read_record("")


class _Values(Agent):
    """Values from a list (then 0.0); ``exit_at``: the call that raises SystemExit."""

    def __init__(self, values: list[float], exit_at: int | None = None, signal: bool = False):
        super().__init__(0)
        self.values, self.calls, self.exit_at, self.signal = list(values), 0, exit_at, signal

    def act(self, state: State) -> int:
        return state.legal_actions()[0]

    def analyse(self, state: State) -> Analysis:
        self.calls += 1
        if self.calls == self.exit_at:
            raise (SignalExit if self.signal else SystemExit)(3)
        value = self.values.pop(0) if self.values else 0.0
        return Analysis(action=state.legal_actions()[0], player=state.to_act, value=value)


def _game(plies: int) -> tuple[State, list[int]]:
    state = State()
    actions = []
    for _ in range(plies):
        action = state.legal_actions()[0]
        state.apply(action)
        actions.append(action)
    return State(), actions


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_value_that_is_no_finite_number_stops_the_review_naming_the_ply(bad: float) -> None:
    start, actions = _game(6)
    review = review_game(start, actions, _Values([0.1, 0.2, bad]))
    assert not review.complete and review.stopped_at == 3
    assert "not a finite number" in (review.reason or "")
    assert all(d.mark is None for d in review.decisions)
    with pytest.raises(ValueError, match="not a finite number"):
        check_values(_Values([bad]))


def test_an_agent_that_exits_stops_the_review_which_is_kept() -> None:
    start, actions = _game(6)
    review = review_game(start, actions, _Values([], exit_at=3))
    assert review.stopped_at == 3 and "exited: SystemExit(3)" in (review.reason or "")
    assert len(review.decisions) == 2
    with pytest.raises(ValueError, match=r"exited: SystemExit\(3\)"):
        check_values(_Values([], exit_at=1))
    with pytest.raises(SignalExit):  # a signal's exit still ends the program
        review_game(start, actions, _Values([], exit_at=2, signal=True))


DYING = """
import os

from agents.base import Agent
from agents.search import Analysis


class Dies(Agent):
    calls = 0

    def act(self, state):
        return state.legal_actions()[0]

    def analyse(self, state):
        Dies.calls += 1
        if Dies.calls > 2:  # the start position's check passes; a review dies
            os._exit(9)
        return Analysis(action=state.legal_actions()[0], player=state.to_act, value=0.0)
"""


@pytest.mark.slow
def test_a_review_worker_that_dies_is_one_line_naming_the_agent_and_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dying.py").write_text(DYING)
    monkeypatch.chdir(tmp_path)
    _, actions = _game(6)
    moves = "".join(f"{i + 1}. {action_to_str(a)}\n" for i, a in enumerate(actions))
    for name in ("a.yinsh", "b.yinsh"):
        (tmp_path / name).write_text(moves)
    spec = "py:./dying.py:Dies"
    argv = ["a.yinsh", "b.yinsh", "--agent", spec, "--workers", "2", "--no-progress"]
    assert review_main([*argv, "--out", "out"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"yinsh-review: stopped: a worker process reviewing with {spec} died; "
        "not reviewed: a.yinsh, b.yinsh"
    )


def _record(tmp_path: Path) -> Path:
    _, actions = _game(6)
    path = tmp_path / "g.yinsh"
    path.write_text("".join(f"{i + 1}. {action_to_str(a)}\n" for i, a in enumerate(actions)))
    return path


def test_a_link_planted_in_the_out_folder_is_never_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _record(tmp_path)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "g.review.json").symlink_to(elsewhere)
    argv = [str(record), "--agent", "mcts:sims=2", "--out", str(out), "--no-progress"]
    assert review_main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"yinsh-review: {out / 'g.review.json'} already exists: a review is never replaced"
        " (give another --out, or move it away)\n"
    )
    assert elsewhere.read_text() == "keep me\n"
    assert sorted(p.name for p in out.iterdir()) == ["g.review.json"]


def test_a_second_review_into_the_same_folder_is_refused_keeping_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _record(tmp_path)
    out = tmp_path / "out"
    argv = [str(record), "--agent", "mcts:sims=2", "--out", str(out), "--no-progress"]
    assert review_main(argv) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"g.review.json", "g.review.yinsh"} <= set(first)
    capsys.readouterr()
    assert review_main([*argv, "--seed", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists: a review is never replaced" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
