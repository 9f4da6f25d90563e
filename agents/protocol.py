"""The YINSH engine protocol: a line protocol between a controller and an engine.

Like UCI for chess and GTP for Go, it lets tournament tools, GUIs and other
people's programs play any engine.  The controller writes one command per line
to the engine's standard input; the engine answers every command with exactly
one line on standard output (blank lines get no answer).  Text is UTF-8, an
input line holds at most :data:`MAX_LINE_BYTES` bytes, the engine prints
nothing else on stdout (diagnostics go to stderr), and actions are written in
the project's notation (``E5``, ``E5-E8``, ``xE5-E9``, ``xE5``, ``pass``; read
in any case).  Every decision of the game, row and ring removals and passes
included, is one ``go``/``play``, so a controller never needs the turn structure.

Commands of version :data:`PROTOCOL_VERSION` (``|`` separates alternatives):

=================================  =======================================================
command                            reply
=================================  =======================================================
``yinsh [VERSION]``                ``yinsh ok 1 name=NAME`` (handshake; 1 is the version)
``new [rings_to_win=N]``           ``ok``: a new game (3 rings standard, 1 Blitz)
``position [TEXT]``                ``ok`` (set up ``State.to_text`` TEXT), or without
                                   TEXT ``position TEXT`` (the current position)
``play ACTION [ACTION ...]``       ``ok``, all applied; or ``error REASON``, none applied
``undo [N]``                       ``ok``: take back the last N actions (default 1)
``legal``                          ``legal A1 A2 ...`` (sorted; nothing when over)
``state``                          ``state to_act=W|B phase=place|move|row|ring|over
                                   result=W|B|draw|none``
``history``                        ``history A1 A2 ...``: actions since ``new``/``position``
``go [sims=N] [time=SECONDS]``     ``action ACTION``: the engine's choice for the player
                                   to act, not played until the controller sends ``play``
``analyse``                        ``analysis ACTION value=V sims=N pv=... moves=...``: the
                                   agent's :meth:`~agents.base.Agent.analyse` (not played;
                                   see :func:`format_analysis`)
``seed N``                         ``ok``: reseed the engine's random choices
``ping [TOKEN]``                   ``pong [TOKEN]`` (is the engine alive and in sync?)
``name``                           ``name NAME``
``help``                           ``help COMMAND ...`` (the commands this engine knows)
``quit``                           ``ok``, then the engine exits (so does end of input)
=================================  =======================================================

Anything wrong gets ``error REASON`` and leaves the engine's game untouched:
an unknown command (``error unknown command 'foo'``), an illegal or malformed
action, a bad option, a line longer than :data:`MAX_LINE_BYTES` (``error line
too long``), or invalid UTF-8.  Controllers should ignore ``key=value`` fields
they do not know in replies, so later versions can add some.

:func:`serve` runs an engine over an :class:`~agents.base.Agent`; the
``yinsh-engine`` console script (:mod:`agents.engine_cli`) serves any agent
spec, and :mod:`agents.external` is the controller side.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from typing import BinaryIO, Final, TextIO

from yinsh_env import DEFAULT_RINGS_TO_WIN, PHASE_NAMES, State, action_to_str, str_to_action
from yinsh_env.errors import YinshError

from .base import Agent, AgentFailure
from .evaluation.match import VariantMismatchError, check_variant
from .search import Analysis

#: The protocol version this module speaks (the handshake's number).
PROTOCOL_VERSION: Final = 1
#: Longest accepted input line, in bytes, not counting the line end.
MAX_LINE_BYTES: Final = 8192


class ProtocolError(ValueError):
    """A command the engine cannot carry out; the message is the ``error`` reason."""


def one_line(text: str) -> str:
    """``text`` with line breaks and runs of whitespace folded to single spaces."""
    return " ".join(text.split())


def clean_name(name: str) -> str:
    """A name usable in ``name=NAME`` fields: no whitespace, never empty."""
    return re.sub(r"\s+", "_", name.strip()) or "engine"


def parse_options(
    args: list[str], allowed: dict[str, Callable[[str], object]], command: str
) -> dict[str, object]:
    """Parse ``key=value`` arguments with the converters in ``allowed``."""
    out: dict[str, object] = {}
    for arg in args:
        key, eq, value = arg.partition("=")
        key = key.lower()
        if not eq or key not in allowed:
            expected = ", ".join(f"{k}=" for k in allowed) or "no options"
            raise ProtocolError(f"unknown option {arg!r} for {command} (expected {expected})")
        try:
            out[key] = allowed[key](value)
        except ValueError as exc:
            raise ProtocolError(f"bad value {arg!r} for {command}: {exc}") from None
    return out


#: Seeds every agent's generators take (numpy's need non-negative ones).
MAX_SEED = 2**63 - 1


def nonnegative_seed(text: str) -> int:
    """A seed ``0..MAX_SEED`` written in ASCII digits; ValueError otherwise."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) > MAX_SEED:
        raise ValueError(f"a seed is an integer 0..{MAX_SEED}")
    return int(text)


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be a positive integer")
    return value


