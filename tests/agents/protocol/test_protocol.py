"""The engine protocol, served in-process and by the ``yinsh-engine`` program."""

from __future__ import annotations

import io
import os
import queue
import random
import shlex
import shutil
import subprocess
import sys
import threading

import pytest

from agents import Agent, AgentFailure, RandomAgent, make_agent, register_agent
from agents.baselines.alphabeta import AlphaBetaAgent
from agents.baselines.mcts import MCTSAgent
from agents.protocol.line_protocol import (
    MAX_GO_SECONDS,
    MAX_GO_SIMS,
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    EngineSession,
    serve,
)
from yinsh_env import Phase, State, action_to_str, str_to_action
from yinsh_env.engine.actions import RING_OFFSET, ROW_OFFSET

#: The engine program: the console script when installed, else the module.
ENGINE = (
    shutil.which("yinsh-engine") or f"{shlex.quote(sys.executable)} -m agents.protocol.engine_cli"
)


class BudgetRecorder(RandomAgent):
    """A random agent that remembers the budgets it was given and its resets."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.budgets: list[tuple[int | None, float | None]] = []
        self.resets = 0

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.resets += 1

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        self.budgets.append((sims, time))
        return self.act(state)


class Session(EngineSession):
    def ask(self, line: str) -> str:
        """The reply to a command (blank lines aside, every command gets one)."""
        reply = self.handle(line)
        assert reply is not None
        return reply


def session(agent: Agent | None = None) -> Session:
    return Session(agent or make_agent("random", seed=0))


def snapshot(s: EngineSession) -> tuple[str, list[int]]:
    return s.state.to_text(), s.state.actions


def test_handshake_and_identity() -> None:
    s = session()
    assert s.ask(f"yinsh {PROTOCOL_VERSION}") == f"yinsh ok {PROTOCOL_VERSION} name=random"
    assert s.ask("yinsh") == f"yinsh ok {PROTOCOL_VERSION} name=random"
    assert s.ask("yinsh 99").startswith("error unsupported protocol version '99'")
    assert Session(RandomAgent(), name="my engine").ask("name") == "name my_engine"
    assert s.ask("ping") == "pong"
    assert s.ask("ping 42 x") == "pong 42 x"
    help_words = s.ask("help").split()
    assert help_words[0] == "help"
    for command in ("yinsh", "new", "play", "legal", "state", "go", "quit", "position", "undo"):
        assert command in help_words


def test_new_state_legal_match_the_engine() -> None:
    s = session()
    assert s.ask("state") == "state to_act=W phase=place result=none"
    assert s.ask("legal") == " ".join(["legal", *State().legal_action_names()])
    assert s.ask("play E5") == "ok"
    assert s.ask("state") == "state to_act=B phase=place result=none"
    assert "E5" not in s.ask("legal").split()
    assert s.ask("new rings_to_win=1") == "ok"
    assert s.state == State(rings_to_win=1)
    assert s.ask("new") == "ok"
    assert s.state == State()
    assert s.ask("NEW") == "ok"  # command words in any case


def test_play_accepts_any_case_and_several_actions_atomically() -> None:
    s = session()
    assert s.ask("play e5 f6") == "ok"
    assert s.ask("history") == "history E5 F6"
    before = snapshot(s)
    reply = s.ask("play G7 E5 H8")  # E5 is taken: nothing of the line is applied
    assert reply.startswith("error illegal action E5")
    assert snapshot(s) == before


@pytest.mark.parametrize(
    "line",
    [
        "play E5",  # occupied
        "play zz",
        "play E5-E8",  # a move during placement
        "play",
        "play pass",
        "new rings_to_win=9",
        "new rings_to_win=x",
        "new rings_to_win=nan",
        "new rings_to_win=\u0663",  # int() reads it as 3
        "new rings_to_win=" + "9" * 5000,  # int() refuses past 4300 digits, in Python's words
        "new colour=white",
        "position 4/7/8 w",
        "undo 99",
        "undo -1",
        "undo x",
        "go sims=0",
        "go time=-1",
        "go depth=3",
        "legal now",
        "state please",
        "seed",
        "seed x",
        "fly to the moon",
        "\x00\x01\x02",
        "é€ 🤖",
    ],
)
def test_bad_commands_get_an_error_and_change_nothing(line: str) -> None:
    s = session()
    s.ask("play E5")
    before = snapshot(s)
    reply = s.ask(line)
    assert reply.startswith("error "), reply
    assert "\n" not in reply
    assert snapshot(s) == before
    assert s.ask("history") == "history E5"


def test_a_bad_variant_is_named_in_the_protocols_words() -> None:
    reply = session().ask("new rings_to_win=nan")  # was int()'s "invalid literal for int()"
    assert reply == "error bad value 'rings_to_win=nan' for new: must be an integer 1..5"


def test_unknown_command_is_named() -> None:
    assert session().handle("frobnicate 3") == "error unknown command 'frobnicate'"


def test_undo() -> None:
    s = session()
    s.ask("play E5 F6 G7")
    assert s.ask("undo") == "ok"
    assert s.ask("history") == "history E5 F6"
    assert s.ask("undo 2") == "ok"
    assert s.state == State()
    assert s.ask("undo").startswith("error cannot undo 1")


def test_position_round_trip_and_reset() -> None:
    agent = BudgetRecorder(seed=0)
    s = session(agent)
    s.ask("play E5 F6")
    reply = s.ask("position")
    assert reply == f"position {s.state.to_text()}"
    text = reply.split(" ", 1)[1]
    assert s.ask("new") == "ok"
    resets = agent.resets
    assert s.ask(f"position {text}") == "ok"
    assert s.state.to_text() == text
    assert s.ask("history") == "history"  # position starts a new history
    assert agent.resets == resets + 1  # the agent forgets the previous game
    assert s.ask("undo").startswith("error")


def test_go_answers_legally_without_playing_and_passes_the_budget() -> None:
    agent = BudgetRecorder(seed=0)
    s = session(agent)
    before = snapshot(s)
    reply = s.ask("go")
    word, action = reply.split()
    assert word == "action" and action in State().legal_action_names()
    assert snapshot(s) == before  # not played until told
    assert s.ask("go sims=50 time=0.25").startswith("action ")
    assert agent.budgets == [(None, None), (50, 0.25)]


def test_analyse_reports_the_search_without_playing() -> None:
    s = session(make_agent("mcts:sims=40", seed=0))
    s.ask("new")
    s.ask("play E5 F6")
    before = snapshot(s)
    word, action, *fields = s.ask("analyse").split()
    assert word == "analysis" and action in s.state.legal_action_names()
    found = dict(field.split("=", 1) for field in fields)
    assert -1.0 <= float(found["value"]) <= 1.0 and found["sims"] == "40"
    assert found["pv"].split(",")[0] == action
    moves = [m.split(":") for m in found["moves"].split(",")]
    assert [m[0] for m in moves] == s.state.legal_action_names()
    assert sum(int(m[1]) for m in moves) == 40
    assert snapshot(s) == before
    plain = session().ask("analyse").split()
    assert plain[0] == "analysis" and plain[2:] == ["value=none", "sims=0"]
    assert session().ask("analyse now").startswith("error ")


def test_an_agent_made_for_one_variant_refuses_the_other() -> None:
    class BlitzOnly(RandomAgent):
        rings_to_win = 1

    s = session(BlitzOnly(seed=0))
    assert s.state.rings_to_win == 1  # it starts in its own variant
    before = snapshot(s)
    reply = s.ask("new rings_to_win=3")
    assert reply.startswith("error ") and "trained for Blitz" in reply
    assert snapshot(s) == before
    assert s.ask("new rings_to_win=1") == "ok"


def test_go_in_every_phase_including_row_and_ring_removal() -> None:
    """Play whole games by go/play; row and ring removals go through go too."""
    s = session(RandomAgent(seed=3))
    seen = set()
    for _ in range(40):
        s.ask("new rings_to_win=1")
        while s.ask("state").split()[3] == "result=none":
            phase = s.ask("state").split()[2]
            seen.add(phase)
            legal = s.ask("legal").split()[1:]
            action = s.ask("go").split()[1]
            assert action in legal
            assert s.ask(f"play {action}") == "ok"
        if {"phase=row", "phase=ring"} <= seen:
            break
    assert {"phase=place", "phase=move", "phase=row", "phase=ring"} <= seen
    assert s.ask("go").startswith("error the game is over")


def test_row_phase_is_reported_and_answered() -> None:
    state = first_row_position(seed=11)
    s = session()
    assert s.ask(" ".join(["play", *(action_to_str(a) for a in state.actions)])) == "ok"
    assert s.ask("state").split()[2] == "phase=row"
    action = s.ask("go").split()[1]
    assert action.startswith("x") and action in state.legal_action_names()
    assert s.ask(f"play {action}") == "ok"
    assert s.ask("state").split()[2] == "phase=ring"
    ring = s.ask("go").split()[1]
    assert ring in [action_to_str(RING_OFFSET + p) for p in s.state.ring_points(s.state.to_act)]


def first_row_position(seed: int) -> State:
    """A random game's first position where a row must be removed."""
    rng = random.Random(seed)
    while True:
        state = State()
        while not state.is_terminal:
            state.apply(rng.choice(state.legal_actions()))
            if state.phase == Phase.ROW:
                assert all(a >= ROW_OFFSET for a in state.legal_actions())
                return state


