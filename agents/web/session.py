"""Games held by the web app: history, players, the agent thinking off the request path.

A :class:`GameSession` is one game: where it started (the standard start or a
position set up from its text), the actions played, who plays each side (a
person, ``"human"``, or an agent spec) and what is going on now (an agent
thinking, an analysis running, an agent's failure).  Agents think on their own
threads: a request never waits for them, and every change bumps ``version``
so the page knows when to redraw.  Each job carries the session's
``generation``; undo, load and player changes start a new generation, and a
job that finishes for an old one is dropped, so a late answer can never land
on a position it was not asked about.

An agent that crashes, answers an illegal move or thinks past
``think_timeout`` seconds is reported (``error``) and stops; the game stays
playable: undo, load, retry (:meth:`GameSession.set_players` with the same
players) or let a person take over that side.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from yinsh_env import (
    MOVE_OFFSET,
    RING_OFFSET,
    ROW_OFFSET,
    GameRecord,
    State,
    action_to_str,
    read_bga_json,
    read_record,
    read_sgf,
    str_to_action,
    write_record,
    write_sgf,
)
from yinsh_env.actions import action_kind
from yinsh_env.errors import YinshError
from yinsh_env.geometry import MOVE_PAIRS, POINT_NAMES, SEGMENTS
from yinsh_env.render import describe

from ..base import Agent, AgentFailure
from ..spec import AgentSpecError, make_agent
from .analysis import Analysis, analyse

HUMAN = "human"
SIDES = ("white", "black")


class SessionError(ValueError):
    """A request the game cannot follow; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def parse_game_text(text: str) -> tuple[State, list[int], GameRecord | None]:
    """A start position, its actions and the record, from pasted text.

    Accepts a position text (``State.to_text()``), a record in the project's
    format, a boardspace ``.sgf`` or a BGA JSON transcription; raises
    :class:`SessionError` naming the problem.
    """
    text = text.strip()
    if not text:
        raise SessionError("nothing to load: paste a position text or a record")
    try:
        if text.startswith("("):
            record = read_sgf(text)
        elif text.startswith("{"):
            record = read_bga_json(text)
        elif text.startswith("[") or "\n" in text:
            record = read_record(text)
        else:
            return State.from_text(text), [], None
    except YinshError as exc:
        raise SessionError(f"cannot load it: {exc}") from None
    start = State(rings_to_win=record.rings_to_win)
    return start, [str_to_action(a) for a in record.actions], record


def flipped_markers(before: State, after: State) -> list[int]:
    """Points whose marker changed colour between two positions."""
    return [
        p
        for player in (0, 1)
        for p in before.marker_points(player)
        if after.piece_at(p) == "Mm"[1 - player]
    ]


@dataclass
class Job:
    """Work on a thread: an agent's move or an analysis, for one generation."""

    kind: str  # "move" or "analysis"
    spec: str
    ply: int
    generation: int
    started: float = field(default_factory=time.monotonic)


