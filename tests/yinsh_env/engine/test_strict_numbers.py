"""Numbers in user text are read as written: ``3_0``, ``٢``, `` 3`` are refused, not
read as 30, 2 and 3 (Python's int() and float() accept all three)."""

from __future__ import annotations

import argparse

import pytest

from agents import make_agent
from agents.infra.cli_args import int_in, number_in
from agents.network.play_config import play_config
from agents.protocol.line_protocol import EngineSession
from agents.spec import AgentSpecError, check_spec
from yinsh_env.util.numeric_text import is_int_text, parse_float, parse_int

LENIENT = ["3_0", "\u0663", "\u0662", " 3", "3\n", "\uff13", "1_0.5", "0x10", "3 "]


@pytest.mark.parametrize("text", LENIENT)
def test_the_parsers_refuse_what_int_and_float_would_read(text: str) -> None:
    assert not is_int_text(text)
    with pytest.raises(ValueError):
        parse_int(text)
    with pytest.raises(ValueError):
        parse_float(text)


@pytest.mark.parametrize(("text", "value"), [("30", 30), ("-3", -3), ("+3", 3), ("007", 7)])
def test_plain_integers_are_read(text: str, value: int) -> None:
    assert parse_int(text) == value
    assert parse_float(text) == value


@pytest.mark.parametrize(("text", "value"), [(".5", 0.5), ("1e3", 1000.0), ("-2.5E-1", -0.25)])
def test_plain_floats_are_read(text: str, value: float) -> None:
    assert parse_float(text) == value


@pytest.mark.parametrize("spec", ["mcts:sims=3_0", "mcts:time=0_5", "mcts:sims=\uff13"])
def test_a_spec_number_with_an_underscore_or_a_wide_digit_is_refused(spec: str) -> None:
    with pytest.raises(AgentSpecError, match="must be"):
        check_spec(spec)


@pytest.mark.parametrize("text", LENIENT)
def test_command_line_numbers_are_strict(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        int_in(0, 100)(text)
    with pytest.raises(argparse.ArgumentTypeError):
        number_in(0, 100)(text)


@pytest.mark.parametrize("count", ["\u0662", "1_0", "+1", "\uff12"])
def test_undo_takes_ascii_digits_only(count: str) -> None:
    session = EngineSession(make_agent("random", seed=0))
    session.handle("play E5 F6 G7")
    reply = session.handle(f"undo {count}")
    assert reply is not None and reply.startswith("error "), reply
    assert session.handle("history") == "history E5 F6 G7"
    assert session.handle("undo 2") == "ok"
    assert session.handle("history") == "history E5"


@pytest.mark.parametrize(
    "line", ["go time=0_5", "go sims=1_0", "seed 1_0", "new rings_to_win=\uff13"]
)
def test_other_protocol_numbers_are_strict(line: str) -> None:
    session = EngineSession(make_agent("random", seed=0))
    reply = session.handle(line)
    assert reply is not None and reply.startswith("error "), reply


@pytest.mark.parametrize("text", ["1_0.5", "\uff13", " 3"])
def test_a_config_number_written_as_a_string_is_read_strictly(text: str) -> None:
    with pytest.raises(ValueError, match=r"search\.c_puct"):
        play_config({"search": {"c_puct": text}})
    assert play_config({"search": {"c_puct": "1e-3"}}).search.c_puct == 0.001
