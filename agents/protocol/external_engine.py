"""``engine:cmd=<command line>``: play any program that speaks the engine protocol.

:class:`ExternalAgent` is the controller side of :mod:`agents.protocol.line_protocol`.  It
starts the program on its first decision, checks the handshake, keeps the
engine's game in step with the position it is asked about (``new`` or
``position``, then one ``play`` per action; only the new actions when the game
simply went on), and asks ``go`` for its move.

Whatever the program does, the caller never hangs and never crashes: a program
that exits, stays silent past the timeout, answers garbage or an illegal action
raises :class:`~agents.base.AgentFailure` with a reason (the arena scores a
recorded loss), and the process is killed.  The next game starts a fresh one.

Spec parameters (``engine:cmd=yinsh-engine greedy,timeout=5``)::

    cmd      the command line (split like a shell would, without a shell)
    timeout  seconds to wait for each answer (``go`` gets ``time`` more); default 10
    startup  seconds to wait for the handshake (imports can be slow); default 30
    sims     send ``go sims=N`` (0: let the engine decide)
    time     send ``go time=SECONDS`` (0: let the engine decide)
    log      append the engine's stderr to this file (default: keep the last lines
             for failure reasons only)

A ``cmd`` holding commas followed by ``key=`` (a spec of its own) is quoted:
``engine:cmd="yinsh-engine mcts:sims=50,c_puct=2",timeout=5``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import weakref
from collections import deque
from itertools import zip_longest
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import AfterValidator

from agents.base import Agent, AgentFailure
from agents.infra.cli_args import check_writable_file
from agents.params import OptionalSims, PathText, PositiveSeconds, Seconds, Text, checked
from agents.protocol.line_protocol import PROTOCOL_VERSION, one_line
from yinsh_env import Phase, Player, State, action_to_str, str_to_action
from yinsh_env.engine.errors import NotationError

#: Longest reply line read from an engine; longer ones count as garbage.
MAX_REPLY_BYTES = 1 << 20
#: Lines of the engine's stderr kept for failure reasons.
STDERR_TAIL_LINES = 5
#: Seconds to wait for the exit status and last stderr lines of an engine that
#: closed its output: it is exiting, but on a loaded machine that takes seconds.
EXIT_WAIT = 10.0


def _open_log(path: str) -> IO[str]:
    """``path`` opened for appending, without waiting: a FIFO nobody reads is an error
    naming it (opening it would block the match until a reader came)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise ValueError(f"log {path!r} cannot be written ({exc.strerror})") from None
    os.set_blocking(fd, True)
    return open(fd, "a", encoding="utf-8", errors="replace")


