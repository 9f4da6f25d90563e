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
                                   (``sims`` 1..:data:`MAX_GO_SIMS`, ``time`` in seconds,
                                   more than 0 and at most :data:`MAX_GO_SECONDS`)
``analyse``                        ``analysis ACTION value=V sims=N pv=... moves=...``: the
                                   agent's :meth:`~agents.base.Agent.analyse` (not played;
                                   see :func:`format_analysis`)
``stop``                           ``ok``; a ``go`` or ``analyse`` still searching answers
                                   at once with its best so far (see below)
``seed N``                         ``ok``: reseed the engine's random choices
``ping [TOKEN]``                   ``pong [TOKEN]`` (is the engine alive and in sync?)
``name``                           ``name NAME``
``help``                           ``help COMMAND ...`` (the commands this engine knows)
``quit``                           ``ok``, then the engine exits (so does end of input)
=================================  =======================================================

Anything wrong gets ``error REASON`` and leaves the engine's game untouched:
an unknown command (``error unknown command 'foo'``), an illegal or malformed
action, a bad or repeated option (``error bad value 'sims=0' for go: ...``:
the argument is named, a budget beyond its ceiling too), a line longer than
:data:`MAX_LINE_BYTES` (``error line too long``), or invalid UTF-8.
Controllers should ignore ``key=value`` fields they do not know in replies, so
later versions can add some.

**Stopping a search**, as UCI's ``stop``: the engine reads its input in a
thread of its own, so ``stop`` is seen while a ``go`` or ``analyse`` is
thinking; that search returns its best so far (an MCTS after at least one
simulation, alpha-beta at the last depth it completed;
:mod:`agents.search.stopping`) and its reply comes at once.  Replies still come
one per command and in the order of the commands: the search's ``action`` (or
``analysis``) line, then ``stop``'s ``ok``.  ``stop`` with no search running is
just ``ok``.  ``quit`` and end of input stop a running search the same way;
the engine answers the commands before them, then exits.  So a script piping
``go`` and ``quit`` at once gets the move found by the time ``quit`` is read
(a controller waits for the ``action`` reply).  Only a well-formed ``stop`` or
``quit`` stops anything (``stop now`` is an error).  Other commands sent during a
search wait for it (at most :data:`MAX_PENDING` are read ahead).  Agents that
do not search, OpenSpiel's bot and external engines finish on their own.