def positive_seconds(text: str) -> float:
    """A finite positive number of seconds; ValueError for nan, inf, 0, negatives."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError("must be a positive number of seconds")
    return value


def format_state(state: State) -> str:
    """The ``state`` reply for a position."""
    result = "none" if state.result == "*" else state.result
    return f"state to_act={'WB'[state.to_act]} phase={PHASE_NAMES[state.phase]} result={result}"


def format_analysis(found: Analysis) -> str:
    """The ``analysis`` reply: the move, then ``key=value`` fields.

    ``value`` (for the player to act, in [-1, 1], or ``none``), ``sims``,
    ``pv`` (comma-separated actions) and ``moves``: per legal action
    ``ACTION:VISITS:Q:PRIOR``, comma-separated (Q ``none`` where unvisited).
    """
    value = "none" if found.value is None else f"{found.value:.4f}"
    pv = ",".join(action_to_str(a) for a in found.pv)
    moves = ",".join(
        f"{action_to_str(line.action)}:{line.visits}:"
        f"{'none' if line.q is None else f'{line.q:.4f}'}:{line.prior:.4f}"
        for line in found.lines
    )
    fields = [f"value={value}", f"sims={found.simulations}"]
    if pv:
        fields.append(f"pv={pv}")
    if moves:
        fields.append(f"moves={moves}")
    return " ".join(["analysis", action_to_str(found.action), *fields])


class EngineSession:
    """One engine's side of the protocol: a game position and the agent that plays it.

    :meth:`handle` answers one command line; it never raises on bad input
    (bad commands get ``error ...`` and change nothing).
    """

    def __init__(self, agent: Agent, name: str | None = None) -> None:
        self.agent = agent
        self.name = clean_name(name or agent.name)
        self.state = State(rings_to_win=agent.rings_to_win or DEFAULT_RINGS_TO_WIN)
        #: Set by ``quit``: the server loop stops after answering.
        self.finished = False
        self._commands: dict[str, Callable[[list[str]], str]] = {
            "yinsh": self._yinsh,
            "new": self._new,
            "position": self._position,
            "play": self._play,
            "undo": self._undo,
            "legal": self._legal,
            "state": self._state,
            "history": self._history,
            "go": self._go,
            "analyse": self._analyse,
            "seed": self._seed,
            "ping": self._ping,
            "name": self._name,
            "help": self._help,
            "quit": self._quit,
        }

    def handle(self, line: str) -> str | None:
        """The reply to one command line; None for a blank line (no reply)."""
        words = line.split()
        if not words:
            return None
        command = self._commands.get(words[0].lower())
        if command is None:
            return f"error unknown command {words[0][:40]!r}"
        try:
            return command(words[1:])
        except ProtocolError as exc:
            return f"error {one_line(str(exc))}"

    # --- commands ----------------------------------------------------------------

    def _yinsh(self, args: list[str]) -> str:
        if len(args) > 1 or (args and args[0] != str(PROTOCOL_VERSION)):
            raise ProtocolError(
                f"unsupported protocol version {' '.join(args)!r} "
                f"(this engine speaks {PROTOCOL_VERSION})"
            )
        return f"yinsh ok {PROTOCOL_VERSION} name={self.name}"

    def _new(self, args: list[str]) -> str:
        options = parse_options(args, {"rings_to_win": int}, "new")
        rings_to_win = options.get("rings_to_win", DEFAULT_RINGS_TO_WIN)
        assert isinstance(rings_to_win, int)
        try:
            state = State(rings_to_win=rings_to_win)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None
        self._start(state)
        return "ok"

    def _position(self, args: list[str]) -> str:
        if not args:
            return f"position {self.state.to_text()}"
        try:
            state = State.from_text(" ".join(args))
        except YinshError as exc:
            raise ProtocolError(str(exc)) from None
        self._start(state)
        return "ok"

    def _start(self, state: State) -> None:
        try:
            check_variant(self.agent, state.rings_to_win)
        except VariantMismatchError as exc:
            raise ProtocolError(str(exc)) from None
        self.state = state
        self.agent.reset()

    def _play(self, args: list[str]) -> str:
        if not args:
            raise ProtocolError("play needs an action, e.g. 'play E5'")
        state = self.state
        applied = 0
        try:
            for text in args:
                state.push(str_to_action(text))
                applied += 1
        except YinshError as exc:
            for _ in range(applied):
                state.pop()
            raise ProtocolError(str(exc)) from None
        return "ok"

    def _undo(self, args: list[str]) -> str:
        count = parse_count(args, "undo")
        available = len(self.state.actions)
        if count > available:
            raise ProtocolError(
                f"cannot undo {count} action(s): {available} played since new/position"
            )
        for _ in range(count):
            self.state.pop()
        return "ok"

    def _legal(self, args: list[str]) -> str:
        no_arguments(args, "legal")
        return " ".join(["legal", *self.state.legal_action_names()])

    def _state(self, args: list[str]) -> str:
        no_arguments(args, "state")
        return format_state(self.state)

    def _history(self, args: list[str]) -> str:
        no_arguments(args, "history")
        return " ".join(["history", *(action_to_str(a) for a in self.state.actions)])

    def _go(self, args: list[str]) -> str:
        options = parse_options(args, {"sims": _positive_int, "time": positive_seconds}, "go")
        state = self.state
        if state.is_terminal:
            raise ProtocolError(f"the game is over (result {state.result})")
        sims, time = options.get("sims"), options.get("time")
        assert sims is None or isinstance(sims, int)
        assert time is None or isinstance(time, float)
        try:
            action = self.agent.act_with_budget(state.copy(history=True), sims=sims, time=time)
        except AgentFailure as exc:
            raise ProtocolError(f"engine failure: {exc.reason}") from None
        except Exception as exc:  # the engine must keep serving whatever the agent does
            traceback.print_exc()
            raise ProtocolError(f"engine failure: {type(exc).__name__}: {exc}") from None
        if not state.is_legal(action):
            raise ProtocolError(f"engine failure: the agent chose an illegal action {action!r}")
        return f"action {action_to_str(action)}"

    def _analyse(self, args: list[str]) -> str:
        no_arguments(args, "analyse")
        state = self.state
        if state.is_terminal:
            raise ProtocolError(f"the game is over (result {state.result})")
        try:
            found = self.agent.analyse(state.copy(history=True))
        except AgentFailure as exc:
            raise ProtocolError(f"engine failure: {exc.reason}") from None
        except Exception as exc:  # the engine must keep serving whatever the agent does
            traceback.print_exc()
            raise ProtocolError(f"engine failure: {type(exc).__name__}: {exc}") from None
        if not state.is_legal(found.action):
            raise ProtocolError(
                f"engine failure: the agent chose an illegal action {found.action!r}"
            )
        return format_analysis(found)

    def _seed(self, args: list[str]) -> str:
        if len(args) != 1:
            raise ProtocolError("seed needs one integer, e.g. 'seed 7'")
        try:
            seed = nonnegative_seed(args[0])
        except ValueError as exc:
            raise ProtocolError(f"seed {args[0][:40]!r}: {exc}") from None
        self.agent.reset(seed)
        return "ok"

    def _ping(self, args: list[str]) -> str:
        return " ".join(["pong", *args])

    def _name(self, args: list[str]) -> str:
        no_arguments(args, "name")
        return f"name {self.name}"

    def _help(self, args: list[str]) -> str:
        return " ".join(["help", *self._commands])

    def _quit(self, args: list[str]) -> str:
        self.finished = True
        return "ok"


def no_arguments(args: list[str], command: str) -> None:
    if args:
        raise ProtocolError(f"{command} takes no arguments, got {' '.join(args)!r}")


def parse_count(args: list[str], command: str) -> int:
    if not args:
        return 1
    if len(args) == 1:
        try:
            return _positive_int(args[0])
        except ValueError:
            pass
    raise ProtocolError(f"{command} takes one positive count, got {' '.join(args)!r}")


class LineTooLong(Exception):
    """Raised by :func:`read_line` after skipping a line over the length limit."""


def read_line(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> bytes | None:
    """The next line without its line end, None at end of input.

    A line longer than ``limit`` bytes is read to its end and dropped, then
    :class:`LineTooLong` is raised, so one bad line never desynchronises the
    conversation or fills memory.
    """
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) > limit and not line.endswith(b"\n"):
        while True:
            rest = stream.readline(limit)
            if not rest or rest.endswith(b"\n"):
                raise LineTooLong
    return line.rstrip(b"\r\n")


def serve(
    agent: Agent,
    stdin: BinaryIO,
    stdout: BinaryIO,
    name: str | None = None,
    log: TextIO | None = None,
) -> EngineSession:
    """Answer protocol commands from ``stdin`` on ``stdout`` until ``quit`` or end of input.

    ``log`` (e.g. ``sys.stderr``) receives a transcript of the conversation.
    Returns the session, whose ``state`` is the last position.
    """
    session = EngineSession(agent, name=name)
    while not session.finished:
        try:
            raw = read_line(stdin)
        except LineTooLong:
            reply: str | None = f"error line too long (limit {MAX_LINE_BYTES} bytes)"
        else:
            if raw is None:
                break
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                reply = "error line is not valid UTF-8"
            else:
                if log is not None and line.strip():
                    print(f"> {line}", file=log, flush=True)
                reply = session.handle(line)
        if reply is None:
            continue
        if log is not None:
            print(f"< {reply}", file=log, flush=True)
        stdout.write(reply.encode("utf-8") + b"\n")
        stdout.flush()
    return session