class EngineProcess:
    """A running engine program: its pipes, and reader threads that never block the caller.

    A thread moves stdout lines into a queue (read with a timeout); another
    keeps the last lines of stderr (and copies them to a log file if asked).
    """

    def __init__(self, argv: list[str], log_path: str = "") -> None:
        self.argv = argv
        self._log: IO[str] | None = _open_log(log_path) if log_path else None
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=os.name == "posix",  # so that close() reaches its children
            )
        except OSError:
            if self._log is not None:
                self._log.close()
            raise
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.proc.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        _LIVE.add(self)

    def _read_stdout(self, stream: IO[bytes]) -> None:
        try:
            while line := stream.readline(MAX_REPLY_BYTES):
                self.replies.put(line)
        except (OSError, ValueError):
            pass
        self.replies.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        try:
            for raw in stream:
                line = raw.decode("utf-8", errors="replace").rstrip()
                if line:
                    self.stderr_tail.append(line)
                if self._log is not None:
                    self._log.write(line + "\n")
                    self._log.flush()
        except (OSError, ValueError):
            pass

    def send(self, line: str) -> None:
        """Write one command line; raises :class:`AgentFailure` if the engine is gone."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise AgentFailure(self._gone(f"before reading {line!r}")) from None

    def receive(self, timeout: float, command: str) -> str:
        """The next reply line, waiting at most ``timeout`` seconds."""
        try:
            raw = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise AgentFailure(
                f"external engine timed out: no answer to {command!r} within {timeout:g}s"
            ) from None
        if raw is None:
            self.replies.put(None)  # stay at end of output for later calls
            raise AgentFailure(self._gone(f"before answering {command!r}"))
        if not raw.endswith(b"\n") and len(raw) >= MAX_REPLY_BYTES:
            raise AgentFailure(f"external engine answered {command!r} with an overlong line")
        return raw.decode("utf-8", errors="replace").rstrip("\r\n")

    def written_before_exit(self) -> str | None:
        """The first line the engine wrote and nobody read, once it is gone (None: none).

        An engine that writes a line and exits at once may be found gone when its first
        command is written, before its line is read: which comes first is timing's, so
        the handshake reads what it wrote either way.
        """
        self._threads[0].join(timeout=EXIT_WAIT)  # its output ends with it
        try:
            raw = self.replies.get_nowait()
        except queue.Empty:
            return None
        if raw is None:
            self.replies.put(None)
            return None
        return raw.decode("utf-8", errors="replace").rstrip("\r\n")

    def _gone(self, when: str) -> str:
        try:
            code = self.proc.wait(timeout=EXIT_WAIT)
            what = f"exited with code {code}"
        except subprocess.TimeoutExpired:
            what = "closed its output"
        exited = self.proc.returncode is not None
        for thread in self._threads[1:]:  # the stderr reader ends at the exit: its tail is in
            thread.join(timeout=EXIT_WAIT if exited else 0.5)
        tail = " | ".join(self.stderr_tail)
        return f"external engine {what} {when}" + (f" (stderr: {tail})" if tail else "")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, grace: float = 1.0) -> None:
        """Ask the engine to quit, then kill it (and its children) if it lingers."""
        _LIVE.discard(self)
        proc = self.proc
        if proc.poll() is None and grace > 0:
            try:
                self.send("quit")
                proc.wait(timeout=grace)
            except (AgentFailure, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except OSError:
                pass
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                print(f"warning: engine {self.argv[0]!r} did not die", file=sys.stderr)
        for thread in self._threads:
            thread.join(timeout=1.0)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self._log is not None:
            self._log.close()
            self._log = None


_LIVE: weakref.WeakSet[EngineProcess] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Kill engines still running when the interpreter exits."""
    for engine in list(_LIVE):
        engine.close(grace=0.2)


def _command_line(text: str) -> str:
    """A command line that splits into a program and its arguments."""
    try:
        words = shlex.split(text)
    except ValueError as exc:  # an unclosed quote
        raise ValueError(f"cannot be split into words ({exc})") from None
    if not words:
        raise ValueError("must name a program: engine:cmd=<program and arguments>")
    return text


#: The engine's command line, split like a shell would (no shell runs it).
CommandLine = Annotated[PathText, AfterValidator(_command_line)]


