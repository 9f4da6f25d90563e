"""Bad input found by probing: each answered by a clear error, nothing changed, nothing crashed.

One test per probe of the hardening issue; the property tests over every
parser are in ``test_parsers_fuzz.py``.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.evaluation.eval_cli import main as eval_main
from agents.network.network import PolicyValueNet
from agents.protocol.engine_cli import main as engine_main
from agents.protocol.line_protocol import EngineSession
from train.config import config_from_dict
from train.evaluate import new_history
from train.learner import Learner
from train.replay import ReplayBuffer
from train.run_checkpoint import save_checkpoint
from train.tools.plot import load_metrics
from train.trainer import METRICS_NAME, RunError, read_metrics
from yinsh_env import (
    NotationError,
    PositionError,
    RecordError,
    State,
    action_to_str,
    load_record,
    read_bga_json,
    read_record,
    read_sgf,
    write_record,
    write_sgf,
)
from yinsh_env.envs.gym_env import OpponentError, YinshGymEnv

START = State().to_text()  # 4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0 3

# --- the engine protocol ----------------------------------------------------------------


def _session(spec: str = "random") -> EngineSession:
    session = EngineSession(make_agent(spec, seed=0))
    assert session.handle("position " + START.replace("E", "E")) == "ok"
    return session


@pytest.mark.parametrize(
    "board",
    [
        "4/7/8/9/1\u00b2/9/10/9/8/7/4",  # a superscript two: str.isdigit() says yes
        "4/7/8/9/\u0661\u0660/9/10/9/8/7/4",  # Arabic-Indic digits: int() reads them
        "4/7/8/9/\uff11\uff10/9/10/9/8/7/4",  # full-width digits
    ],
    ids=["superscript", "arabic-indic", "full-width"],
)
def test_engine_position_with_non_ascii_digits_gets_an_error_and_the_session_goes_on(
    board: str,
) -> None:
    session = _session()
    session.handle("play E5")
    reply = session.handle(f"position {board} w place - 0-0 51 0 3")
    assert reply is not None and reply.startswith("error ") and "column E" in reply
    assert session.handle("history") == "history E5"  # the game is untouched
    assert session.handle("ping 1") == "pong 1"


@pytest.mark.parametrize("digits", [10**3, 10**5])
def test_engine_position_with_a_huge_digit_run_gets_an_error_in_bounded_memory(
    digits: int,
) -> None:
    session = _session()
    line = f"position 4/7/8/9/{'9' * digits}/9/10/9/8/7/4 w place - 0-0 51 0 3"
    tracemalloc.start()
    try:
        reply = session.handle(line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reply is not None and reply.startswith("error ")
    assert peak < 20 * len(line) + 200_000, peak  # no list of 10**digits cells, no big int
    assert session.handle("state") == "state to_act=W phase=place result=none"


@pytest.fixture(scope="module")
def net_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained tiny network's checkpoint (the net agent only needs weights)."""
    config = config_from_dict({"network": {"blocks": 1, "channels": 8, "value_hidden": 8}})
    model = PolicyValueNet(config.network)
    learner = Learner(model, config.optim, 1, torch.device("cpu"))
    return save_checkpoint(
        tmp_path_factory.mktemp("net"),
        0,
        config,
        model,
        learner.state_dict(),
        ReplayBuffer(10).state_dict(),
        new_history(),
    )


@pytest.mark.parametrize("seed", ["-1", "-0", "1.5", "\u0663", "9" * 30, "x"])
def test_net_engine_rejects_a_bad_seed_and_keeps_serving(
    net_checkpoint: Path, seed: str, torch_one_thread: None
) -> None:
    session = _session(f"net:path={net_checkpoint}")
    reply = session.handle(f"seed {seed}")
    assert reply is not None and reply.startswith("error seed ")
    assert session.handle("seed 7") == "ok"
    reply = session.handle("go")
    assert reply is not None and reply.startswith("action ")


def test_engine_command_line_rejects_a_negative_seed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        engine_main(["random", "--seed", "-1"])
    assert info.value.code == 2
    assert "--seed" in capsys.readouterr().err


# --- position text ----------------------------------------------------------------------

# A board where neither side's rings can move (rings A2 B3 / A3, markers around).
BLOCKED = "RrMM/mmRmMmm/1MMmm3/1mM1mm3/1Mm2mm3/mm3MM2/mM4Mm2/m5mM1/6Mm/6m/4"
ONE_EACH = "4/7/8/9/4R5/9/10/9/8/7/3r"  # white ring E5, black ring K10
ROW_E = "4/7/8/9/MMMMMR4/9/10/9/8/7/3r"  # White's row E1-E5, ring E6; black ring K10
ROWS_BOTH = "4/7/8/9/MMMMMR4/9/mmmmm5/9/8/7/3r"  # ... and Black's row G2-G6

