"""``engine:cmd=...``: external programs as agents, well-behaved or not."""

from __future__ import annotations

import os
import random
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents import Agent, AgentFailure, AgentSpecError, make_agent
from agents.evaluation.arena import MatchSettings, run_arena
from agents.protocol.external_engine import ExternalAgent
from yinsh_env import Phase, State, action_to_str
from yinsh_env.records.formats import load_record

ENGINE = (
    shutil.which("yinsh-engine") or f"{shlex.quote(sys.executable)} -m agents.protocol.engine_cli"
)
#: Spec parameters for an engine that must not time out: generous beside the
#: seconds an answer or a start takes, however busy the machine.
PATIENT = "timeout=120,startup=300"
#: The answer timeout of a test whose engine stalls: that engine's every earlier
#: answer must beat it too, so it is long beside any answer, however busy the machine.
STALL_TIMEOUT = 5

#: A protocol engine (the project's own server over a random agent) that
#: misbehaves at its N-th ``go``: MODE is crash, stall, garbage, illegal or unreadable
#: (stubborn: never exits by itself; any other MODE behaves); a third argument
#: names a file to append its pid to.
FAKE_ENGINE = textwrap.dedent(
    """
    import os, sys, time
    from agents import make_agent
    from agents.protocol.line_protocol import EngineSession

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
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log},{PATIENT}", seed=5)
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


def engine_commands(log: Path) -> list[str]:
    """The commands in an engine's ``--debug`` transcript."""
    return [line[2:] for line in log.read_text().splitlines() if line.startswith("> ")]


def random_position(plies: int, seed: int) -> State:
    rng = random.Random(seed)
    state = State()
    for _ in range(plies):
        state.apply(rng.choice(state.legal_actions()))
    return state


def test_sync_by_history_placement_or_position(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log},{PATIENT}", seed=1)
    rival = make_agent("random", seed=0)
    text = random_position(plies=16, seed=4).to_text()
    try:
        state = State().apply_all(["E5", "F6", "G7"])
        assert engine.act(state) in state.legal_actions()
        # a different line from the same root: a fresh 'new' and replay
        other = State().apply_all(["A2", "B2"])
        assert engine.act(other) in other.legal_actions()
        # a history-less placement position: reached from the start by placing its rings
        placed = State.from_text(State().apply_all(["E5", "F6", "G7", "H8"]).to_text())
        assert engine.act(placed) in placed.legal_actions()
        # a history-less position with markers: sent with 'position', then followed
        setup = State.from_text(text)
        assert setup.phase == Phase.MOVE
        side = setup.to_act
        answer = engine.act(setup)
        setup.apply(answer)
        while setup.to_act != side:
            setup.apply(rival.act(setup))
        assert not setup.is_terminal
        assert engine.act(setup.copy()) in setup.legal_actions()
    finally:
        engine.close()
    commands = engine_commands(log)
    roots = [c for c in commands if c.startswith(("new", "position"))]
    assert roots == ["new rings_to_win=3"] * 3 + [f"position {text}"]
    third_new = [i for i, c in enumerate(commands) if c.startswith("new")][2]
    after_new = commands[third_new + 1 : third_new + 6]
    assert after_new == ["play E5", "play F6", "play G7", "play H8", "go"]
    after_position = commands[commands.index(roots[3]) :]
    replies = [f"play {action_to_str(a)}" for a in setup.actions]
    assert after_position[1:] == ["go", *replies, "go", "quit"]


def test_history_less_states_are_followed_incrementally(tmp_path: Path) -> None:
    """The arena passes copies without history: the engine still gets one play per action."""
    log = tmp_path / "engine.log"
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log},{PATIENT}", seed=1)
    rival = make_agent("random", seed=2)
    plies = 0
    try:
        for game in range(2):
            engine.reset(game)
            state = State(rings_to_win=1)
            while not state.is_terminal:
                agent = engine if state.to_act == game else rival
                state.apply(agent.act(state.copy()))
            plies += state.ply
    finally:
        engine.close()
    commands = engine_commands(log)
    assert [c for c in commands if c.startswith(("new", "position"))] == ["new rings_to_win=1"] * 2
    plays = [c for c in commands if c.startswith("play")]
    assert plies - 20 <= len(plays) <= plies


def test_go_budget_is_forwarded(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    engine = make_agent(f"engine:cmd={ENGINE} random --debug,log={log},sims=9,{PATIENT}")
    try:
        engine.act(State())
        engine.act_with_budget(State(), sims=3, time=0.2)
    finally:
        engine.close()
    transcript = log.read_text()
    assert "> go sims=9\n" in transcript
    assert "> go sims=3 time=0.2\n" in transcript


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", "external engine exited with code 3 before answering 'go' "
                  "(stderr: fake engine: boom)"),
        ("stall", f"external engine timed out: no answer to 'go' within {STALL_TIMEOUT}s"),
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
    # Only a stall waits for the timeout: the others fail at once, so a generous
    # timeout keeps a busy machine from turning a crash into a time-out.
    timeout = STALL_TIMEOUT if mode == "stall" else 120
    spec = f"engine:cmd={fake_engine} {mode} 8 {pids},timeout={timeout},startup=300"
    engine = make_agent(spec, seed=0)
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