class GameSession:
    """One game in the web app (thread-safe: every public method takes the lock)."""

    def __init__(
        self,
        game_id: str,
        white: str = HUMAN,
        black: str = HUMAN,
        start: State | None = None,
        actions: list[int] | None = None,
        think_timeout: float = 120.0,
        delay: float | None = None,
        seed: int = 0,
    ) -> None:
        self.id = game_id
        self.think_timeout = think_timeout
        self.seed = seed
        self._lock = threading.RLock()
        self.version = 0
        self.generation = 0
        self.start = (start or State()).copy()
        self.from_start = _is_initial(self.start)
        self.state = self.start.copy()
        self.players: list[str] = [HUMAN, HUMAN]
        self.agents: list[Agent | None] = [None, None]
        self.error: str | None = None
        self.error_side: int | None = None
        self.thinking: Job | None = None
        self.analysis: dict[str, Any] | None = None
        self._analysts: dict[str, Agent] = {}
        self._analysis_job: Job | None = None
        self._delay = delay
        self._last_move_time = 0.0
        self._replay(actions or [])
        self.set_players(white, black)

    # --- helpers -------------------------------------------------------------------

    def _replay(self, actions: list[int]) -> None:
        state = self.start.copy()
        for ply, action in enumerate(actions, 1):
            try:
                state.apply(action)
            except ValueError as exc:
                raise SessionError(f"action {ply} ({action_to_str(action)}): {exc}") from None
        self.state = state

    @property
    def actions(self) -> list[int]:
        return self.state.actions

    def state_at(self, ply: int) -> State:
        """The position after ``ply`` of the game's actions (0: the start)."""
        if not 0 <= ply <= len(self.actions):
            raise SessionError(f"ply {ply} is outside the game (0..{len(self.actions)})")
        state = self.start.copy()
        for action in self.actions[:ply]:
            state.apply_unchecked(action)
        return state

    def _changed(self) -> None:
        self.version += 1

    def _new_generation(self) -> None:
        self.generation += 1
        self.thinking = None
        self._analysis_job = None
        if self.analysis is not None and self.analysis.get("status") == "running":
            self.analysis = None

    @property
    def delay(self) -> float:
        """Pause between agents' moves when two agents play (so that people can watch)."""
        if self._delay is not None:
            return self._delay
        return 0.4 if HUMAN not in self.players else 0.0

    def _mover_index(self, ply: int) -> int:
        """Who made the decision of ``ply`` (1-based)."""
        return self.state_at(ply - 1).to_act

    # --- players and agents ----------------------------------------------------------

    def set_players(self, white: str, black: str) -> None:
        """Seat a person (``"human"``) or an agent spec on each side; rebuilds the agents.

        Clears an agent's failure, so this is also how a failed agent is retried.
        """
        built: list[Agent | None] = []
        try:
            for side, spec in enumerate((white, black)):
                built.append(self._build(spec, side))
        except AgentSpecError as exc:
            for agent in built:
                if agent is not None:
                    agent.close()
            raise SessionError(f"bad agent spec: {exc}") from None
        with self._lock:
            old = self.agents
            self.players = [white.strip() or HUMAN, black.strip() or HUMAN]
            self.agents = built
            self.error = self.error_side = None
            self._new_generation()
            self._changed()
            self._schedule()
        for agent in old:
            if agent is not None:
                _close_later(agent)

    def _build(self, spec: str, side: int) -> Agent | None:
        spec = spec.strip()
        if not spec or spec == HUMAN:
            return None
        agent = make_agent(spec, seed=self.seed + side)
        agent.reset(self.seed + side)
        return agent

    def _schedule(self) -> None:
        """Start the agent to act, if an agent is to act and nothing stops it."""
        state = self.state
        if state.is_terminal or self.error or self.thinking is not None:
            return
        side = state.to_act
        if self.players[side] == HUMAN:
            return
        agent = self.agents[side]
        if agent is None:  # dropped after a timeout: a fresh one
            try:
                agent = self.agents[side] = self._build(self.players[side], side)
            except ValueError as exc:
                self.error, self.error_side = f"{SIDES[side]}: {exc}", side
                return
            assert agent is not None
        job = Job("move", self.players[side], state.ply, self.generation)
        self.thinking = job
        wait = max(0.0, self._last_move_time + self.delay - time.monotonic())
        snapshot = state.copy()
        threading.Thread(
            target=self._think,
            args=(job, agent, snapshot, wait),
            daemon=True,
            name=f"think-{self.id}",
        ).start()
        timer = threading.Timer(self.think_timeout + wait, self._timed_out, args=(job, side))
        timer.daemon = True
        timer.start()

    def _think(self, job: Job, agent: Agent, state: State, wait: float) -> None:
        if wait:
            time.sleep(wait)
        error = ""
        action = -1
        try:
            action = agent.act(state)
        except AgentFailure as exc:
            error = f"failed: {exc.reason}"
        except Exception as exc:  # an agent bug is reported, never fatal to the server
            error = f"crashed: {type(exc).__name__}: {exc}"
        with self._lock:
            if self.thinking is not job or job.generation != self.generation:
                return  # undone, reloaded or timed out meanwhile
            self.thinking = None
            side = self.state.to_act
            if not error:
                try:
                    self.state.apply(action)
                except ValueError as exc:
                    error = f"answered an illegal move: {exc}"
            if error:
                self.error = f"{SIDES[side]} ({job.spec}) {error}"
                self.error_side = side
            else:
                self._last_move_time = time.monotonic()
            self._changed()
            self._schedule()

    def _timed_out(self, job: Job, side: int) -> None:
        with self._lock:
            if self.thinking is not job or job.generation != self.generation:
                return
            self.thinking = None
            self.error = f"{SIDES[side]} ({job.spec}) timed out after {self.think_timeout:g} s"
            self.error_side = side
            # The thread may still run: give it its own agent, take a fresh one on retry.
            stuck = self.agents[side]
            self.agents[side] = None
            self._changed()
        if stuck is not None:
            _close_later(stuck)

    # --- a person's decisions ---------------------------------------------------------

    def play(self, action: str | int, ply: int | None = None) -> None:
        """A person's decision (notation or index) at the live position.

        ``ply``, when given, is the number of actions the page saw: a stale
        click (the game moved on meanwhile) is refused rather than applied to
        another position.
        """
        with self._lock:
            state = self.state
            if state.is_terminal:
                raise SessionError("the game is over", 409)
            side = state.to_act
            if self.players[side] != HUMAN:
                who = "thinking" if self.thinking else "to act"
                raise SessionError(
                    f"it is {SIDES[side]}'s decision, and {SIDES[side]} is the agent "
                    f"{self.players[side]!r} ({who}), not a person",
                    409,
                )
            if ply is not None and ply != len(self.actions):
                raise SessionError(
                    f"the page saw {ply} actions but the game has {len(self.actions)}: "
                    "reload the position",
                    409,
                )
            try:
                index = str_to_action(action) if isinstance(action, str) else int(action)
                state.apply(index)
            except (ValueError, TypeError) as exc:
                raise SessionError(f"illegal action {action!r}: {exc}") from None
            self._last_move_time = time.monotonic()
            self._changed()
            self._schedule()

    def undo(self) -> None:
        """Back to the person's previous decision: their last one and every reply after it.

        With two people on one screen that is the last decision; with two
        agents, or before a person's first decision, there is nothing to undo.
        """
        with self._lock:
            target = None
            probe = self.state.copy(history=True)
            while probe.actions:
                probe.pop()
                if self.players[probe.to_act] == HUMAN:
                    target = len(probe.actions)
                    break
            if target is None:
                raise SessionError("nothing to undo: no decision of a person to go back to", 409)
            while len(self.state.actions) > target:
                self.state.pop()
            self.error = self.error_side = None
            self._new_generation()
            self._changed()
            self._schedule()

    def load(self, text: str) -> None:
        """Replace the game by a position text or a record (players stay)."""
        start, actions, _ = parse_game_text(text)
        with self._lock:
            saved = self.start, self.state, self.from_start
            self.start = start
            self.from_start = _is_initial(start)
            try:
                self._replay(actions)
            except SessionError:
                self.start, self.state, self.from_start = saved
                raise
            self.error = self.error_side = None
            self._new_generation()
            self.analysis = None
            self._changed()
            self._schedule()

    # --- analysis ------------------------------------------------------------------

    def request_analysis(self, spec: str, ply: int | None = None) -> None:
        """Ask ``spec`` about the position after ``ply`` (default: now), on a thread."""
        spec = spec.strip()
        if not spec or spec == HUMAN:
            raise SessionError("analysis needs an agent spec, e.g. 'alphabeta' or 'net:path=...'")
        with self._lock:
            ply = len(self.actions) if ply is None else ply
            state = self.state_at(ply)
            if state.is_terminal:
                raise SessionError("the game is over at that ply: nothing to analyse", 409)
            agent = self._analysts.get(spec)
        if agent is None:
            try:
                agent = make_agent(spec, seed=self.seed)
            except AgentSpecError as exc:
                raise SessionError(f"bad agent spec: {exc}") from None
        with self._lock:
            self._analysts[spec] = agent
            job = Job("analysis", spec, ply, self.generation)
            self._analysis_job = job
            self.analysis = {"spec": spec, "ply": ply, "status": "running"}
            self._changed()
        threading.Thread(
            target=self._analyse, args=(job, agent, state), daemon=True, name=f"analyse-{self.id}"
        ).start()

    def _analyse(self, job: Job, agent: Agent, state: State) -> None:
        result: Analysis | None = None
        error = ""
        try:
            result = analyse(agent, state)
        except Exception as exc:  # reported in the page
            error = f"{type(exc).__name__}: {exc}"
        with self._lock:
            if self._analysis_job is not job:
                return
            self._analysis_job = None
            info: dict[str, Any] = {"spec": job.spec, "ply": job.ply}
            if result is None:
                info.update(status="error", error=f"{job.spec} {error}")
            else:
                info.update(status="done", seconds=round(time.monotonic() - job.started, 3))
                info.update(result.to_json())
            self.analysis = info
            self._changed()

    # --- records ---------------------------------------------------------------------

    def record(self) -> GameRecord:
        """The game as a record (only for games played from the standard start)."""
        with self._lock:
            if not self.from_start:
                raise SessionError(
                    "this game was set up from a position text, and records start from the "
                    "empty board: copy the position text instead",
                    409,
                )
            return GameRecord.from_state(self.state, *self.players, game=self.id)

    def record_text(self, fmt: str) -> str:
        if fmt not in ("yinsh", "sgf"):
            raise SessionError(f"unknown record format {fmt!r} (yinsh or sgf)")
        record = self.record()
        return write_record(record) if fmt == "yinsh" else write_sgf(record)

    # --- the view the page draws -------------------------------------------------------

    def view(self, ply: int | None = None) -> dict[str, Any]:
        """Everything the page shows, for the live position or the one after ``ply``."""
        with self._lock:
            live = len(self.actions)
            ply = live if ply is None else ply
            state = self.state_at(ply)
            moves = []
            probe = self.start.copy()
            for action in self.actions:
                moves.append({"side": "WB"[probe.to_act], "action": action_to_str(action)})
                probe.apply_unchecked(action)
            last: dict[str, Any] | None = None
            if ply > 0:
                before = self.state_at(ply - 1)
                action = self.actions[ply - 1]
                last = {
                    "action": action_to_str(action),
                    "side": "WB"[before.to_act],
                    "kind": action_kind(action),
                    "points": _action_point_names(action),
                    "flipped": [POINT_NAMES[p] for p in flipped_markers(before, state)],
                }
            side = state.to_act
            human_to_act = ply == live and not state.is_terminal and self.players[side] == HUMAN
            return {
                "id": self.id,
                "version": self.version,
                "players": {"white": self.players[0], "black": self.players[1]},
                "ply": ply,
                "live_ply": live,
                "start_ply": self.start.ply,
                "from_start": self.from_start,
                "moves": moves,
                "position": _position_json(state),
                "last": last,
                "legal": state.legal_action_names() if human_to_act else [],
                "human_to_act": human_to_act,
                "thinking": None
                if self.thinking is None
                else {
                    "side": SIDES[self.state.to_act],
                    "spec": self.thinking.spec,
                    "seconds": round(time.monotonic() - self.thinking.started, 1),
                },
                "error": self.error,
                "error_side": None if self.error_side is None else SIDES[self.error_side],
                "analysis": self.analysis,
            }

    def close(self) -> None:
        with self._lock:
            self._new_generation()
            agents = [*self.agents, *self._analysts.values()]
            self.agents = [None, None]
            self._analysts = {}
        for agent in agents:
            if agent is not None:
                _close_later(agent)