UNREACHABLE = [
    ("six-white-rings", "4/7/8/9/RRRRRR4/9/10/9/8/7/4 b place - 0-0 51 0 3", "five rings"),
    ("rings-and-removed", f"{ONE_EACH.replace('4R5', 'RRRR1R4')} w move - 1-0 51 0 3", "five"),
    ("removed-past-win", f"{ONE_EACH} w over - 4-0 51 0 3", "removed 4 rings"),
    ("both-won", f"{ONE_EACH} w over - 3-3 51 0 3", "both players"),
    ("black-places-first", "4/7/8/9/4r5/9/10/9/8/7/4 b place - 0-0 51 0 3", "White places"),
    ("placement-removed", "4/7/8/9/4R5/9/10/9/8/7/4 b place - 1-0 51 0 3", "placement"),
    ("placement-pool", "4/7/8/9/4R5/9/10/9/8/7/4 b place - 0-0 50 0 3", "placement"),
    ("pool-and-markers", f"{ROW_E.replace('MMMMMR4', 'MMMM1R4')} w move - 0-0 50 0 3", "pool"),
    ("pass-then-rows", f"{ROW_E} w row w 0-0 46 1 3", "phase must be move"),
    ("pass-by-a-mobile-player", f"{ONE_EACH} w move - 0-0 51 1 3", "has a ring move"),
    ("over-for-no-reason", f"{ONE_EACH} w over - 0-0 51 0 3", "no one has won"),
    ("opponent-before-mover", f"{ROWS_BOTH} b row w 0-0 41 0 3", "mover resolves first"),
    ("one-pass-ends", f"{BLOCKED} w over - 0-0 17 1 3", "phase must be move"),
]


@pytest.mark.parametrize(
    ("text", "problem"), [u[1:] for u in UNREACHABLE], ids=[u[0] for u in UNREACHABLE]
)
def test_from_text_rejects_positions_no_game_reaches(text: str, problem: str) -> None:
    with pytest.raises(PositionError, match=problem):
        State.from_text(text)


def test_from_text_accepts_the_reachable_neighbours_of_those() -> None:
    """The same checks pass what games do reach (so the rejections above are specific)."""
    for text in [
        "4/7/8/9/RRRRRrrrr1/9/10/9/8/7/4 b place - 0-0 51 0 3",
        f"{ROWS_BOTH} w row w 0-0 41 0 3",  # the mover first, then Black
        f"{ROW_E.replace('MMMMMR4', 'mmmmmR4')} b row w 0-0 46 0 3",
        f"{BLOCKED} b move - 0-0 17 1 3",  # White passed: Black is blocked too, passes next
        f"{BLOCKED} b over - 0-0 17 2 3",
        f"{ONE_EACH} w over - 3-0 51 0 3",
        f"{ROW_E.replace('MMMMMR4', 'MMMMM1R3')} b over - 0-1 0 0 3",
    ]:
        assert State.from_text(text).to_text() == text


