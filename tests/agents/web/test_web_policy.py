"""What a web client may have built: the whitelist, the ceilings, and no process or file ever.

Every spec a client can send reaches :class:`agents.web.policy.AgentPolicy`
through three doors (``POST /api/games``, ``/players``, ``/analysis``); each
test knocks on all of them.  Processes and files are watched for directly:
``subprocess.Popen`` and ``os.system`` fail the test if called, ``open``
records any path under the test's sentinel folder, and the folder must stay
empty.
"""

from __future__ import annotations

import builtins
import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_client import Client, serving

from agents.spec import agent_parameters, parse_spec, registered_agents
from agents.web import AgentPolicy, AppConfig, SessionError, YinshServer
from agents.web.http_errors import ECHO_LIMIT
from agents.web.policy import BUDGET, FIXED, MAX_SECONDS, MAX_SIMS, OFFERED

#: The page's own choices (index.html's hint, AppConfig's and yinsh-play's defaults).
PAGE_CHOICES = [
    "random",
    "greedy",
    "alphabeta",
    "alphabeta:depth=3",
    "mcts:sims=200",
    "mcts:sims=400",
    "mcts:sims=1500",
    "pretrained",
    "pretrained:sims=64",
]
#: Keys that name a program, a file or a resource of the server.
DANGEROUS_KEYS = [
    "cmd",
    "path",
    "log",
    "log_file",
    "file",
    "checkpoint",
    "model",
    "config",
    "weights",
    "out",
    "record",
    "device",
    "threads",
    "backend",
    "tt_size",
    "startup",
    "timeout",
]


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    with serving(AppConfig(think_timeout=30)) as srv:
        yield srv


@pytest.fixture
def client(server: YinshServer) -> Client:
    return Client(server)


@pytest.fixture
def watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A sentinel folder, and every attempt to start a process or open a file in it."""
    seen: dict[str, Any] = {"processes": [], "opened": [], "dir": tmp_path}

    def no_process(*args: Any, **kwargs: Any) -> Any:
        seen["processes"].append(args)
        raise AssertionError(f"a client's spec started a process: {args!r}")

    real_open = builtins.open

    def watching_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(tmp_path) in str(file):
            seen["opened"].append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", no_process)
    monkeypatch.setattr(os, "system", no_process)
    monkeypatch.setattr(builtins, "open", watching_open)
    monkeypatch.setattr(io, "open", watching_open)
    yield seen
    assert not seen["processes"] and not seen["opened"], seen
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


def knock(client: Client, spec: str) -> list[tuple[int, Any]]:
    """``spec`` through every door: a new game's two sides, reseating, analysis."""
    answers = [
        client.request("POST", "/api/games", {"white": spec, "delay": 0}),
        client.request("POST", "/api/games", {"black": spec, "delay": 0}),
    ]
    game = client.new()
    answers.append(client.request("POST", f"/api/games/{game['id']}/players", {"black": spec}))
    answers.append(client.request("POST", f"/api/games/{game['id']}/analysis", {"spec": spec}))
    client.ok("DELETE", f"/api/games/{game['id']}")
    for status, data in answers:
        if status < 300 and isinstance(data, dict) and "id" in data:
            client.request("DELETE", f"/api/games/{data['id']}")
    return answers


def assert_refused(answers: list[tuple[int, Any]], status: int | tuple[int, ...]) -> None:
    wanted = (status,) if isinstance(status, int) else status
    for got, data in answers:
        assert got in wanted, (got, data)
        assert isinstance(data, dict) and set(data) == {"error"}, data
        assert len(data["error"]) < 500


def test_the_issues_engine_command_is_refused_at_every_door(
    client: Client, watched: dict[str, Any]
) -> None:
    target = watched["dir"] / "pwned"
    for spec in (
        f"engine:cmd=touch {target}",
        f"engine:cmd=touch {target},log={target}.log",
        f'engine:cmd="touch {target}",timeout=5',
        f"  engine  :  cmd = touch {target}",
    ):
        answers = knock(client, spec)
        assert_refused(answers, 403)
        assert all("not offered" in data["error"] for _, data in answers)


@pytest.mark.parametrize("key", DANGEROUS_KEYS)
def test_no_agent_takes_a_program_or_a_path_from_a_client(
    client: Client, watched: dict[str, Any], key: str
) -> None:
    sentinel = watched["dir"] / f"sentinel-{key}"
    for name in sorted(registered_agents()):
        for value in (str(sentinel), f"touch {sentinel}"):
            answers = knock(client, f"{name}:{key}={value}")
            assert_refused(answers, (400, 403))


def test_the_pages_own_choices_stay_allowed(client: Client, server: YinshServer) -> None:
    info = client.ok("GET", "/api/info")
    for spec in [*PAGE_CHOICES, *info["defaults"].values()]:
        if spec == "human":
            continue
        game = client.new(white="human", black=spec)
        assert game["players"]["black"] == server.policy.admit(spec).spec
        client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": spec})
        client.ok("DELETE", f"/api/games/{game['id']}")