def test_an_engine_gone_before_its_first_command_is_judged_by_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its exit seen first (the write of 'yinsh 1' fails) or its line first: one reason."""
    from agents.protocol.external_engine import EngineProcess

    send = EngineProcess.send

    def send_after_the_exit(self: EngineProcess, line: str) -> None:
        self.proc.wait(timeout=60)  # the pipe is closed: the write fails, every time
        send(self, line)

    monkeypatch.setattr(EngineProcess, "send", send_after_the_exit)
    cmd = write_script(tmp_path, "greets.py", "print('hello, I am an engine', flush=True)")
    engine = make_agent(f"engine:cmd={cmd},timeout=120,startup=120")
    with pytest.raises(AgentFailure) as failure:
        engine.act(State())
    assert failure.value.reason.startswith("external engine failed the handshake: answered 'hello")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        # Gone before 'yinsh 1' is written (a loaded machine) or before it is answered.
        ("import sys; sys.exit(0)", "external engine exited with code 0 before "),
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
    wait = 0.5 if "sleep" in body else 120  # only the sleeper runs into the time-out
    engine = make_agent(f"engine:cmd={cmd},timeout={wait},startup={wait}")
    with pytest.raises(AgentFailure) as failure:
        engine.act(State())
    assert failure.value.reason.startswith(reason), failure.value.reason
    engine.close()


def test_close_stops_the_engine(fake_engine: str, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    engine = make_agent(f"engine:cmd={fake_engine} none 0 {pids},{PATIENT}")
    engine.act(State())
    (pid,) = map(int, pids.read_text().split())
    assert is_running(pid)
    engine.close()
    assert not is_running(pid)


@pytest.mark.slow
def test_engines_left_open_are_killed_at_interpreter_exit(fake_engine: str, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    spec = f"engine:cmd={fake_engine} stubborn 0 {pids},{PATIENT}"
    program = (
        "import sys\n"
        "from agents import make_agent\n"
        "from yinsh_env import State\n"
        "make_agent(sys.argv[1]).act(State())  # and exit without close()\n"
    )
    subprocess.run([sys.executable, "-c", program, spec], check=True, timeout=300)
    (pid,) = map(int, pids.read_text().split())
    assert not is_running(pid)


# --- through the arena --------------------------------------------------------------


@pytest.mark.slow
def test_arena_match_engine_greedy_against_random_is_the_same_as_in_process() -> None:
    served = run_arena([f"engine:cmd={ENGINE} greedy,{PATIENT}", "random"], games=4, progress=False)
    direct = run_arena(["greedy", "random"], games=4, progress=False)
    (pairing,) = served.pairings
    assert pairing.games == 4 and pairing.a_forfeits == pairing.b_forfeits == 0
    assert pairing.score > 0.5  # greedy beats random
    # The protocol is transparent: seeded, the served agent plays the very same games.
    assert [g.actions for g in served.games] == [g.actions for g in direct.games]
    assert [g.termination for g in served.games] == [g.termination for g in direct.games]


@pytest.mark.slow
def test_arena_scores_a_crashing_or_stalling_engine_as_a_recorded_loss(
    fake_engine: str, tmp_path: Path
) -> None:
    crashing = f"engine:cmd={fake_engine} crash 8,{PATIENT}"  # fails at once, busy or not
    stalling = f"engine:cmd={fake_engine} stall 6,timeout={STALL_TIMEOUT},startup=300"
    result = run_arena(
        [crashing, stalling, "random"],
        2,
        MatchSettings(workers=2),
        progress=False,
        records_dir=tmp_path / "records",
    )
    by_pair = {(p.a, p.b): p for p in result.pairings}
    assert by_pair[(crashing, "random")].losses == 2
    assert by_pair[(stalling, "random")].losses == 2
    assert by_pair[(crashing, stalling)].games == 2  # one of them fails first each game
    reasons = {f["agent"]: f["reason"] for f in result.to_json()["forfeits"]}
    assert "external engine exited with code 3" in reasons[crashing]
    assert "fake engine: boom" in reasons[crashing]
    assert (
        f"external engine timed out: no answer to 'go' within {STALL_TIMEOUT}s" in reasons[stalling]
    )
    records = [load_record(path) for path in sorted((tmp_path / "records").iterdir())]
    assert len(records) == 6
    forfeited = [r for r in records if r.termination == "forfeit"]
    assert len(forfeited) == 6
    for record in forfeited:
        assert record.tags["reason"].startswith("agent failure: external engine")
        loser = record.white if record.result == "B" else record.black
        assert loser != "random"