:func:`serve` runs an engine over an :class:`~agents.base.Agent`; the
``yinsh-engine`` console script (:mod:`agents.protocol.engine_cli`) serves any agent
spec, and :mod:`agents.protocol.external_engine` is the controller side.
"""

from __future__ import annotations

import queue
import re
import sys
import threading
import traceback
from collections.abc import Callable
from typing import BinaryIO, Final, TextIO, TypeVar

from agents.base import Agent, AgentFailure
from agents.evaluation.match import VariantMismatchError, check_variant
from agents.infra.worker_pool import agent_exit
from agents.params import MAX_SECONDS, MAX_SEED, MAX_SIMS, clip
from agents.search import Analysis, stop_when
from yinsh_env import DEFAULT_RINGS_TO_WIN, State, action_to_str, str_to_action
from yinsh_env.engine.errors import YinshError
from yinsh_env.util.numeric_text import is_int_text, parse_float, parse_int

#: The protocol version this module speaks (the handshake's number).
PROTOCOL_VERSION: Final = 1
#: Longest accepted input line, in bytes, not counting the line end.
MAX_LINE_BYTES: Final = 8192
#: Most simulations (nodes) ``go sims=`` takes: the ceiling of every agent spec.
MAX_GO_SIMS: Final = MAX_SIMS
#: Longest ``go time=``, in seconds (a day): the ceiling of every agent spec.
MAX_GO_SECONDS: Final = MAX_SECONDS
#: Commands read ahead while a search runs; ``stop`` or ``quit`` behind more waits.
MAX_PENDING: Final = 256
#: Commands that stop a running search the moment they are read.
INTERRUPTS: Final = frozenset({b"stop", b"quit"})

T = TypeVar("T")


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
        shown = clip(arg)
        if not eq or key not in allowed:
            expected = ", ".join(f"{k}=" for k in allowed) or "no options"
            raise ProtocolError(f"unknown option {shown!r} for {command} (expected {expected})")
        if key in out:
            raise ProtocolError(f"option {key}= given twice for {command}")
        try:
            out[key] = allowed[key](value)
        except ValueError as exc:
            raise ProtocolError(f"bad value {shown!r} for {command}: {exc}") from None
    return out


def nonnegative_seed(text: str) -> int:
    """A seed ``0..MAX_SEED`` written in ASCII digits; ValueError otherwise."""
    if not is_int_text(text, signed=False) or len(text) > 19 or int(text) > MAX_SEED:
        raise ValueError(f"a seed is an integer 0..{MAX_SEED}")
    return int(text)


def _positive_int(text: str) -> int:
    """A count in ASCII digits (``undo ٢`` and ``undo 1_0`` refused)."""
    value = parse_int(text, signed=False)
    if value <= 0:
        raise ValueError("must be a positive integer")
    return value


def _rings_to_win(text: str) -> int:
    """``new rings_to_win=``: 1..5 in ASCII digits (``nan``, ``٣`` and ``1e1`` refused by name)."""
    if not (is_int_text(text, signed=False) and len(text) <= 2 and 1 <= int(text) <= 5):
        raise ValueError("must be an integer 1..5")
    return int(text)


def go_sims(text: str) -> int:
    """``go sims=``: an integer 1..:data:`MAX_GO_SIMS` in ASCII digits."""
    digits = is_int_text(text, signed=False) and len(text) <= 20
    if not digits or not 0 < int(text) <= MAX_GO_SIMS:
        raise ValueError(f"must be an integer 1..{MAX_GO_SIMS}")
    return int(text)


def go_seconds(text: str) -> float:
    """``go time=``: seconds, more than 0 and at most :data:`MAX_GO_SECONDS`."""
    problem = f"must be a number of seconds, more than 0 and at most {MAX_GO_SECONDS:g}"
    if len(text) > 40:
        raise ValueError(problem)
    value = parse_float(text)  # ValueError for what is no number (or "1_0")
    if not 0 < value <= MAX_GO_SECONDS:  # nan and inf fail too
        raise ValueError(problem)
    return value


def format_state(state: State) -> str:
    """The ``state`` reply for a position."""
    result = "none" if state.result == "*" else state.result
    return f"state to_act={state.to_act.letter} phase={state.phase.text} result={result}"


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
    (bad commands get ``error ...`` and change nothing).  Commands handled
    with a ``number`` (their place in the input, as :func:`serve` counts)
    can be stopped while they search: :meth:`interrupt`, called from the
    thread reading the input, stops the search of every command numbered
    before the ``stop``.
    """

    def __init__(self, agent: Agent, name: str | None = None) -> None:
        self.agent = agent
        self.name = clean_name(name or agent.name)
        self.state = State(rings_to_win=agent.rings_to_win or DEFAULT_RINGS_TO_WIN)
        #: Set by ``quit``: the server loop stops after answering.
        self.finished = False
        #: A command numbered below this stops searching (one int, set by the reading thread).
        self._stop_below = 0
        #: The number of the command being handled (0: none given, never stopped).
        self._number = 0
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
            "stop": self._stop,
            "seed": self._seed,
            "ping": self._ping,
            "name": self._name,
            "help": self._help,
            "quit": self._quit,
        }

    def handle(self, line: str, number: int = 0) -> str | None:
        """The reply to one command line; None for a blank line (no reply).

        ``number`` (from 1, in input order) lets a later ``stop`` end this
        command's search (:meth:`interrupt`); 0 runs it to its budget.
        """
        words = line.split()
        if not words:
            return None
        self._number = number
        command = self._commands.get(words[0].lower())
        if command is None:
            return f"error unknown command {words[0][:40]!r}"
        try:
            return command(words[1:])
        except ProtocolError as exc:
            return f"error {one_line(str(exc))}"

    def interrupt(self, number: int) -> None:
        """Stop the search of every command numbered below ``number`` (thread-safe).

        The reading thread calls it the moment it reads ``stop``, ``quit`` or
        the end of input; the search polls :meth:`_stopped` between simulations.
        """
        self._stop_below = max(self._stop_below, number)

    def _thinking(self, think: Callable[[], T]) -> T:
        """``think()`` (a search), stoppable by a later command when this one is numbered."""
        number = self._number
        if not number:
            return think()
        with stop_when(lambda: self._stop_below > number):
            return think()

    # --- commands ----------------------------------------------------------------

    def _yinsh(self, args: list[str]) -> str:
        if len(args) > 1 or (args and args[0] != str(PROTOCOL_VERSION)):
            raise ProtocolError(
                f"unsupported protocol version {' '.join(args)!r} "
                f"(this engine speaks {PROTOCOL_VERSION})"
            )
        return f"yinsh ok {PROTOCOL_VERSION} name={self.name}"

    def _new(self, args: list[str]) -> str:
        options = parse_options(args, {"rings_to_win": _rings_to_win}, "new")
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
        options = parse_options(args, {"sims": go_sims, "time": go_seconds}, "go")
        sims, time = options.get("sims"), options.get("time")
        assert sims is None or isinstance(sims, int)
        assert time is None or isinstance(time, float)
        action = self._ask_agent(
            lambda position: self.agent.act_with_budget(position, sims, time), lambda a: a
        )
        return f"action {action_to_str(action)}"

    def _analyse(self, args: list[str]) -> str:
        no_arguments(args, "analyse")
        found = self._ask_agent(self.agent.analyse, lambda found: found.action)
        return format_analysis(found)

    def _ask_agent(self, think: Callable[[State], T], action_of: Callable[[T], int]) -> T:
        """What ``think`` finds on a copy of the position (stoppable: :meth:`_thinking`).

        Whatever goes wrong in the agent, and an illegal action (``action_of``
        what it found), is an ``engine failure`` error: the engine keeps serving.
        """
        state = self.state
        if state.is_terminal:
            raise ProtocolError(f"the game is over (result {state.result})")
        try:
            position = state.copy(history=True)
            found = self._thinking(lambda: think(position))
        except AgentFailure as exc:
            raise ProtocolError(f"engine failure: {exc.reason}") from None
        except Exception as exc:  # the engine must keep serving whatever the agent does
            traceback.print_exc()
            raise ProtocolError(f"engine failure: {type(exc).__name__}: {exc}") from None
        except SystemExit as exc:  # sys.exit() in the agent, likewise (a signal's ends it)
            raise ProtocolError(f"engine failure: exited: {agent_exit(exc)}") from None
        action = action_of(found)
        if not state.is_legal(action):
            raise ProtocolError(f"engine failure: the agent chose an illegal action {action!r}")
        return found

    def _stop(self, args: list[str]) -> str:
        no_arguments(args, "stop")
        return "ok"  # the search it stopped, if any, was stopped when it was read

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


