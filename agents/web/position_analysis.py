"""What an agent thinks of a position: its move, value estimate, priors and visits.

The web app's overlay and hints, the terminal's ``hint`` and the notebook
widget all ask :func:`analyse`.  Agents expose different things: the network
agent (``net``) a prior policy, a value and, with ``sims > 0``, a search with
visit counts; the ``mcts`` baseline visit counts and mean results; every other
agent only its chosen move.  This adapter reads what each one has, so callers
see one :class:`Analysis` whatever the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.base import Agent
from yinsh_env import State, action_to_str

#: Moves listed per analysis (the most visited, then the most likely).
TOP_MOVES = 8


@dataclass(frozen=True)
class MoveInfo:
    """One candidate move: its prior probability and search visits, where known."""

    action: int
    prior: float | None = None
    visits: int | None = None
    #: Mean searched value of the move for the player to act, in [-1, 1].
    q: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "action": action_to_str(self.action),
            "prior": self.prior,
            "visits": self.visits,
            "q": self.q,
        }


@dataclass(frozen=True)
class Analysis:
    """An agent's view of one position, for the player to act there."""

    spec: str
    best: int
    #: Expected result for the player to act, in [-1, 1] (None: the agent has none).
    value: float | None = None
    #: Candidate moves, most visited (else most likely) first.
    moves: list[MoveInfo] = field(default_factory=list)
    #: The player the value is for (0 White, 1 Black).
    player: int = 0

    def white_value(self) -> float | None:
        """The value from White's side (the page shows one scale)."""
        if self.value is None:
            return None
        return self.value if self.player == 0 else -self.value

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "best": action_to_str(self.best),
            "value": self.value,
            "white_value": self.white_value(),
            "player": "white" if self.player == 0 else "black",
            "moves": [m.to_json() for m in self.moves],
        }


def analyse(agent: Agent, state: State) -> Analysis:
    """Ask ``agent`` about ``state`` (left unchanged); raises ValueError once the game is over.

    Reads the agents' one analysis hook, :meth:`agents.base.Agent.analyse`.
    """
    if state.is_terminal:
        raise ValueError(f"the game is over in {state.to_text()!r}: nothing to analyse")
    legal = state.legal_actions()
    player = state.to_act
    if len(legal) == 1:
        return Analysis(agent.name, legal[0], None, [MoveInfo(legal[0], 1.0)], player)
    found = agent.analyse(state.copy())
    searched = found.simulations > 0
    # The agent's move first, then the most visited (a search), else the most likely.
    ranked = sorted(
        found.lines, key=lambda line: (line.action != found.action, -line.visits, -line.prior)
    )[:TOP_MOVES]
    moves = [
        MoveInfo(line.action, line.prior, line.visits if searched else None, line.q)
        for line in ranked
    ]
    return Analysis(agent.name, found.action, found.value, moves, player)
