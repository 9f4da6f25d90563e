"""Review a whole game with an agent: its value before every decision, its move, each move's loss.

Chess made this routine (Lichess's computer analysis, Scid's game review); this
is the same for YINSH, with any agent that has a value of a position
(``mcts``, ``pretrained``, ``net``; agents that only pick a move, such as
``alphabeta``, are refused by :func:`check_values`).

**Values.** Every position of the game is valued once, by the agent's one
analysis hook (:meth:`agents.base.Agent.analyse`), in [-1, 1] and converted
to White's point of view (+1: White wins).  A position the search proved
takes the proven result (+1 or -1); the final position of a game the rules
ended takes its result (+1, -1, 0 for a draw); a *forced* decision (one legal
action, common among row and ring removals) is not asked about: its position
has the value of the next one.

**Loss.** As on Lichess, a decision's loss is how much the value fell from the
mover's point of view between the position before it and the position after
it (the value of the action played): ``max(0, s * (before - after))`` with
``s = +1`` for White and ``-1`` for Black.  Playing the agent's own preferred
action loses nothing by definition (its value may still move with a deeper
look one ply on; that is the agent's noise, not the player's error).

**Marks.** Thresholds on the loss on the value scale, which is Lichess's
"winning chances" scale (``2 p - 1`` for a win probability ``p``): Lichess
marks a loss of 0.1 an inaccuracy, 0.2 a mistake and 0.3 a blunder
(``Advice.scala`` in lila), i.e. 5, 10 and 15 points of win probability.
:data:`MARKS` keeps those.  A search's randomness moves values far less:
reviews of a bundled game by ``mcts:sims=400`` with two seeds differ by 0.005
per position on average and 0.028 at most (``docs/guide/review.md``).

**Accuracy.** Lichess's per-move accuracy from the win-percentage drop ``d``
(``103.1668 exp(-0.04354 d) - 3.1669``, clipped to 0..100, with ``d = 50 *
loss``), averaged over a player's decisions that were not forced (Lichess
further mixes a volatility-weighted and a harmonic mean; the plain mean is
simpler to read and to check).

A review stops early when the agent fails (an exception, an engine that
times out), when ``time_limit`` seconds have passed or ``should_stop()``
turns True (the web app's cancel): it keeps the decisions reviewed so far and
says at which ply it stopped and why (``Review.stopped_at``, ``Review.reason``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agents.base import Agent
from agents.infra.worker_pool import agent_exit
from agents.params import clip
from agents.search.stopping import stop_when
from yinsh_env import GameRecord, State, action_to_str, str_to_action

#: Loss thresholds (value scale, [-1, 1]) of each mark, worst first (Lichess's).
MARKS: Final = (("blunder", 0.3), ("mistake", 0.2), ("inaccuracy", 0.1))
#: Digits kept for values and losses in the review (its JSON is compared byte for byte).
DIGITS: Final = 4


def mark_of(loss: float | None) -> str | None:
    """``'blunder'``, ``'mistake'``, ``'inaccuracy'`` or None for a loss (see :data:`MARKS`)."""
    if loss is None:
        return None
    for name, threshold in MARKS:
        if loss >= threshold:
            return name
    return None


def move_accuracy(loss: float) -> float:
    """Lichess's accuracy of one move (0..100) from its loss on the value scale."""
    drop = 50.0 * loss  # points of win percentage
    return min(100.0, max(0.0, 103.1668 * math.exp(-0.04354 * drop) - 3.1669))


@dataclass(frozen=True)
class Decision:
    """One reviewed decision: the ``ply``-th action of the game (1 = the first).

    ``value`` is the position's value before it and ``value_played`` after it,
    both from White's point of view; ``loss`` is from the mover's (>= 0).
    Either value is None only in a review that stopped before knowing it.
    """

    ply: int
    side: str  # "W" or "B"
    action: str
    best: str
    forced: bool
    value: float | None
    value_played: float | None
    loss: float | None
    mark: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "side": self.side,
            "action": self.action,
            "best": self.best,
            "forced": self.forced,
            "value": self.value,
            "value_played": self.value_played,
            "loss": self.loss,
            "mark": self.mark,
        }


