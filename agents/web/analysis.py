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

import numpy as np

from yinsh_env import State, action_to_str

from ..base import Agent

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
    """Ask ``agent`` about ``state`` (left unchanged); raises ValueError once the game is over."""
    if state.is_terminal:
        raise ValueError(f"the game is over in {state.to_text()!r}: nothing to analyse")
    legal = state.legal_actions()
    player = state.to_act
    if len(legal) == 1:
        return Analysis(agent.name, legal[0], None, [MoveInfo(legal[0], 1.0)], player)
    if hasattr(agent, "evaluator") and hasattr(agent, "search_config"):
        return _network(agent, state, player)
    if hasattr(agent, "search") and hasattr(agent, "last_visits"):
        return _mcts(agent, state, player)
    return Analysis(agent.name, agent.act(state.copy()), None, [], player)


def _network(agent: Any, state: State, player: int) -> Analysis:
    """The network agent: raw priors and value, plus its search when ``sims > 0``."""
    from train.mcts import Leaf, Search, run_searches, softmax

    logits, values = agent.evaluator([Leaf.of(state)])
    legal = np.asarray(state.legal_actions())
    priors = softmax(logits[0])
    value = float(values[0])
    if agent.sims <= 0:
        order = np.argsort(-priors)[:TOP_MOVES]
        moves = [MoveInfo(int(legal[i]), float(priors[i])) for i in order]
        return Analysis(agent.name, int(legal[order[0]]), value, moves, player)
    search = Search(state.copy(), agent.search_config, agent.sims, agent.np_rng)
    run_searches([search], agent.evaluator)
    root = search.root
    assert root is not None
    best = int(root.actions[search.choose(temperature=0.0)])
    visits = root.visits
    q = np.divide(root.value_sum, visits, out=np.full(len(visits), np.nan), where=visits > 0)
    order = np.lexsort((-root.prior, -visits))[:TOP_MOVES]
    moves = [
        MoveInfo(
            int(root.actions[i]),
            float(root.prior[i]),
            int(visits[i]),
            None if np.isnan(q[i]) else float(q[i]),
        )
        for i in order
    ]
    return Analysis(agent.name, best, search.root_value(), moves, player)


def _mcts(agent: Any, state: State, player: int) -> Analysis:
    """The UCT baseline: visits and mean results of the root's children."""
    root = agent.search(state)
    children = root.children
    # As the agent chooses: a proven win first, then visits; proven losses last.
    ranked = sorted(
        children.items(),
        key=lambda item: (item[1].proven != player, item[1].proven == 1 - player, -item[1].visits),
    )
    visits = sum(child.visits for child in children.values())
    wins = sum(child.wins for child in children.values())
    # A child's wins are the mean result in [0, 1] of the player who chose it:
    # the player to act here.
    value = 2.0 * wins / visits - 1.0 if visits else None
    moves = [
        MoveInfo(a, None, c.visits, 2.0 * c.wins / c.visits - 1.0 if c.visits else None)
        for a, c in ranked[:TOP_MOVES]
    ]
    return Analysis(agent.name, ranked[0][0], value, moves, player)
