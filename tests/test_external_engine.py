"""``engine:cmd=...``: external programs as agents, well-behaved or not."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents import Agent, AgentFailure, AgentSpecError, make_agent
from agents.external import ExternalAgent
from yinsh_env import State

ENGINE = shutil.which("yinsh-engine") or f"{shlex.quote(sys.executable)} -m agents.engine_cli"

#: A protocol engine (the project's own server over a random agent) that
#: misbehaves at its N-th ``go``: MODE is crash, stall, garbage, illegal or unreadable
#: (stubborn: never exits by itself; any other MODE behaves); a third argument
#: names a file to append its pid to.
FAKE_ENGINE = textwrap.dedent(
    """
    import os, sys, time
    from agents import make_agent
    from agents.protocol import EngineSession

    mode, when = sys.argv[1], int(sys.argv[2])
    if len(sys.argv) > 3:
        with open(sys.argv[3], "a") as f:
            f.write(f"{os.getpid()}\\n")
    session = EngineSession(make_agent("random", seed=0), name="fake")
    gos = 0
    for line in sys.stdin:
        if line.startswith("go"):
            gos += 1
            if gos == when:
                if mode == "crash":
                    print("fake engine: boom", file=sys.stderr, flush=True)
                    sys.exit(3)
                if mode == "stall":
                    time.sleep(60)
                if mode == "garbage":
                    print("I resign, sort of", flush=True)
                    continue
                if mode == "illegal":
                    print("action pass", flush=True)
                    continue
                if mode == "unreadable":
                    print("action E5-E5", flush=True)
                    continue
        reply = session.handle(line)
        if reply is not None:
            print(reply, flush=True)
        if session.finished:
            break
    if mode == "stubborn":  # ignores quit and end of input
        time.sleep(60)
    """
)


@pytest.fixture
def fake_engine(tmp_path: Path) -> str:
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def write_script(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text(textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def play_game(white: Agent, black: Agent, state: State | None = None) -> State:
    state = state or State()
    while not state.is_terminal:
        agent = white if state.to_act == 0 else black
        state.apply(agent.act(state))
    return state


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_spec_parameters_and_bad_specs(tmp_path: Path) -> None:
    agent = make_agent(f"engine:cmd={ENGINE} random,timeout=2.5,sims=7,time=0.5")
    assert isinstance(agent, ExternalAgent)
    assert (agent.timeout, agent.sims, agent.time) == (2.5, 7, 0.5)
    assert agent.argv[-1] == "random"
    quoted = make_agent(f'engine:cmd="{ENGINE} mcts:sims=5,c=1",timeout=3')
    assert isinstance(quoted, ExternalAgent)
    assert quoted.argv[-1] == "mcts:sims=5,c=1" and quoted.timeout == 3
    for bad in (
        "engine",
        "engine:cmd=",
        "engine:cmd=no-such-program-xyz --flag",
        f"engine:cmd={ENGINE} random,timeout=0",
        f"engine:cmd={ENGINE} random,timeout=soon",
        "engine:cmd=python3 'unclosed",
    ):
        with pytest.raises(AgentSpecError):
            make_agent(bad)


def test_games_against_random_stay_in_sync_incrementally(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log}", seed=5)
    rival = make_agent("random", seed=6)
    plies = 0
    try:
        for game in range(3):
            engine.reset(game)
            rival.reset(game)
            white, black = (engine, rival) if game % 2 == 0 else (rival, engine)
            final = play_game(white, black, State(rings_to_win=1 + game % 3))
            assert final.is_terminal
            plies += final.ply
        assert isinstance(engine, ExternalAgent) and engine.engine_name == "random"
    finally:
        engine.close()
    transcript = log.read_text().splitlines()
    commands = [line[2:].split()[0] for line in transcript if line.startswith("> ")]
    # One engine, one handshake, one 'new' per game, and each action is played once
    # (all but the few after the engine's last decision of a game).
    assert commands.count("yinsh") == 1
    assert [c for c in commands if c == "new"] == ["new"] * 3
    assert "> new rings_to_win=2" in transcript
    assert "> seed 1" in transcript
    assert commands.count("go") > 30
    assert plies - 30 <= commands.count("play") <= plies
    assert commands[-1] == "quit"


def test_positions_off_the_start_and_new_histories_resync(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log}", seed=1)
    try:
        state = State().apply_all(["E5", "F6", "G7"])
        assert engine.act(state) in state.legal_actions()
        # a different line from the same root: a fresh 'new' and replay
        other = State().apply_all(["A2", "B2"])
        assert engine.act(other) in other.legal_actions()
        # a position set up from text: sent with 'position'
        text = State().apply_all(["E5", "F6", "G7", "H8"]).to_text()
        setup = State.from_text(text)
        assert engine.act(setup) in setup.legal_actions()
        setup.push("A2")
        setup.push(engine.act(setup))
    finally:
        engine.close()
    transcript = log.read_text()
    assert transcript.count("> new") == 2
    assert f"> position {text}" in transcript
    assert "> play A2\n" in transcript


def test_go_budget_is_forwarded(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log},sims=9")
    try:
        engine.act(State())
        engine.act_with_budget(State(), sims=3, time=0.2)
    finally:
        engine.close()
    transcript = log.read_text()
    assert "> go sims=9\n" in transcript
    assert "> go sims=3 time=0.2\n" in transcript


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", "external engine exited with code 3 before answering 'go' "
                  "(stderr: fake engine: boom)"),
        ("stall", "external engine timed out: no answer to 'go' within 0.5s"),
        ("garbage", "external engine answered 'I resign, sort of' to 'go', "
                    "expected 'action <action>'"),
        ("illegal", "external engine chose the illegal action pass in position "),
        ("unreadable", "external engine answered an unreadable action: unknown action 'E5-E5'"),
    ],
)  # fmt: skip
def test_misbehaving_engine_fails_cleanly_mid_game_and_is_restarted(
    fake_engine: str, tmp_path: Path, mode: str, reason: str
) -> None:
    pids = tmp_path / "pids"
    engine = make_agent(f"engine:cmd={fake_engine} {mode} 8 {pids},timeout=0.5", seed=0)
    rival = make_agent("random", seed=0)
    state = State()
    with pytest.raises(AgentFailure) as failure:
        play_game(engine, rival, state)
    assert failure.value.reason.startswith(reason)
    assert state.ply == 14  # its 8th decision, in the middle of the game
    (pid,) = map(int, pids.read_text().split())
    assert not is_running(pid)  # killed, not left behind
    # The next game starts a fresh engine, which plays until its 8th go again.
    engine.reset(1)
    state = State()
    with pytest.raises(AgentFailure):
        play_game(engine, rival, state)
    assert state.ply == 14
    assert len(pids.read_text().split()) == 2
    engine.close()


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("import sys; sys.exit(0)",
         "external engine exited with code 0 before answering 'yinsh 1'"),
        ("print('hello, I am an engine', flush=True)", "external engine failed the handshake"),
        ("import time; time.sleep(60)", "external engine timed out: no answer to 'yinsh 1'"),
        (
            "import sys\nfor line in sys.stdin:\n"
            "    print('yinsh ok 1 name=x' if line[0] == 'y' else 'error no', flush=True)",
            "external engine answered 'error no' to 'new rings_to_win=3', expected 'ok'",
        ),
    ],
)  # fmt: skip
def test_broken_engines_fail_with_a_reason(tmp_path: Path, body: str, reason: str) -> None:
    cmd = write_script(tmp_path, "broken.py", body)
    engine = make_agent(f"engine:cmd={cmd},timeout=0.5,startup=0.5")
    with pytest.raises(AgentFailure) as failure:
        engine.act(State())
    assert failure.value.reason.startswith(reason), failure.value.reason
    engine.close()


def test_close_stops_the_engine(fake_engine: str, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    engine = make_agent(f"engine:cmd={fake_engine} none 0 {pids}")
    engine.act(State())
    (pid,) = map(int, pids.read_text().split())
    assert is_running(pid)
    engine.close()
    assert not is_running(pid)


def test_engines_left_open_are_killed_at_interpreter_exit(fake_engine: str, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    spec = f"engine:cmd={fake_engine} stubborn 0 {pids}"
    program = (
        "import sys\n"
        "from agents import make_agent\n"
        "from yinsh_env import State\n"
        "make_agent(sys.argv[1]).act(State())  # and exit without close()\n"
    )
    subprocess.run([sys.executable, "-c", program, spec], check=True, timeout=60)
    (pid,) = map(int, pids.read_text().split())
    assert not is_running(pid)