@dataclass
class Review:
    """A game reviewed by one agent: its decisions, and where the review stopped if it did."""

    agent: str
    rings_to_win: int
    decisions: list[Decision] = field(default_factory=list)
    #: Decisions in the game (``len(decisions)`` once the review is complete).
    total: int = 0
    #: Where the review stopped (None: complete): the position before decision
    #: ``stopped_at`` could not be valued (``total + 1``: the final position), so
    #: the decisions before it are listed, the last without ``value_played``.
    stopped_at: int | None = None
    reason: str | None = None
    white: str = "?"
    black: str = "?"
    result: str = "*"

    @property
    def complete(self) -> bool:
        return self.stopped_at is None

    def values(self) -> list[float | None]:
        """White's value of every position reviewed: before ply 1, ..., after the last."""
        points: list[float | None] = [d.value for d in self.decisions]
        if self.decisions:
            points.append(self.decisions[-1].value_played)
        return points

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per player: decisions, forced ones, mean loss, marks counted, accuracy."""
        out = {}
        for side, name in (("W", "white"), ("B", "black")):
            mine = [d for d in self.decisions if d.side == side]
            judged = [d.loss for d in mine if not d.forced and d.loss is not None]
            counts = {mark: sum(d.mark == mark for d in mine) for mark, _ in reversed(MARKS)}
            out[name] = {
                "player": self.white if side == "W" else self.black,
                "decisions": len(mine),
                "forced": sum(d.forced for d in mine),
                "mean_loss": _round(sum(judged) / len(judged)) if judged else None,
                **counts,
                "accuracy": (
                    round(sum(move_accuracy(x) for x in judged) / len(judged), 1)
                    if judged
                    else None
                ),
            }
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"decisions": [...], "summary": {...}}`` and what the review was made with."""
        return {
            "agent": self.agent,
            "white": self.white,
            "black": self.black,
            "result": self.result,
            "rings_to_win": self.rings_to_win,
            "thresholds": {name: threshold for name, threshold in MARKS},
            "complete": self.complete,
            "stopped": None if self.complete else {"ply": self.stopped_at, "reason": self.reason},
            "decisions": [d.to_json() for d in self.decisions],
            "summary": self.summary(),
        }


def _round(x: float) -> float:
    return round(x, DIGITS) + 0.0  # + 0.0: no "-0.0" in the JSON


def check_values(agent: Agent, rings_to_win: int = 3) -> None:
    """Raise ValueError unless ``agent`` gives a value of a position (asked at the start)."""
    if agent.rings_to_win is not None and agent.rings_to_win != rings_to_win:
        raise ValueError(
            f"agent {agent.name!r} plays games of {agent.rings_to_win} rings to win, "
            f"not {rings_to_win}"
        )
    try:
        found = agent.analyse(State(rings_to_win=rings_to_win))
    except SystemExit as exc:  # sys.exit() in analyse: the agent's, unless a signal's
        raise ValueError(f"agent {agent.name!r} exited: {agent_exit(exc)}") from None
    if found.value is None and found.proven is None:
        raise ValueError(
            f"agent {agent.name!r} gives no value of a position, so it cannot review a game; "
            "use one that does (mcts, pretrained, net)"
        )
    if found.proven is None and not _finite(found.value):
        raise ValueError(
            f"agent {agent.name!r} gives a value that is not a finite number "
            f"({clip(repr(found.value))}) for the start position"
        )


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False


def white_value(agent: Agent, state: State) -> tuple[float, int]:
    """The agent's value of ``state`` from White's side, and its preferred action."""
    found = agent.analyse(state.copy())
    if found.proven is not None:
        return (1.0 if found.proven == 0 else -1.0), found.action
    if found.value is None:
        raise ValueError(f"agent {agent.name!r} gave no value for {state.to_text()!r}")
    if not _finite(found.value):  # NaN would be clamped to a value, and blunders invented
        raise ValueError(f"a value that is not a finite number: {clip(repr(found.value))}")
    value = max(-1.0, min(1.0, float(found.value)))
    return (value if found.player == 0 else -value), found.action


