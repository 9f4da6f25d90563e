"""What an agent thinks of a position: the one analysis hook (:meth:`agents.base.Agent.analyse`).

The arena, the engine protocol (``analyse``) and the web app read an
:class:`Analysis`; a search fills in its numbers, other agents give their
move alone.  Values are in [-1, 1] for the player to act (+1 a win), as
everywhere in the search (:mod:`agents.search.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.search.tree import UNPROVEN, Node
from yinsh_env.engine.actions import action_to_str


@dataclass(frozen=True)
class ActionStats:
    """One root action: its prior, visits and mean value (None when unvisited)."""

    action: int
    prior: float
    visits: int
    q: float | None


@dataclass(frozen=True)
class Analysis:
    """An agent's move for a position and, when it searched, what lies behind it.

    ``value`` is the agent's estimate for ``player`` (the player to act) in
    [-1, 1], None when the agent has none; ``lines`` lists every legal
    action's statistics in action order (empty for agents that do not
    search); ``pv`` is the principal variation (``action``, then the most
    visited edge at each node below it); ``proven`` names the player
    the position is a proven win for, if the search proved it.
    """

    action: int
    player: int
    value: float | None = None
    simulations: int = 0
    lines: tuple[ActionStats, ...] = ()
    pv: tuple[int, ...] = ()
    proven: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain values with actions in notation (for the protocol and the web app)."""
        return {
            "action": action_to_str(self.action),
            "player": "WB"[self.player],
            "value": self.value,
            "simulations": self.simulations,
            "proven": None if self.proven is None else "WB"[self.proven],
            "pv": [action_to_str(a) for a in self.pv],
            "lines": [
                {"action": action_to_str(s.action), "prior": s.prior, "visits": s.visits, "q": s.q}
                for s in self.lines
            ],
        }


def analysis_of(root: Node, action: int, simulations: int, value: float) -> Analysis:
    """The :class:`Analysis` of a searched root (its lines sorted by action)."""
    order = np.argsort(root.actions, kind="stable")
    visits, value_sum, prior = root.visits, root.value_sum, root.prior
    lines = tuple(
        ActionStats(
            int(root.actions[i]),
            float(prior[i]),
            int(visits[i]),
            float(value_sum[i] / visits[i]) if visits[i] > 0 else None,
        )
        for i in order
    )
    return Analysis(
        action=action,
        player=root.player,
        value=value,
        simulations=simulations,
        lines=lines,
        pv=principal_variation(root, action),
        proven=None if root.proven == UNPROVEN else root.proven,
    )


def principal_variation(root: Node, action: int, limit: int = 32) -> tuple[int, ...]:
    """``action``, then the most visited edges below it (at most ``limit`` decisions)."""
    pv = [action]
    found = np.flatnonzero(root.actions == action)
    node = root.children[int(found[0])] if len(found) else None
    while node is not None and not node.terminal and len(pv) < limit:
        if node.total_visits == 0:
            break
        i = int(np.argmax(node.visits))
        pv.append(int(node.actions[i]))
        node = node.children[i]
    return tuple(pv)
