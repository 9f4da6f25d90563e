"""Property tests of every parser: any input gives a value or the project's ValueError subclass.

Action strings, position text, the three record formats, engine protocol lines
and config overrides, each fed arbitrary text and mutations of valid input
(the interesting near misses).  Every call's CPU time is measured and its
memory traced, so "bounded time and memory" is checked, not assumed.  CPU
time, not a wall-clock deadline (Hypothesis's is off): a loaded machine
stretches the wall clock of the quickest parse, never the work it does.
Kept short: about 100 examples per property, the whole file in seconds.
"""

from __future__ import annotations

import io
import json
import random
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import make_agent
from agents.protocol.line_protocol import EngineSession, serve
from train.config import ConfigError, apply_override, config_from_dict
from yinsh_env import (
    GameRecord,
    NotationError,
    PositionError,
    RecordError,
    State,
    action_to_str,
    read_bga_json,
    read_record,
    read_sgf,
    str_to_action,
    write_record,
    write_sgf,
)

T = TypeVar("T")

FUZZ = settings(
    max_examples=100,
    deadline=None,  # wall time is the machine's load: CPU time is checked in answers()
    database=None,  # no .hypothesis/ folder in the tree
    suppress_health_check=[HealthCheck.too_slow],
)
#: Memory one parse may take beyond its input: small inputs, small parses.
MAX_PEAK_BYTES = 8_000_000
#: CPU seconds one parse may take (with tracing on): milliseconds are the rule.
MAX_CPU_SECONDS = 2.0


def answers(parse: Callable[[Any], T], text: Any, error: type[ValueError]) -> T | None:
    """``parse(text)``: a value, or None where it raised ``error``; CPU time and memory checked."""
    size = len(text) if isinstance(text, (str, bytes)) else 0
    tracemalloc.start()
    start = time.thread_time()
    try:
        return parse(text)
    except error as exc:
        assert str(exc), "an error must say what is wrong"
        return None
    finally:
        spent = time.thread_time() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert spent < MAX_CPU_SECONDS, f"{spent:.2f} CPU seconds for {size} characters"
        assert peak < MAX_PEAK_BYTES + 50 * size, f"{peak} bytes for {size} characters"


def random_game(seed: int, plies: int = 400) -> State:
    rng = random.Random(seed)
    state = State()
    while not state.is_terminal and state.ply < plies:
        state.apply(rng.choice(state.legal_actions()))
    return state


GAMES = [random_game(seed) for seed in range(3)]
POSITIONS = [
    state.to_text()
    for game in GAMES
    for state in [State().apply_all(game.actions[:k]) for k in (0, 7, 12, 40, len(game.actions))]
]
RECORDS = [GameRecord.from_state(game, "random", "random") for game in GAMES]
BGA = next((Path(__file__).parents[2] / "data" / "games" / "bga").glob("*.json")).read_text()

#: Characters the formats use, and the tricky ones around them.
_TRICKY = ["\u00b2", "\u0663", "\uff11", "\ufeff", "\x00", "\u2028", "place", "pass", "P0[", "999"]
ALPHABET = st.sampled_from([*"0123456789 -/xXABCDEFGHIJKrRmMwb.;{}[]()\"'=:,\n\t", *_TRICKY])


@st.composite
def mutated(draw: st.DrawFn, bases: list[str]) -> str:
    """A valid text with a few random edits: deletions, insertions, replacements."""
    text = draw(st.sampled_from(bases))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = min(len(text), i + draw(st.integers(0, 8)))
        insert = "".join(draw(st.lists(ALPHABET, max_size=4)))
        text = text[:i] + insert + text[j:]
    return text


def texts(bases: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=300), mutated(bases))


# --- actions ------------------------------------------------------------------------------


@FUZZ
@given(st.one_of(st.text(max_size=40), st.sampled_from(["E5", "e5-e8", "xE5-E9", "xa2", "pass"])))
def test_action_strings(text: str) -> None:
    action = answers(str_to_action, text, NotationError)
    if action is not None:
        assert str_to_action(action_to_str(action)) == action


@FUZZ
@given(st.one_of(st.integers(), st.floats(), st.booleans(), st.text(max_size=5), st.none()))
def test_action_indices(value: Any) -> None:
    name = answers(action_to_str, value, NotationError)
    if name is not None:
        assert str_to_action(name) == value