def review_record(record: GameRecord, agent: Agent, **options: Any) -> Review:
    """:func:`review_game` of a record's game, with its players and result."""
    review = review_game(State(rings_to_win=record.rings_to_win), record.actions, agent, **options)
    review.white, review.black, review.result = record.white, record.black, str(record.result)
    return review


def review_game(
    start: State,
    actions: Sequence[int | str],
    agent: Agent,
    *,
    seed: int | None = 0,
    time_limit: float | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Review:
    """Review the game of ``actions`` from ``start`` (left unchanged) with ``agent``.

    The agent is reset with ``seed`` first, so a seeded agent gives the same
    review every time.  ``progress(n)`` is called as each position is done.
    Raises ValueError for an illegal action (naming its ply) before the agent
    is asked anything.
    """
    states = [start.copy()]
    indices: list[int] = []
    for ply, action in enumerate(actions, 1):
        state = states[-1].copy()
        try:
            index = str_to_action(action) if isinstance(action, str) else int(action)
            state.push(index)
        except ValueError as exc:
            raise ValueError(f"ply {ply} ({clip(repr(action))}): {exc}") from None
        indices.append(index)
        states.append(state)
    agent.reset(seed)
    review = Review(agent.name, start.rings_to_win, total=len(indices))
    deadline = None if time_limit is None else time.monotonic() + time_limit
    why: list[str] = []  # why the review was told to stop, once it was

    def stopping() -> bool:
        if should_stop is not None and should_stop():
            why[:] = ["cancelled"]
        elif deadline is not None and time.monotonic() >= deadline:
            why[:] = [f"the time limit of {time_limit:g} s was reached"]
        return bool(why)

    n = len(indices)
    forced = [len(s.legal_actions()) == 1 for s in states[:n]]
    # White's value of every position (None: forced, filled in below, or not reached).
    values: list[float | None] = [None] * (n + 1)
    bests = list(indices)  # a forced decision's best is the action played
    reached = n + 1  # positions valued (or forced) before the review stopped
    for i, state in enumerate(states):
        if i == n and state.is_terminal:
            values[i] = state.result.white_value
        elif i == n or not forced[i]:
            try:
                with stop_when(stopping):
                    if not stopping():
                        values[i], best = white_value(agent, state)
                        if i < n:
                            bests[i] = best
            except Exception as exc:  # an agent's failure ends the review, which is kept
                why[:] = [f"{agent.name} failed: {type(exc).__name__}: {clip(str(exc), 300)}"]
            except SystemExit as exc:  # sys.exit() in analyse, likewise (a signal's goes on)
                why[:] = [f"{agent.name} failed: exited: {agent_exit(exc)}"]
            if why:  # failed, or cut short mid-search: that answer is not kept
                values[i] = None
                reached = i
                break
        if progress is not None:
            progress(1)
    if reached <= n:
        review.stopped_at, review.reason = reached + 1, why[0]
    for i in range(min(reached, n) - 1, -1, -1):
        if forced[i]:  # a forced position has the value of the next one
            values[i] = values[i + 1]
    review.decisions = [
        _decision(i + 1, states[i], forced[i], indices[i], bests[i], values[i], values[i + 1])
        for i in range(min(reached, n))
    ]
    return review


def _decision(
    ply: int,
    state: State,
    forced: bool,
    action: int,
    best: int,
    before: float | None,
    after: float | None,
) -> Decision:
    mover = 1.0 if state.to_act == 0 else -1.0
    loss: float | None = None
    if forced or action == best:
        loss = 0.0
    elif before is not None and after is not None:
        loss = _round(max(0.0, mover * (before - after)))
    return Decision(
        ply=ply,
        side="WB"[state.to_act],
        action=action_to_str(action),
        best=action_to_str(best),
        forced=forced,
        value=None if before is None else _round(before),
        value_played=None if after is None else _round(after),
        loss=loss,
        mark=mark_of(loss),
    )
