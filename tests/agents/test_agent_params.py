"""Agent parameters: declared once with their constraints, checked where a spec is parsed.

The probes of the hardening issue (``greedy:noise=nan``, ``mcts:c=inf``,
``alphabeta:tt_size=-1``, ``mcts:sims=1,sims=2``, ``mcts:time=nan``), then every
built-in agent's every key with bad values, then arbitrary spec text
(Hypothesis): an :class:`AgentSpecError` naming the key and a bounded slice of
the value, before anything is built.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field

from agents import AgentSpecError, MCTSAgent, make_agent, register_agent
from agents.evaluation.eval_cli import main as eval_main
from agents.params import MAX_SIMS, ParamError, check, checked, declared
from agents.spec import _resolve, check_spec, registered_agents, spec_params, unregister_agent

#: Longest error message any spec may produce (the spec and values are clipped).
MAX_MESSAGE = 600
#: What each agent needs to be checkable (its required keys).
REQUIRED = {"net": "path=x", "sb3": "path=x", "rllib": "path=x", "engine": "cmd=x"}
BUILTIN = sorted(
    name
    for name, factory in registered_agents().items()
    if isinstance(factory, str) or factory.__module__.split(".")[0] in ("agents", "train")
)


def _error(spec: str) -> str:
    with pytest.raises(AgentSpecError) as info:
        check_spec(spec)
    message = str(info.value)
    assert len(message) < MAX_MESSAGE and "\n" not in message, message
    return message


@pytest.mark.parametrize(
    ("spec", "key", "problem"),
    [
        ("greedy:noise=nan", "noise", "finite"),
        ("mcts:c=inf", "c", "finite"),
        ("alphabeta:tt_size=-1", "tt_size", ">= 0"),
        ("mcts:sims=1,sims=2", "sims", "given twice"),
        ("mcts:time=nan", "time", "finite"),
        ("mcts:time=1e400", "time", "finite"),  # float() reads it as inf
        ("mcts:sims=1e3", "sims", "integer"),
        ("mcts:sims=", "sims", "integer"),
        ("mcts:sims=\u0663", "sims", "integer"),  # int() would read an Arabic-Indic 3
        ("mcts:sims=" + "9" * 5000, "sims", "too long"),
        ("mcts:sims=99999999999", "sims", f"<= {MAX_SIMS}"),
        ("mcts:eval_weight=-0.5", "eval_weight", ">= 0"),
        ("mcts:SIMS=5", "SIMS", "unknown parameter"),
        ("mcts:seed=5", "seed", "unknown parameter"),
        ("alphabeta:depth=true", "depth", "integer"),
        ("openspiel_mcts:solve=maybe", "solve", "true or false"),
        ("engine:cmd=x,timeout=0", "timeout", ">= 0.001"),
        ("engine:cmd='unclosed", "cmd", "split"),
        ("engine:cmd=a\x00b", "cmd", "NUL"),
        ("net:path=x,device=gpu", "device", "cpu, cuda"),
        ("net:path=x,backend=tf", "backend", "'onnx'"),
        ("pretrained:threads=0", "threads", ">= 1"),
        ("net", "path", "needs path="),
        ("engine", "cmd", "needs cmd="),
        ("sb3:path=", "path", "must be given"),
    ],
)
def test_a_bad_parameter_is_refused_where_the_spec_is_parsed(
    spec: str, key: str, problem: str
) -> None:
    message = _error(spec)
    assert key in message and problem in message


@pytest.mark.parametrize("spec", ["", "  ", "mcts:", "mcts:,", ":sims=5", "=", ",,", "mcts:=5"])
def test_malformed_specs_are_refused(spec: str) -> None:
    _error(spec)


def test_the_error_quotes_the_value_as_given_and_only_a_slice_of_it() -> None:
    assert "got 'nan'" in _error("greedy:noise=nan")
    message = _error("greedy:noise=" + "x" * 100_000)
    assert "noise" in message and "xxx..." in message


def test_a_bad_spec_stops_yinsh_eval_before_any_game(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    code = eval_main(["greedy:noise=nan", "random", "-n", "2", "--json", str(out), "--no-progress"])
    assert code == 2 and not out.exists()
    assert "noise" in capsys.readouterr().err


def _bad_values(kind: type) -> list[str]:
    if kind is bool:
        return ["", "maybe", "2", "truee", "\u0661"]
    if kind is str:
        return ["a\x00b"]
    return ["", "nan", "-nan", "inf", "-inf", "1e400", "-1e400", "abc", "1" + "0" * 30,
            "-" + "1" * 30, "\u0663", "0x10", "9" * 500]  # fmt: skip


@pytest.mark.parametrize("name", BUILTIN)
def test_every_key_of_every_agent_refuses_bad_values(name: str) -> None:
    factory = _resolve(name, name)
    params = declared(factory)
    assert params or name == "random"
    prefix = f"{name}:{REQUIRED[name]}," if name in REQUIRED else f"{name}:"
    for key, param in params.items():
        if name in REQUIRED and REQUIRED[name].startswith(f"{key}="):
            continue
        for bad in _bad_values(param.kind):
            message = _error(f"{prefix}{key}={bad}")
            assert key in message, message


@pytest.mark.parametrize("name", BUILTIN)
def test_every_number_of_every_agent_is_bounded_and_finite(name: str) -> None:
    """Each built-in parameter declares its range: no spec starts unbounded work."""
    for key, param in declared(_resolve(name, name)).items():
        assert param.adapter is not None, f"{name}:{key} has no declaration"
        if param.kind in (int, float):
            for value in (10**30, -(10**30)) + ((float("nan"),) if param.kind is float else ()):
                with pytest.raises(ParamError, match=key):
                    check(param, value)


@pytest.mark.parametrize("name", BUILTIN)
def test_every_builtin_constructor_checks_its_arguments(name: str) -> None:
    factory: Any = _resolve(name, name)
    assert hasattr(factory.__init__, "__wrapped__") or not declared(factory), name


def test_a_python_call_gets_the_same_checks() -> None:
    with pytest.raises(ValueError, match="sims must be >= 1, got 0"):
        MCTSAgent(sims=0)
    with pytest.raises(ValueError, match="c must be a finite number"):
        MCTSAgent(c=float("inf"))
    with pytest.raises(ValueError, match="not true or false"):
        MCTSAgent(sims=True)
    agent = MCTSAgent(sims=np.int64(7), c=np.float32(0.5))  # numpy numbers are numbers
    assert agent.sims == 7 and type(agent.sims) is int


def test_spec_params_gives_the_checked_converted_values() -> None:
    assert spec_params("mcts:sims=50,time=0.5, c = 2 ") == (
        "mcts",
        {"sims": 50, "time": 0.5, "c": 2.0},
    )
    assert spec_params("openspiel_mcts:solve=OFF") == ("openspiel_mcts", {"solve": False})
    assert spec_params("mcts:time=-0") == ("mcts", {"time": 0.0})


def test_a_new_parameter_with_its_constraint_is_one_line() -> None:
    from agents import RandomAgent

    class Budgeted(RandomAgent):
        @checked
        def __init__(
            self,
            seed: int | None = None,
            moves: Annotated[int, Field(ge=1, le=9)] = 3,  # the one line
        ) -> None:
            super().__init__(seed)
            self.moves = moves

    register_agent("test-budgeted", Budgeted)
    try:
        assert make_agent("test-budgeted:moves=9").moves == 9  # type: ignore[attr-defined]
        assert "moves must be <= 9, got '10'" in _error("test-budgeted:moves=10")
        with pytest.raises(ValueError, match="moves must be >= 1"):
            Budgeted(moves=0)
    finally:
        unregister_agent("test-budgeted")


def test_an_undeclared_runtime_agent_still_gets_typed_finite_values() -> None:
    from agents import RandomAgent

    def factory(seed: int | None = None, weight=1.0):  # type: ignore[no-untyped-def]
        agent = RandomAgent(seed)
        agent.weight = weight  # type: ignore[attr-defined]
        return agent

    register_agent("test-undeclared", factory)
    try:
        assert make_agent("test-undeclared:weight=2").weight == 2.0  # type: ignore[attr-defined]
        assert "finite" in _error("test-undeclared:weight=nan")
    finally:
        unregister_agent("test-undeclared")


# --- arbitrary text ---------------------------------------------------------------------

FUZZ = settings(
    max_examples=150,
    deadline=None,  # no wall-clock limit: a loaded machine is slow (tests/conftest.py)
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
CHEAP = ["random", "greedy", "mcts", "alphabeta"]
KEYS = ["sims", "time", "c", "noise", "depth", "tt_size", "rollout_limit", "eval_weight",
        "place_depth", "SIMS", "", "="]  # fmt: skip
VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["nan", "inf", "-0", "1e400", "0", "1", "-1", "0.5", "true", "2", "1e6"]),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@st.composite
def specs(draw: st.DrawFn) -> str:
    items = draw(st.lists(st.tuples(st.sampled_from(KEYS), VALUES), max_size=3))
    body = ",".join(f"{k}={v}" for k, v in items)
    return draw(st.sampled_from(CHEAP)) + draw(st.sampled_from([":", ""])) + body


@pytest.mark.slow
@FUZZ
@given(st.one_of(specs(), st.text(max_size=40)))
def test_any_spec_is_refused_clearly_or_builds_an_agent(spec: str) -> None:
    """Whatever check_spec accepts (cheap agents) builds; whatever it refuses, it names."""
    try:
        name, _ = spec_params(spec)
    except AgentSpecError as exc:
        assert len(str(exc)) < MAX_MESSAGE
        return
    if name not in CHEAP:
        return  # arbitrary text naming e.g. net:path=...: not built here
    agent = make_agent(spec, seed=0)
    agent.close()


def test_an_engine_log_that_cannot_be_written_is_refused_when_built(tmp_path: Any) -> None:
    for log, problem in [(tmp_path / "no" / "e.log", "does not exist"), (tmp_path, "folder")]:
        with pytest.raises(AgentSpecError, match=f"log .*{problem}"):
            make_agent(f"engine:cmd=yinsh-engine random,log={log}")
    assert list(tmp_path.iterdir()) == []
