"""Games held by the web app: history, players, the agent thinking off the request path.

A :class:`GameSession` is one game: where it started (the standard start or a
position set up from its text), the actions played, who plays each side (a
person, ``"human"``, or an agent spec) and what is going on now (an agent
thinking, an analysis running, an agent's failure).  Agents think on their own
threads, on the server's bounded pool (:mod:`agents.web.jobs`): a request
never waits for them, and every change bumps ``version`` so the page knows
when to redraw.  Agents are built only from specs the server's
:class:`~agents.web.policy.AgentPolicy` admits.  Each job carries the session's
``generation``; undo, load and player changes start a new generation, and a
job that finishes for an old one is dropped, so a late answer can never land
on a position it was not asked about.  Starting a new generation, a new
analysis or closing the game also cancels the jobs it makes stale: their
searches stop at the next simulation.

An agent that crashes, answers an illegal move or thinks past
``think_timeout`` seconds is reported (``error``) and told to stop; the time
is checked whenever the game is looked at (the page polls), so no timer
thread waits on any decision.  The game stays playable: undo, load, retry
(:meth:`GameSession.set_players` with the same players) or let a person take
over that side.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agents.base import Agent, AgentFailure
from agents.spec import AgentSpecError, make_agent
from agents.web.http_errors import SessionError, clip
from agents.web.jobs import Job, Workers, close_agent_later
from agents.web.policy import Admitted, AgentPolicy
from agents.web.position import (
    SIDES,
    action_points,
    flipped_markers,
    last_action_json,
    parse_game_text,
    position_json,
)
from agents.web.position_analysis import Analysis, analyse
from agents.web.reviews import review_job, running
from yinsh_env import (
    GameRecord,
    State,
    action_to_str,
    str_to_action,
    write_record,
    write_sgf,
)

HUMAN = "human"

__all__ = [
    "HUMAN",
    "SIDES",
    "GameSession",
    "SessionError",
    "action_points",
    "flipped_markers",
    "parse_game_text",
]


class GameSession:
    """One game in the web app (thread-safe: every public method takes the lock).

    ``policy`` admits the specs a client names; ``workers`` is the pool the
    agents think on (both the server's, shared by its games).
    """

    def __init__(
        self,
        game_id: str,
        white: str = HUMAN,
        black: str = HUMAN,
        *,
        policy: AgentPolicy,
        workers: Workers,
        start: State | None = None,
        actions: list[int] | None = None,
        think_timeout: float = 120.0,
        delay: float | None = None,
        seed: int = 0,
    ) -> None:
        self.id = game_id
        self.think_timeout = think_timeout
        self.seed = seed
        self.policy = policy
        self.workers = workers
        self._lock = threading.RLock()
        self.version = 0
        self.generation = 0
        self.start = (start or State()).copy()
        self.from_start = _is_initial(self.start)
        self.state = self.start.copy()
        self.players: list[str] = [HUMAN, HUMAN]
        self._seats: list[Admitted | None] = [None, None]
        self.agents: list[Agent | None] = [None, None]
        #: Each side's last move job (its agent is not reused while it runs).
        self._jobs: list[Job | None] = [None, None]
        self.error: str | None = None
        self.error_side: int | None = None
        self.thinking: Job | None = None
        self.analysis: dict[str, Any] | None = None
        #: The last analyst built, kept for the next request with the same spec.
        self._analyst: tuple[str, Agent, Job] | None = None
        self._analysis_job: Job | None = None
        #: The game's review (:mod:`agents.web.reviews`) and the job making it.
        self.review: dict[str, Any] | None = None
        self._review_job: Job | None = None
        self._delay = delay
        self._last_move_time = 0.0
        self._closed = False
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
        for job in (self.thinking, self._analysis_job, self._review_job):
            if job is not None:
                job.cancel()
        self.thinking = None
        self._analysis_job = None
        self._review_job = None
        self.review = None
        if self.analysis is not None and self.analysis.get("status") == "running":
            self.analysis = None

    @property
    def delay(self) -> float:
        """Pause between agents' moves when two agents play (so that people can watch)."""
        if self._delay is not None:
            return self._delay
        return 0.4 if HUMAN not in self.players else 0.0

    # --- players and agents ----------------------------------------------------------

    def _admit(self, spec: str) -> Admitted | None:
        """None for a person, else what the policy admits (SessionError 400/403 if not)."""
        spec = spec.strip()
        if not spec or spec == HUMAN:
            return None
        return self.policy.admit(spec)

    def _build(self, seat: Admitted, seed: int) -> Agent:
        try:
            return make_agent(seat.build, seed=seed)
        except AgentSpecError as exc:
            raise SessionError(f"bad agent spec: {exc}") from None

    def set_players(self, white: str, black: str) -> None:
        """Seat a person (``"human"``) or an agent spec on each side; rebuilds the agents.

        Clears an agent's failure, so this is also how a failed agent is retried.
        """
        seats = [self._admit(white), self._admit(black)]
        built: list[Agent | None] = []
        try:
            for side, seat in enumerate(seats):
                built.append(None if seat is None else self._build(seat, self.seed + side))
        except SessionError:
            for agent in built:
                if agent is not None:
                    close_agent_later(agent)
            raise
        for side, agent in enumerate(built):
            if agent is not None:
                agent.reset(self.seed + side)
        with self._lock:
            if self._closed:
                raise SessionError(f"game {self.id} is closed", 404)
            old = self.agents
            self.players = [HUMAN if seat is None else seat.spec for seat in seats]
            self._seats = seats
            self.agents = built
            self.error = self.error_side = None
            self._new_generation()
            self._changed()
            self._schedule()
        for agent in old:
            if agent is not None:
                close_agent_later(agent)

    def _schedule(self) -> None:
        """Start the agent to act, if an agent is to act and nothing stops it."""
        state = self.state
        if self._closed or state.is_terminal or self.error or self.thinking is not None:
            return
        side = state.to_act
        seat = self._seats[side]
        if seat is None:
            return
        agent = self.agents[side]
        last = self._jobs[side]
        if agent is not None and last is not None and not _over(last):
            # Its cancelled job has not returned yet: an agent never thinks twice at once.
            self.agents[side] = None
            close_agent_later(agent)
            agent = None
        job = Job("move", seat.spec, state.ply, self.generation, seat.ceiling)
        self.thinking = self._jobs[side] = job
        wait = max(0.0, self._last_move_time + self.delay - time.monotonic())
        self.workers.run(job, self._think, side, seat, agent, state.copy(), wait)

    def _think(
        self, job: Job, side: int, seat: Admitted, agent: Agent | None, state: State, wait: float
    ) -> None:
        if wait and job.cancelled.wait(wait):
            return  # the pause between agents' moves, cut short by a cancel
        job.started = time.monotonic()
        error = ""
        action = -1
        try:
            if agent is None:  # dropped after a timeout, or still busy: a fresh one
                agent = self._build(seat, self.seed + side)
                agent.reset(self.seed + side)
                with self._lock:
                    if self.thinking is job:
                        self.agents[side] = agent
            action = agent.act(state)
        except AgentFailure as exc:
            error = f"failed: {exc.reason}"
        except SessionError as exc:
            error = f"could not be built: {exc}"
        except Exception as exc:  # an agent bug is reported, never fatal to the server
            error = f"crashed: {type(exc).__name__}: {exc}"
        with self._lock:
            if self.thinking is not job or job.generation != self.generation:
                return  # undone, reloaded, closed or timed out meanwhile
            self.thinking = None
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

    def _check_time(self) -> None:
        """Report the agent thinking past ``think_timeout`` (called under the lock)."""
        job = self.thinking
        if job is None or job.seconds() <= self.think_timeout:
            return
        job.cancel()
        self.thinking = None
        side = self.state.to_act
        self.error = f"{SIDES[side]} ({job.spec}) timed out after {self.think_timeout:g} s"
        self.error_side = side
        # The thread may still run: it keeps its agent; a retry builds a fresh one.
        stuck = self.agents[side]
        self.agents[side] = None
        self._changed()
        if stuck is not None:
            close_agent_later(stuck)

    # --- a person's decisions ---------------------------------------------------------

    def play(self, action: str | int, ply: int | None = None) -> None:
        """A person's decision (notation or index) at the live position.

        ``ply``, when given, is the number of actions the page saw: a stale
        click (the game moved on meanwhile) is refused rather than applied to
        another position.
        """
        with self._lock:
            self._check_time()
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
                raise SessionError(f"illegal action {clip(action)}: {exc}") from None
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
        """Ask ``spec`` about the position after ``ply`` (default: now), on the pool.

        Cancels the analysis running before it; the analyst is kept for the
        next request with the same spec once its job is over.
        """
        seat = self._admit(spec)
        if seat is None:
            raise SessionError("analysis needs an agent spec, e.g. 'alphabeta' or 'mcts:sims=400'")
        with self._lock:
            ply = len(self.actions) if ply is None else ply
            state = self.state_at(ply)
            if state.is_terminal:
                raise SessionError("the game is over at that ply: nothing to analyse", 409)
            kept = self._analyst
        if kept is not None and kept[0] == seat.spec and _over(kept[2]):
            agent = kept[1]
        else:
            agent = self._build(seat, self.seed)
        with self._lock:
            if self._closed:
                raise SessionError(f"game {self.id} is closed", 404)
            if self._analysis_job is not None:
                self._analysis_job.cancel()
            job = Job("analysis", seat.spec, ply, self.generation, seat.ceiling)
            if self._analyst is not None and self._analyst[1] is not agent:
                close_agent_later(self._analyst[1])
            self._analyst = (seat.spec, agent, job)
            self._analysis_job = job
            self.analysis = {"spec": seat.spec, "ply": ply, "status": "running"}
            self._changed()
            self.workers.run(job, self._analyse, agent, state)

    def _analyse(self, job: Job, agent: Agent, state: State) -> None:
        job.started = time.monotonic()
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
                info.update(status="done", seconds=round(job.seconds(), 3))
                info.update(result.to_json())
            self.analysis = info
            self._changed()

    # --- review --------------------------------------------------------------------

    def request_review(self, spec: str) -> None:
        """Review the game so far with ``spec`` on the pool (replacing a running review)."""
        seat = self._admit(spec)
        if seat is None:
            raise SessionError("a review needs an agent spec, e.g. 'mcts:sims=400'")
        agent = self._build(seat, self.seed)
        with self._lock:
            if self._closed or not self.actions:
                close_agent_later(agent)
                if self._closed:
                    raise SessionError(f"game {self.id} is closed", 404)
                raise SessionError("nothing to review: no decision has been played", 409)
            if self._review_job is not None:
                self._review_job.cancel()
            job = Job("review", seat.spec, len(self.actions), self.generation)
            self._review_job = job
            self.review = running(seat.spec, len(self.actions))
            self._changed()
            start, actions = self.start.copy(), list(self.actions)
            self.workers.run(job, self._run_review, agent, start, actions)

    def _run_review(self, job: Job, agent: Agent, start: State, actions: list[int]) -> None:
        try:
            review_job(job, agent, start, actions, self.seed, self._review_report)
        finally:
            close_agent_later(agent)

    def _review_report(self, job: Job, info: dict[str, Any]) -> None:
        with self._lock:
            if self._review_job is not job or self.review is None:
                return  # replaced, or the game's history changed
            self.review = {**self.review, **info}
            if info["status"] != "running":
                self._review_job = None
            self._changed()

    def cancel_review(self) -> None:
        """Stop the running review; it keeps the decisions it has reviewed."""
        with self._lock:
            if self._review_job is None:
                raise SessionError("no review is running", 409)
            self._review_job.cancel()

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
            raise SessionError(f"unknown record format {clip(fmt)} (yinsh or sgf)")
        record = self.record()
        return write_record(record) if fmt == "yinsh" else write_sgf(record)

    # --- the view the page draws -------------------------------------------------------

    def view(self, ply: int | None = None) -> dict[str, Any]:
        """Everything the page shows, for the live position or the one after ``ply``."""
        with self._lock:
            self._check_time()
            live = len(self.actions)
            ply = live if ply is None else ply
            state = self.state_at(ply)
            moves = []
            probe = self.start.copy()
            for action in self.actions:
                moves.append({"side": "WB"[probe.to_act], "action": action_to_str(action)})
                probe.apply_unchecked(action)
            last = None
            if ply > 0:
                last = last_action_json(self.state_at(ply - 1), self.actions[ply - 1], state)
            side = state.to_act
            human_to_act = ply == live and not state.is_terminal and self.players[side] == HUMAN
            thinking = self.thinking
            return {
                "id": self.id,
                "version": self.version,
                "players": {"white": self.players[0], "black": self.players[1]},
                "ply": ply,
                "live_ply": live,
                "start_ply": self.start.ply,
                "from_start": self.from_start,
                "moves": moves,
                "position": position_json(state),
                "last": last,
                "legal": state.legal_action_names() if human_to_act else [],
                "human_to_act": human_to_act,
                "thinking": None
                if thinking is None
                else {
                    "side": SIDES[self.state.to_act],
                    "spec": thinking.spec,
                    "seconds": round(thinking.seconds(), 1),
                },
                "error": self.error,
                "error_side": None if self.error_side is None else SIDES[self.error_side],
                "analysis": self.analysis,
                "review": self.review,
            }

    def close(self) -> None:
        """Cancel the game's jobs and release its agents; the game takes no more work."""
        with self._lock:
            self._closed = True
            self._new_generation()
            agents = [*self.agents, None if self._analyst is None else self._analyst[1]]
            self.agents = [None, None]
            self._analyst = None
        for agent in agents:
            if agent is not None:
                close_agent_later(agent)


def _is_initial(state: State) -> bool:
    return state.key() == State(rings_to_win=state.rings_to_win).key()


def _over(job: Job) -> bool:
    """Whether ``job`` no longer runs (done, or cancelled before it started)."""
    return job.future is not None and job.future.done()