def _is_initial(state: State) -> bool:
    return state.key() == State(rings_to_win=state.rings_to_win).key()


def action_points(action: int) -> list[int]:
    """The points an action names: a placement's point, a move's two ends, a row's five."""
    kind = action_kind(action)
    if kind == "place":
        return [action]
    if kind == "move":
        return list(MOVE_PAIRS[action - MOVE_OFFSET])
    if kind == "row":
        return list(SEGMENTS[action - ROW_OFFSET])
    if kind == "ring":
        return [action - RING_OFFSET]
    return []


def _action_point_names(action: int) -> list[str]:
    return [POINT_NAMES[p] for p in action_points(action)]


def _position_json(state: State) -> dict[str, Any]:
    rows = state.pending_rows()
    return {
        "text": state.to_text(),
        "to_act": SIDES[state.to_act],
        "phase": state.phase_name,
        "mover": None if state.mover < 0 else SIDES[state.mover],
        "removed": {"white": state.removed[0], "black": state.removed[1]},
        "rings_to_win": state.rings_to_win,
        "pool": state.pool,
        "passes": state.passes,
        "rings": {s: [POINT_NAMES[p] for p in state.ring_points(i)] for i, s in enumerate(SIDES)},
        "markers": {
            s: [POINT_NAMES[p] for p in state.marker_points(i)] for i, s in enumerate(SIDES)
        },
        "rows": [{"action": action_to_str(a), "points": _action_point_names(a)} for a in rows],
        "over": state.is_terminal,
        "result": state.result,
        "winner": None if state.winner is None else SIDES[state.winner],
        "end_reason": state.end_reason,
        "caption": describe(state),
    }


def _close_later(agent: Agent) -> None:
    """Close an agent without waiting on it (a stuck engine must not block a request)."""
    threading.Thread(target=_quiet_close, args=(agent,), daemon=True).start()


def _quiet_close(agent: Agent) -> None:
    with contextlib.suppress(Exception):  # closing is best effort
        agent.close()