# --- position text ------------------------------------------------------------------------


@FUZZ
@given(texts(POSITIONS))
def test_position_text(text: str) -> None:
    state = answers(State.from_text, text, PositionError)
    if state is not None:
        assert State.from_text(state.to_text()) == state
        state.legal_actions()  # a position that reads is one the engine can play from


# --- records ------------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(texts([write_record(r) for r in RECORDS]))
def test_yinsh_records(text: str) -> None:
    record = answers(read_record, text, RecordError)
    if record is not None:
        assert read_record(write_record(record)) == record


@pytest.mark.slow
@FUZZ
@given(texts([write_sgf(r) for r in RECORDS]))
def test_sgf_records(text: str) -> None:
    record = answers(read_sgf, text, RecordError)
    if record is not None:
        assert read_sgf(write_sgf(record)) == record


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@pytest.mark.slow
@FUZZ
@given(
    st.one_of(
        texts([BGA]),
        JSON_VALUES.map(json.dumps),
        st.dictionaries(
            st.sampled_from(["actions", "result", "white", "black", "rings_to_win"]), JSON_VALUES
        ).map(json.dumps),
    )
)
def test_bga_records(text: str) -> None:
    answers(read_bga_json, text, RecordError)


# --- the engine protocol ------------------------------------------------------------------

COMMANDS = ["yinsh", "new", "position", "play", "undo", "legal", "state", "history", "go"]
COMMANDS += ["seed", "ping", "name", "help", "bogus"]


@st.composite
def protocol_lines(draw: st.DrawFn) -> str:
    words = [draw(st.sampled_from(COMMANDS))]
    for _ in range(draw(st.integers(0, 3))):
        words.append(
            draw(
                st.one_of(
                    st.text(max_size=12).filter(lambda w: w.split() == [w]),
                    st.sampled_from(["E5", "sims=1", "time=0.01", "rings_to_win=1", "-1"]),
                    st.sampled_from(POSITIONS),
                    st.integers(-(10**20), 10**20).map(str),
                )
            )
        )
    return " ".join(words)


@FUZZ
@given(st.lists(st.one_of(protocol_lines(), st.text(max_size=60)), min_size=1, max_size=6))
def test_protocol_lines(lines: list[str]) -> None:
    session = EngineSession(make_agent("random", seed=0))
    for line in lines:
        reply = answers(session.handle, line, ValueError)  # handle itself never raises
        assert reply is None or (reply and "\n" not in reply)
        assert (reply is None) == (not line.split())


@FUZZ
@given(st.binary(max_size=300))
def test_protocol_byte_stream(data: bytes) -> None:
    out = io.BytesIO()
    serve(make_agent("random", seed=0), io.BytesIO(data), out)
    replies = out.getvalue().decode("utf-8").splitlines()
    assert all(replies), "every reply is a non-empty line"


# --- config overrides ---------------------------------------------------------------------


def _override(item: str) -> object:
    data: dict[str, Any] = {}
    apply_override(data, item)
    return config_from_dict(data)


KEYS = ["seed", "iterations", "optim.lr", "eval.opponents", "network.blocks", "search", "nope.x"]


@FUZZ
@given(
    st.one_of(
        st.text(max_size=60),
        st.tuples(st.sampled_from(KEYS), st.text(max_size=40)).map("=".join),
        st.tuples(
            st.sampled_from(KEYS),
            st.sampled_from(["[" * 400, "&a [1]", "*a", "{a: &x [1, *x]}", "1e999", ".nan", "-1"]),
        ).map("=".join),
    )
)
def test_config_overrides(item: str) -> None:
    answers(_override, item, ConfigError)


@pytest.mark.parametrize(
    "item",
    [
        "seed=" + "[" * 5000,
        "seed=[&a [1,1,1,1,1,1,1,1,1], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], "
        + ", ".join(f"&{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("bcdefgh", "cdefghi"))
        + "]",
    ],
    ids=["deep-nesting", "alias-bomb"],
)
def test_config_override_yaml_bombs_are_config_errors(item: str) -> None:
    with pytest.raises(ConfigError, match=r"nested deeper|aliases"):
        _override(item)