class ExternalAgent(Agent):
    """An agent whose decisions come from an external program over the engine protocol."""

    @checked
    def __init__(
        self,
        seed: int | None = None,
        cmd: CommandLine = "",
        timeout: PositiveSeconds = 10.0,
        startup: PositiveSeconds = 30.0,
        sims: OptionalSims = 0,
        time: Seconds = 0.0,
        log: Text = "",
    ) -> None:
        super().__init__(seed)
        self.argv = shlex.split(cmd)
        program = self.argv[0]
        if shutil.which(program) is None and not os.path.isfile(program):
            raise ValueError(f"engine program {program!r} not found")
        if log:
            try:
                check_writable_file(Path(log))
            except ValueError as exc:
                raise ValueError(f"log {exc}") from None
        self.timeout = timeout
        self.startup = startup
        self.sims = sims
        self.time = time
        self.log = log
        #: The name the engine gave in its handshake (None before the first game).
        self.engine_name: str | None = None
        self._seed = seed
        self._engine: EngineProcess | None = None
        #: The engine's game as we sent it (``new``/``position``, then ``play``s).
        self._mirror: State | None = None
        #: Our last answer, not yet seen played.
        self._answer: int | None = None

    # --- the Agent interface -----------------------------------------------------

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self._seed = seed
        self._mirror = self._answer = None  # the next decision starts a new game on the engine

    def act(self, state: State) -> int:
        return self.act_with_budget(state)

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        sims = sims if sims is not None else self.sims or None
        time = time if time is not None else self.time or None
        try:
            engine = self._sync(state)
            command = "go" + (f" sims={sims}" if sims else "") + (f" time={time:g}" if time else "")
            reply = self._request(engine, command, self.timeout + (time or 0.0))
            self._answer = self._parse_action(reply, command, state)
        except BaseException:
            # A failed engine gets no second chance this game; an interrupted
            # conversation (the arena's move time limit) cannot be resumed either.
            self._stop(grace=0.0)
            raise
        return self._answer

    def close(self) -> None:
        self._stop()

    def __getstate__(self) -> dict[str, Any]:
        data = self.__dict__.copy()
        data["_engine"] = None  # a process does not travel; the copy starts its own
        data["_mirror"] = data["_answer"] = None
        return data

    # --- talking to the engine ---------------------------------------------------

    def _start(self) -> EngineProcess:
        try:
            engine = EngineProcess(self.argv, self.log)
        except OSError as exc:
            raise AgentFailure(f"external engine {self.argv[0]!r} could not start: {exc}") from None
        self._engine = engine
        self._mirror = self._answer = None
        try:
            command = f"yinsh {PROTOCOL_VERSION}"
            try:
                reply = self._request(engine, command, self.startup)
            except AgentFailure:
                written = None if engine.alive else engine.written_before_exit()
                if written is None:
                    raise
                reply = written
        except AgentFailure:
            self._stop(grace=0.0)
            raise
        words = reply.split()
        if words[:3] != ["yinsh", "ok", str(PROTOCOL_VERSION)]:
            self._stop(grace=0.0)
            raise AgentFailure(
                f"external engine failed the handshake: answered {one_line(reply)[:200]!r} "
                f"to {command!r}, expected 'yinsh ok {PROTOCOL_VERSION} name=...'"
            )
        names = [w[5:] for w in words[3:] if w.startswith("name=")]
        self.engine_name = names[0] if names else None
        return engine

    def _stop(self, grace: float = 1.0) -> None:
        if self._engine is not None:
            self._engine.close(grace)
            self._engine = None
        self._mirror = self._answer = None

    def _request(self, engine: EngineProcess, command: str, timeout: float) -> str:
        engine.send(command)
        return engine.receive(timeout, command)

    def _expect_ok(self, engine: EngineProcess, command: str) -> None:
        reply = self._request(engine, command, self.timeout)
        if reply.strip() != "ok":
            raise AgentFailure(
                f"external engine answered {one_line(reply)[:200]!r} to {command!r}, expected 'ok'"
            )

    def _sync(self, state: State) -> EngineProcess:
        """Bring the engine's game to ``state``, sending as little as possible.

        When ``state`` continues the engine's game (by its own history, or as
        found by :func:`opponent_line` for the history-less copies the arena
        passes), only the new actions are played; otherwise a new game starts.
        """
        engine = self._engine
        if engine is None or not engine.alive:
            self._stop(grace=0.0)
            engine = self._start()
        mirror = self._mirror
        todo = None
        if mirror is not None:
            todo = history_line(mirror, state)
            if todo is None:
                todo = opponent_line(mirror, state, self._answer)
        if mirror is None or todo is None:
            mirror, todo = self._new_game(engine, state)
        for action in todo:
            self._expect_ok(engine, f"play {action_to_str(action)}")
            mirror.apply_unchecked(action)
        self._answer = None
        return engine

    def _new_game(self, engine: EngineProcess, state: State) -> tuple[State, list[int]]:
        """Start the engine's game at a root of ``state``; returns it and the actions to play."""
        root, line = game_line(state)
        if root.key() == State(rings_to_win=root.rings_to_win).key():
            self._expect_ok(engine, f"new rings_to_win={root.rings_to_win}")
        else:
            self._expect_ok(engine, f"position {root.to_text()}")
        self._mirror = root
        if self._seed is not None:
            # Optional command: an engine without it answers 'error ...', which is fine.
            self._request(engine, f"seed {self._seed}", self.timeout)
            self._seed = None
        return root, line

    def _parse_action(self, reply: str, command: str, state: State) -> int:
        words = reply.split()
        if len(words) != 2 or words[0] != "action":
            raise AgentFailure(
                f"external engine answered {one_line(reply)[:200]!r} to {command!r}, "
                "expected 'action <action>'"
            )
        try:
            action = str_to_action(words[1])
        except NotationError as exc:
            raise AgentFailure(f"external engine answered an unreadable action: {exc}") from None
        if not state.is_legal(action):
            raise AgentFailure(
                f"external engine chose the illegal action {action_to_str(action)} "
                f"in position {state.to_text()}"
            )
        return action