@pytest.mark.parametrize(
    "spec, status, words",
    [
        ("mcts:sims=100000000", 400, "sims"),  # past what any spec may ask
        ("mcts:sims=1000000", 403, "sims"),  # a valid spec, past what the web allows
        (f"mcts:sims={MAX_SIMS + 1}", 403, "sims"),
        ("mcts:time=nan", 400, "time"),
        ("mcts:time=inf", 400, "time"),
        ("mcts:time=-1", 400, "time"),
        ("mcts:time=1e9", 400, "time"),
        (f"mcts:time={MAX_SECONDS + 1:g}", 403, "time"),
        ("mcts:sims=\u0661\u0660\u0660", 400, "sims"),  # Arabic-Indic digits: int() takes them
        ("mcts:sims=1,sims=2", 400, "sims"),
        ("mcts:c=inf", 400, "c"),
        ("greedy:noise=nan", 400, "noise"),
        ("alphabeta:depth=99", 400, "depth"),
        ("alphabeta:depth=9", 403, "depth"),
        ("alphabeta:tt_size=100000000", 403, "tt_size"),
        ("pretrained:sims=100000", 403, "sims"),
        ("pretrained:threads=64", 403, "threads"),
        ("pretrained:device=cuda", 403, "device"),
        ("mcts:sim=3", 400, "sim"),
        ("nosuch", 400, "nosuch"),
        ("net", 403, "net"),
        ("openspiel_mcts", 403, "openspiel_mcts"),
        ("x" * 5000, 400, "characters"),
        ("mcts:sims=" + "9" * 5000, 400, "characters"),
    ],
)
def test_budgets_have_ceilings_and_values_are_plain_numbers(
    client: Client, spec: str, status: int, words: str
) -> None:
    answers = knock(client, spec)
    assert_refused(answers, status)
    assert all(words in data["error"] for _, data in answers), answers


def test_specs_are_stored_in_canonical_form(client: Client) -> None:
    for spec, canonical in (
        ("mcts:sims= 0100", "mcts:sims=100"),
        ("  greedy ", "greedy"),
        ("", "human"),
        ("alphabeta:time=0.50", "alphabeta:time=0.5"),
        ("mcts:sims=+1000", "mcts:sims=1000"),
    ):
        game = client.new(white="human", black=spec)
        assert game["players"]["black"] == canonical
        client.ok("DELETE", f"/api/games/{game['id']}")
    # numbers are read as written: int() would read "1_000" as 1000
    status, data = client.request("POST", "/api/games", {"black": "mcts:sims=1_000"})
    assert status == 400 and "sims must be an integer" in data["error"], data


def test_the_operators_specs_are_allowed_as_written_plus_a_bounded_budget() -> None:
    policy = AgentPolicy(["mcts:sims=100000", "greedy"])
    admitted = policy.admit("mcts:sims=100000")
    assert admitted.ceiling is None and admitted.build == "mcts:sims=100000"
    extended = policy.admit("mcts:sims=100000,time=2")
    assert extended.ceiling == MAX_SECONDS and extended.build == "mcts:sims=100000,time=2.0"
    with pytest.raises(SessionError) as refused:
        policy.admit("mcts:sims=100000,time=60")
    assert refused.value.status == 403
    assert policy.offered()[0] == "mcts:sims=100000"
    assert policy.admit("greedy").ceiling == MAX_SECONDS  # built in: it keeps the ceilings


def test_alphabeta_is_built_with_a_bounded_table_whatever_the_client_says() -> None:
    admitted = AgentPolicy().admit("alphabeta:depth=3")
    assert admitted.spec == "alphabeta:depth=3"
    _, params = parse_spec(admitted.build)
    assert params == {"tt_size": FIXED["alphabeta"]["tt_size"], "depth": "3"}


def _spec(name: str, pairs: list[tuple[str, str]]) -> str:
    return name + ":" + ",".join(f"{key}={value}" for key, value in pairs)


SPECS = st.one_of(
    st.text(max_size=60),
    st.builds(
        _spec,
        st.sampled_from([*sorted(registered_agents()), "x", ""]),
        st.lists(
            st.tuples(
                st.sampled_from([*DANGEROUS_KEYS, "sims", "time", "c", "depth", "noise", "seed"]),
                st.one_of(
                    st.text(max_size=12),
                    st.integers(-10, 10**12).map(str),
                    st.sampled_from(["nan", "inf", "-0", "1e3", '"1"', "1,sims=9", "'x'"]),
                ),
            ),
            max_size=4,
        ),
    ),
)


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(spec=SPECS)
def test_whatever_the_spec_what_is_built_is_on_the_whitelist(spec: str) -> None:
    policy = AgentPolicy(["mcts:sims=100000"])
    try:
        admitted = policy.admit(spec)
    except SessionError as exc:
        assert exc.status in (400, 403) and len(str(exc)) < 500
        return
    name, params = parse_spec(admitted.build)
    if admitted.ceiling is None:
        assert admitted.build == "mcts:sims=100000"
        return
    assert name in OFFERED
    open_keys = dict(OFFERED[name])
    if admitted.build.startswith("mcts:sims=100000,"):  # the operator's, plus a budget
        del params["sims"]
        open_keys = BUDGET
    for key, value in params.items():
        if key in FIXED.get(name, {}) and value == FIXED[name][key]:
            continue
        assert key in open_keys and key in agent_parameters(name), (spec, admitted)
        bound = open_keys[key]
        assert bound.low <= float(value) <= bound.high, (spec, admitted)


def test_echoes_are_bounded_slices(client: Client) -> None:
    """A long value is quoted by a slice, never whole (the issue: 900 KB in, 2.7 MB out)."""
    spec = "mcts:" + "c" * 200 + "=1"
    status, data = client.request("POST", "/api/games", {"white": spec})
    assert status == 400 and "c" * (ECHO_LIMIT + 1) not in data["error"]