#: What the reading thread queues: a command's number and its line, or why there is none.
_Read = tuple[int, bytes | LineTooLong | None]


def _read_commands(stdin: BinaryIO, commands: queue.Queue[_Read], session: EngineSession) -> None:
    """Queue ``stdin``'s lines, numbered from 1; interrupt the search on ``stop``/``quit``/EOF."""
    number = 0
    try:
        while True:
            number += 1
            try:
                raw = read_line(stdin)
            except LineTooLong as exc:
                commands.put((number, exc))
                continue
            if raw is None:
                break
            if raw.strip().lower() in INTERRUPTS:  # exactly "stop" or "quit": no error
                session.interrupt(number)
            commands.put((number, raw))
    except (OSError, ValueError):  # the input was closed under us: as its end
        pass
    finally:
        session.interrupt(sys.maxsize)
        commands.put((number, None))


def serve(
    agent: Agent,
    stdin: BinaryIO,
    stdout: BinaryIO,
    name: str | None = None,
    log: TextIO | None = None,
) -> EngineSession:
    """Answer protocol commands from ``stdin`` on ``stdout`` until ``quit`` or end of input.

    A daemon thread reads ``stdin`` (so that ``stop`` reaches a running
    search); this thread answers the commands in order.  ``log`` (e.g.
    ``sys.stderr``) receives a transcript of the conversation.  Returns the
    session, whose ``state`` is the last position.
    """
    session = EngineSession(agent, name=name)
    commands: queue.Queue[_Read] = queue.Queue(MAX_PENDING)
    reader = threading.Thread(
        target=_read_commands, args=(stdin, commands, session), name="engine-input", daemon=True
    )
    reader.start()
    while not session.finished:
        number, raw = commands.get()
        if raw is None:
            break
        if isinstance(raw, LineTooLong):
            reply: str | None = f"error line too long (limit {MAX_LINE_BYTES} bytes)"
        else:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                reply = "error line is not valid UTF-8"
            else:
                if log is not None and line.strip():
                    print(f"> {line}", file=log, flush=True)
                reply = session.handle(line, number)
        if reply is None:
            continue
        if log is not None:
            print(f"< {reply}", file=log, flush=True)
        stdout.write(reply.encode("utf-8") + b"\n")
        stdout.flush()
    return session