# --- how a position follows from another --------------------------------------------


def game_line(state: State) -> tuple[State, list[int]]:
    """A root position and the actions from it to ``state``.

    The root is where ``state``'s history starts; a history-less position still
    in ring placement (no markers yet) is reached from the start by placing its
    rings alternately, so engines need ``position`` only for set-up positions.
    """
    actions = state.actions
    root = state.copy(history=True)
    for _ in actions:
        root.pop()
    if not actions and state.phase == Phase.PLACE:
        start = State(rings_to_win=state.rings_to_win)
        white, black = state.ring_points(Player.WHITE), state.ring_points(Player.BLACK)
        line = [p for pair in zip_longest(white, black) for p in pair if p is not None]
        for action in line:
            if not start.is_legal(action):
                break
            start.apply_unchecked(action)
        else:
            if start.key() == state.key():
                return State(rings_to_win=state.rings_to_win), line
    return root.copy(), actions


def history_line(mirror: State, state: State) -> list[int] | None:
    """The end of ``state``'s history that leads from ``mirror``'s position, if any."""
    target = mirror.key()
    actions = state.actions
    walk = state.copy(history=True)
    for j in range(len(actions) + 1):
        if walk.key() == target:
            return actions[len(actions) - j :]
        if j < len(actions):
            walk.pop()
    return None


def opponent_line(
    mirror: State, state: State, answer: int | None, max_decisions: int = 12
) -> list[int] | None:
    """Actions from ``mirror`` to ``state``: our ``answer``, then the opponent's decisions.

    Between two decisions of one player the other makes a few (a move, rows
    and rings to remove); a depth-first search over those finds the line to a
    history-less ``state``.  Positions never repeat in YINSH, so the line is
    the one that was played.
    """
    target = state.key()
    if mirror.key() == target:
        return []
    position = mirror.copy()
    line = []
    if answer is not None and position.is_legal(answer):
        position.apply_unchecked(answer)
        line.append(answer)
    rest = _search(position, target, state.to_act, max_decisions)
    return None if rest is None else line + rest


def _search(position: State, target: tuple[int, ...], me: int, depth: int) -> list[int] | None:
    if position.key() == target:
        return []
    if depth == 0 or position.is_terminal or position.to_act == me:
        return None
    for action in list(position.legal_actions()):
        position.apply_unchecked(action)
        rest = _search(position, target, me, depth - 1)
        position.pop()
        if rest is not None:
            return [action, *rest]
    return None