class Failing(RandomAgent):
    def __init__(self, error: Exception) -> None:
        super().__init__(seed=0)
        self.error = error

    def act(self, state: State) -> int:
        raise self.error


class Cheating(RandomAgent):
    def act(self, state: State) -> int:
        return str_to_action("E5")  # already taken in the test


@pytest.mark.parametrize(
    ("agent", "reason"),
    [
        (Failing(AgentFailure("no network")), "error engine failure: no network"),
        (Failing(ZeroDivisionError("oops")), "error engine failure: ZeroDivisionError: oops"),
        (Cheating(), "error engine failure: the agent chose an illegal action"),
    ],
)
def test_a_failing_agent_gets_an_error_and_the_engine_keeps_serving(
    agent: Agent, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    s = session(agent)
    s.ask("play E5")
    before = snapshot(s)
    assert s.ask("go").startswith(reason)
    assert snapshot(s) == before
    assert s.ask("state") == "state to_act=B phase=place result=none"


def run_serve(data: bytes, agent: Agent | None = None) -> list[str]:
    out = io.BytesIO()
    serve(agent or make_agent("random", seed=0), io.BytesIO(data), out)
    return out.getvalue().decode("utf-8").splitlines()


def test_serve_one_reply_per_command_and_bad_lines_do_not_desync() -> None:
    too_long = b"play " + b"E5 " * MAX_LINE_BYTES
    data = b"\n".join(
        [
            b"yinsh 1",
            b"play E5",
            b"",  # blank lines are not commands
            b"   ",
            too_long,
            b"\xff\xfe garbage",
            b"play F6\r",  # CRLF line ends are fine
            b"history",
            b"quit",
            b"state",  # after quit: never read
        ]
    )
    replies = run_serve(data + b"\n")
    assert replies == [
        "yinsh ok 1 name=random",
        "ok",
        f"error line too long (limit {MAX_LINE_BYTES} bytes)",
        "error line is not valid UTF-8",
        "ok",
        "history E5 F6",
        "ok",
    ]


def test_serve_line_limit_is_exact_and_end_of_input_stops() -> None:
    at_limit = b"ping " + b"x" * (MAX_LINE_BYTES - 5)
    over = at_limit + b"x"
    replies = run_serve(at_limit + b"\n" + over + b"\n" + b"ping end")  # no final newline
    assert replies[0] == "pong " + "x" * (MAX_LINE_BYTES - 5)
    assert replies[1].startswith("error line too long")
    assert replies[2] == "pong end"
    assert run_serve(over) == [f"error line too long (limit {MAX_LINE_BYTES} bytes)"]


def test_yinsh_engine_program_speaks_only_the_protocol_on_stdout() -> None:
    commands = ["yinsh 1", "new rings_to_win=1", "play E5", "bogus", "state", "go", "quit"]
    proc = subprocess.run(
        [*shlex.split(ENGINE), "random", "--seed", "3", "--debug"],
        input="\n".join(commands) + "\n",
        capture_output=True,
        text=True,
        timeout=300,  # bounds a hang; a loaded machine starts Python slowly
    )
    assert proc.returncode == 0, proc.stderr
    replies = proc.stdout.splitlines()
    assert len(replies) == len(commands)
    assert replies[:5] == [
        "yinsh ok 1 name=random",
        "ok",
        "ok",
        "error unknown command 'bogus'",
        "state to_act=B phase=place result=none",
    ]
    assert replies[5].split()[0] == "action" and replies[6] == "ok"
    assert "> bogus" in proc.stderr  # --debug transcript goes to stderr


def test_yinsh_engine_rejects_an_unknown_spec() -> None:
    proc = subprocess.run(
        [*shlex.split(ENGINE), "nosuchagent"],
        input="",
        capture_output=True,
        text=True,
        timeout=300,  # bounds a hang; a loaded machine starts Python slowly
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "unknown agent 'nosuchagent'" in proc.stderr


class Chatty(RandomAgent):
    def act(self, state: State) -> int:
        print("thinking very hard")
        return super().act(state)


def test_engine_cli_keeps_agent_prints_off_the_protocol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agents.protocol import engine_cli

    register_agent("test-chatty", Chatty)
    stdin = io.TextIOWrapper(io.BytesIO(b"go\nquit\n"))
    stdout_bytes = io.BytesIO()
    stdout = io.TextIOWrapper(stdout_bytes)
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    assert engine_cli.main(["test-chatty"]) == 0
    assert sys.stdout is stdout
    replies = stdout_bytes.getvalue().decode().splitlines()
    assert [r.split()[0] for r in replies] == ["action", "ok"]
    assert "thinking very hard" in stderr.getvalue()


# --- stop, and bounded budgets ---------------------------------------------------------

#: Generous bound on any wait below: a loaded machine is slow, never this slow.
DEADLINE = 120.0


class Started(MCTSAgent):
    """An MCTS agent that says when a search begins (so a test can stop it mid-search)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(seed=0, **kwargs)  # type: ignore[arg-type]
        self.searching = threading.Event()

    def search(self, state: State):  # type: ignore[no-untyped-def]
        self.searching.set()
        return super().search(state)


class StartedAlphaBeta(AlphaBetaAgent):
    def __init__(self) -> None:
        super().__init__(seed=0, depth=30)
        self.searching = threading.Event()

    def act(self, state: State) -> int:
        self.searching.set()
        return super().act(state)


class Served:
    """:func:`serve` in a thread, its input a pipe the test writes to, its replies a queue."""

    def __init__(self, agent: Agent) -> None:
        read_end, write_end = os.pipe()
        self.input = os.fdopen(write_end, "wb", buffering=0)
        self.replies: queue.Queue[str] = queue.Queue()
        self.thread = threading.Thread(
            target=serve, args=(agent, os.fdopen(read_end, "rb"), self), daemon=True
        )
        self.thread.start()

    def write(self, data: bytes) -> None:  # serve's stdout: one reply per write
        self.replies.put(data.decode("utf-8").rstrip("\n"))

    def flush(self) -> None:
        pass

    def send(self, *lines: str) -> None:
        self.input.write("".join(f"{line}\n" for line in lines).encode())

    def reply(self) -> str:
        return self.replies.get(timeout=DEADLINE)

    def close(self) -> None:
        if not self.input.closed:
            self.input.close()
        self.thread.join(timeout=DEADLINE)
        assert not self.thread.is_alive()

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_stop_makes_a_running_go_answer_with_its_best_so_far() -> None:
    agent = Started(sims=10)
    with Served(agent) as engine:
        engine.send("yinsh 1", "new", "play E5 F6", f"go sims={MAX_GO_SIMS}")
        assert engine.reply().startswith("yinsh ok") and engine.reply() == engine.reply() == "ok"
        assert agent.searching.wait(DEADLINE)
        engine.send("stop")
        word, action = engine.reply().split()
        assert word == "action" and action in State().apply_all(["E5", "F6"]).legal_action_names()
        assert engine.reply() == "ok"  # stop's own reply, after the move: one per command
        assert 1 <= agent.last_sims < MAX_GO_SIMS
        engine.send("history", "go", "stop")  # the agent's own budget (10) stands again
        assert engine.reply() == "history E5 F6"
        assert engine.reply().startswith("action ") and engine.reply() == "ok"


def test_stop_ends_an_analysis_and_an_alphabeta_search_too() -> None:
    agent = Started(sims=10)
    with Served(agent) as engine:
        agent.sims = MAX_GO_SIMS
        engine.send("analyse")
        assert agent.searching.wait(DEADLINE)
        engine.send("stop")
        fields = dict(f.split("=", 1) for f in engine.reply().split()[2:])
        assert 1 <= int(fields["sims"]) < MAX_GO_SIMS and engine.reply() == "ok"
    deep = StartedAlphaBeta()
    with Served(deep) as engine:
        engine.send("play E5 F6 G7 H8 E4 F5 G6 H7 D5 C5", "go")
        assert engine.reply() == "ok" and deep.searching.wait(DEADLINE)
        engine.send("stop")
        assert engine.reply().startswith("action ") and engine.reply() == "ok"
        assert 1 <= deep.completed_depth < 30


def test_stop_without_a_search_is_ok_and_stops_no_later_search() -> None:
    agent = Started(sims=30)
    with Served(agent) as engine:
        engine.send("stop", "stop", "state", "go", "stop now")  # "stop now": an error, no stop
        assert [engine.reply() for _ in range(3)] == [
            "ok",
            "ok",
            "state to_act=W phase=place result=none",
        ]
        assert engine.reply().startswith("action ")
        assert agent.last_sims == 30  # the earlier stops did not cut this search
        assert engine.reply() == "error stop takes no arguments, got 'now'"


def test_quit_or_the_end_of_input_during_a_search_answers_and_exits() -> None:
    for ending in ("quit", None):
        agent = Started(sims=10)
        engine = Served(agent)
        engine.send(f"go sims={MAX_GO_SIMS}")
        assert agent.searching.wait(DEADLINE)
        if ending == "quit":
            engine.send("quit", "state")  # after quit: never answered
        else:
            engine.input.close()
        engine.thread.join(timeout=DEADLINE)
        assert not engine.thread.is_alive()  # serve returned, input still open for quit
        replies = [engine.reply() for _ in range(engine.replies.qsize())]
        assert replies[0].startswith("action ") and replies[1:] == (["ok"] if ending else [])
        assert agent.last_sims < MAX_GO_SIMS
        engine.close()


@pytest.mark.slow
def test_the_engine_program_quits_mid_search_with_its_input_still_open() -> None:
    proc = subprocess.Popen(
        [*shlex.split(ENGINE), f"mcts:sims={MAX_GO_SIMS}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"yinsh 1\ngo\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith(b"yinsh ok")
        proc.stdin.write(b"quit\n")  # while it thinks (or before: the same)
        proc.stdin.flush()
        assert proc.wait(timeout=DEADLINE) == 0  # no abort on the reader thread at exit
        assert proc.stdout.read().decode().split("\n")[1:] == ["ok", ""]
    finally:
        proc.kill()
        proc.communicate(timeout=DEADLINE)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ("sims=0", "sims=0"),
        ("sims=-1", "sims=-1"),
        ("sims=1.5", "sims=1.5"),
        ("sims=abc", "sims=abc"),
        (f"sims={MAX_GO_SIMS + 1}", f"sims={MAX_GO_SIMS + 1}"),
        ("sims=" + "9" * 5000, "sims=999"),
        ("sims=\uff11\uff10", "sims="),  # fullwidth digits
        ("time=nan", "time=nan"),
        ("time=inf", "time=inf"),
        ("time=-1", "time=-1"),
        ("time=0", "time=0"),
        ("time=1e999", "time=1e999"),
        (f"time={MAX_GO_SECONDS * 2:g}", "time="),
        ("time=abc", "time=abc"),
        ("sims=5 sims=6", "sims= given twice"),
        ("depth=3", "depth=3"),
    ],
)
def test_bad_go_budgets_are_refused_naming_the_argument(args: str, named: str) -> None:
    agent = BudgetRecorder(seed=0)
    s = session(agent)
    before = snapshot(s)
    reply = s.ask(f"go {args}")
    assert reply.startswith("error ") and named in reply and "go" in reply
    assert "\n" not in reply and len(reply) < 300  # one short line, the input clipped
    assert agent.budgets == [] and snapshot(s) == before
    assert s.ask(f"go sims={MAX_GO_SIMS} time={MAX_GO_SECONDS:g}").startswith("action ")