@pytest.mark.parametrize("size", [10**4, 10**6])
def test_from_text_bounds_its_work_on_huge_text(size: int) -> None:
    text = START + " " + "9" * size
    tracemalloc.start()
    try:
        with pytest.raises(PositionError, match="at most 256") as info:
            State.from_text(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000, peak  # nothing proportional to the input (it is not even split)
    assert len(str(info.value)) < 200


# --- yinsh-eval -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "-inf", "soon"])
def test_eval_rejects_a_bad_move_time_limit_at_the_command_line(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        eval_main(["random", "greedy", "--games", "2", f"--move-time-limit={value}"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--move-time-limit" in err and repr(value) in err


def test_arena_rejects_a_nan_move_time_limit_before_any_game() -> None:
    from agents.evaluation.arena import MatchSettings, run_arena

    for value in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="move_time_limit"):
            run_arena(["random", "greedy"], 2, MatchSettings(move_time_limit=value), progress=False)


# --- the Gymnasium single-agent environment ---------------------------------------------


class FlakyOpponent:
    """An agent that raises on its ``fail_on``-th decision (counted over its life)."""

    def __init__(self, fail_on: int) -> None:
        self.calls, self.fail_on = 0, fail_on

    def act(self, state: State) -> int:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("opponent crashed")
        return state.legal_actions()[0]


def test_gym_env_opponent_failure_ends_the_episode_and_the_next_reset_is_clean() -> None:
    import gymnasium

    env = YinshGymEnv(learner="player_0", opponent=FlakyOpponent(fail_on=2))
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # opponent's first decision: fine
    before = env.game.to_text()
    with pytest.raises(OpponentError, match="opponent crashed") as info:
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "call reset()" in str(info.value)
    assert env.game.to_text() != before and env.game.to_act == 1  # stopped at the opponent
    with pytest.raises(gymnasium.error.ResetNeeded):  # no playing the opponent's colour
        env.step(env.game.legal_actions()[0])
    obs, info_ = env.reset(seed=0)
    assert env.game.to_text() == START and env.game.to_act == 0
    assert info_["learner"] == "player_0" and obs["action_mask"].sum() == 85


def test_gym_env_opponent_failure_in_reset_is_reported_too() -> None:
    env = YinshGymEnv(learner="player_1", opponent=FlakyOpponent(fail_on=1))
    with pytest.raises(OpponentError):
        env.reset(seed=0)
    env.reset(seed=0)  # the opponent works from its second call on
    assert env.game.to_act == 1 and len(env.game.actions) == 1


# --- metrics.jsonl ----------------------------------------------------------------------


def _metrics(tmp_path: Path, text: str) -> Path:
    (tmp_path / METRICS_NAME).write_text(text)
    return tmp_path


def test_plot_reads_metrics_whose_last_line_was_cut_by_a_crash(tmp_path: Path) -> None:
    lines = [json.dumps({"iteration": i, "loss/value": 1.0 / (i + 1)}) for i in range(3)]
    run_dir = _metrics(tmp_path, "\n".join(lines) + "\n" + lines[-1][:12])
    assert [r["iteration"] for r in load_metrics(run_dir)] == [0, 1, 2]


@pytest.mark.parametrize("bad", ['{"iteration": 1', "[1, 2]", "[" * 100_000])
def test_a_bad_metrics_line_before_the_last_names_itself(tmp_path: Path, bad: str) -> None:
    run_dir = _metrics(tmp_path, f'{{"iteration": 0}}\n{bad}\n{{"iteration": 2}}\n')
    with pytest.raises(RunError, match="line 2"):
        read_metrics(run_dir / METRICS_NAME)


def test_plot_command_reports_a_broken_metrics_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.tools.plot import main as plot_main

    _metrics(tmp_path, 'not json\n{"iteration": 1}\n')
    assert plot_main([str(tmp_path), "--out", str(tmp_path / "c.png")]) == 2
    assert "line 1" in capsys.readouterr().err


# --- records ----------------------------------------------------------------------------

GAME = ["E5", "F6", "A2", "K10", "B1", "J11", "E1", "G11", "A5", "K7", "E5-E6"]


def _record_texts() -> dict[str, str]:
    from yinsh_env import GameRecord

    state = State().apply_all(GAME)
    record = GameRecord.from_state(state, "greedy", "random")
    (bga,) = (Path(__file__).parent.parent / "data" / "games" / "bga").glob("*.json")
    return {".yinsh": write_record(record), ".sgf": write_sgf(record), ".json": bga.read_text()}


@pytest.mark.parametrize("suffix", [".yinsh", ".sgf", ".json"])
def test_a_utf8_bom_in_a_record_is_accepted(tmp_path: Path, suffix: str) -> None:
    text = _record_texts()[suffix]
    plain, with_bom = tmp_path / f"plain{suffix}", tmp_path / f"bom{suffix}"
    plain.write_text(text, encoding="utf-8")
    with_bom.write_text(text, encoding="utf-8-sig")
    assert with_bom.read_bytes().startswith(b"\xef\xbb\xbf")
    assert load_record(with_bom) == load_record(plain)
    reader: Any = {".yinsh": read_record, ".sgf": read_sgf, ".json": read_bga_json}[suffix]
    assert reader("\ufeff" + text) == reader(text)


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deeply_nested_json_gives_a_record_error_not_recursion(depth: int) -> None:
    for text in ("[" * depth, '{"actions": ' + "[" * depth + "]" * depth + "}"):
        with pytest.raises(RecordError, match="line 1"):
            read_bga_json(text)


# --- actions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action", [True, False, np.True_, 3.0, 3.7, np.float32(2), "5", b"5", None, [1], 1j]
)
def test_action_to_str_rejects_what_is_not_an_integer(action: object) -> None:
    with pytest.raises(NotationError, match="not an integer index"):
        action_to_str(action)  # type: ignore[arg-type]


def test_action_to_str_takes_python_and_numpy_integers() -> None:
    assert action_to_str(0) == action_to_str(np.int64(0)) == action_to_str(np.uint8(0)) == "A2"
    with pytest.raises(NotationError, match="outside"):
        action_to_str(10**30)
