"""The search tree: one node class for every configuration of the search.

**The value convention, stated once for the whole search.**  A value is a game
result in [-1, 1] (+1 a win, 0 a draw, -1 a loss) from the view of a *named*
player.  A :class:`Node` knows ``player``, the player to act there, and its
edge statistics hold the values backed up through each edge from the view of
that player, the one who chose the edge.  Evaluators answer a leaf's value for
its player to act; :func:`backup` turns it into White's view once and hands
every edge of the path the value of the player who chose that edge.  Nothing
assumes that players alternate: a YINSH player often decides several times in
a row (a move, a row removal, a ring removal), and the opponent may resolve
rows the mover made before moving, so flipping the sign at every ply would be
wrong.

Proofs (MCTS-Solver): ``proven`` names the player a node is a proven win for
(:data:`UNPROVEN` otherwise).  A finished game is proven for its winner; with
the solver on, a node is proven for its player to act as soon as one child is
proven for them, and for the other player once every child is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np

from yinsh_env import Player
from yinsh_env.engine.state import State

#: ``Node.proven`` of a node that is not a proven win for anyone.
UNPROVEN: Final = -1


class Node:
    """An evaluated position: its legal actions and per-edge statistics.

    Statistics live in arrays over the legal actions (``visits[i]`` is the
    visit count of ``actions[i]``, ``value_sum[i]`` the values backed up
    through it for ``player``); children are created only when visited.  The
    order of ``actions`` is the evaluator's: sorted for a network (its
    logits come in that order), shuffled for rollouts (UCT expands in
    index order).
    """

    __slots__ = (
        "actions",
        "child_proven",
        "children",
        "logits",
        "order",
        "player",
        "prior",
        "proven",
        "terminal",
        "value",
        "value_sum",
        "visits",
    )

    def __init__(
        self,
        player: int,
        actions: np.ndarray,
        logits: np.ndarray,
        value: float,
        proven: int = UNPROVEN,
    ) -> None:
        self._fill(player, actions, logits, np.exp(logits), value, proven)

    def _fill(
        self,
        player: int,
        actions: np.ndarray,
        logits: np.ndarray,
        prior: np.ndarray,
        value: float,
        proven: int = UNPROVEN,
    ) -> None:
        self.player = player
        self.actions = actions
        #: Log-probabilities of the prior policy over ``actions``, and the
        #: probabilities (never modified in place: they may be shared).
        self.logits = logits
        self.prior = prior
        #: The evaluator's (or the final) value of this position for ``player``.
        self.value = value
        self.terminal = len(actions) == 0
        n = len(actions)
        self.visits = np.zeros(n)
        self.value_sum = np.zeros(n)
        self.children: list[Node | None] = [None] * n
        self.proven = proven
        #: Per edge, the player its child is proven for (kept only by a solving search).
        self.child_proven: np.ndarray | None = None
        #: The edges by decreasing prior, once a selection asked (:mod:`.visited`).
        self.order: list[int] | None = None

    @classmethod
    def evaluated(cls, leaf: Leaf, logits: np.ndarray, value: float) -> Node:
        """A node for a leaf from an evaluator's raw logits over its actions.

        A leaf marked ``uniform`` (an evaluator without a policy) gets the
        uniform prior, shared between nodes of the same width.
        """
        if leaf.uniform:
            node = cls.__new__(cls)
            node._fill(leaf.player, leaf.actions, *uniform_prior(len(leaf.actions)), value)
            return node
        return cls(leaf.player, leaf.actions, log_softmax(logits), value)

    @classmethod
    def final(cls, state: State) -> Node:
        """A node for a finished game: its value is the result, proven for the winner."""
        empty = np.zeros(0)
        winner = state.winner
        return cls(
            state.to_act,
            np.zeros(0, dtype=np.int64),
            empty,
            state.returns()[state.to_act],
            UNPROVEN if winner is None else winner,
        )

    @property
    def total_visits(self) -> float:
        return float(self.visits.sum())

    def mean_value(self) -> float:
        """This node's value estimate for ``player``: its own value and all below it."""
        return (self.value + float(self.value_sum.sum())) / (1.0 + self.total_visits)

    def q(self) -> np.ndarray:
        """Mean value of each edge for ``player`` (0 where unvisited)."""
        return np.where(self.visits > 0, self.value_sum / np.maximum(self.visits, 1.0), 0.0)

    def known_white_value(self) -> float:
        """White's value of a node whose value needs no evaluation (finished or proven)."""
        if self.proven != UNPROVEN:
            return 1.0 if self.proven == Player.WHITE else -1.0
        return white_value(self)

    def child_index(self, action: int) -> int:
        """Index of ``action`` among the legal actions (raises if illegal)."""
        found = np.flatnonzero(self.actions == action)
        if len(found) == 0:
            raise ValueError(f"action {action} is not legal in this node")
        return int(found[0])

    def update_proof(self) -> bool:
        """Prove this node from its children's proofs if possible; True when it became proven."""
        proofs = self.child_proven
        if self.proven != UNPROVEN or proofs is None:
            return False
        me = self.player
        if (proofs == me).any():
            self.proven = me
            return True
        if (proofs == 1 - me).all():
            self.proven = 1 - me
            return True
        return False


@dataclass
class Leaf:
    """A position the search needs evaluated, taken while the search stands on it.

    ``actions`` are the legal actions in the order the new node keeps;
    ``planes`` is the network's input (:func:`network_leaf`), ``state`` a copy
    of the position for evaluators that play on (rollouts); ``root`` tells an
    evaluator that the leaf is the search's root; ``key`` identifies the
    position exactly (:meth:`State.key`), for a cache of evaluations
    (:mod:`.cache`).
    """

    actions: np.ndarray
    player: int
    planes: np.ndarray | None = None
    state: State | None = None
    root: bool = False
    #: The evaluator has no policy: the node takes the uniform prior (its logits are ignored).
    uniform: bool = False
    key: tuple[int, ...] | None = None


def log_softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    return z - math.log(float(np.exp(z).sum()))


@lru_cache(maxsize=512)
def uniform_prior(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The log-probabilities and probabilities of the uniform prior over ``n`` actions."""
    logits = np.full(n, -math.log(n)) if n else np.zeros(0)
    prior = np.exp(logits)
    logits.flags.writeable = prior.flags.writeable = False
    return logits, prior


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max())
    return z / z.sum()


def white_value(node: Node) -> float:
    """``node.value`` (for the player to act there) from White's view."""
    return node.value if node.player == Player.WHITE else -node.value


Path = list[tuple[Node, int]]


def backup(path: Path, leaf_white_value: float) -> None:
    """Add one visit and the leaf's value to every edge of ``path``.

    Each edge receives the value as seen by the player who chose it: not an
    alternating sign, since the same player may choose several times in a row.
    """
    for node, i in path:
        node.visits[i] += 1.0
        node.value_sum[i] += leaf_white_value if node.player == Player.WHITE else -leaf_white_value


def backup_proofs(path: Path) -> None:
    """Climb from the leaf, proving nodes while their children's proofs allow."""
    for node, i in reversed(path):
        child = node.children[i]
        if child is None or child.proven == UNPROVEN:
            return
        if node.child_proven is None:
            node.child_proven = np.full(len(node.actions), UNPROVEN, dtype=np.int8)
        node.child_proven[i] = child.proven
        if not node.update_proof():
            return


def advance(root: Node | None, action: int) -> Node | None:
    """The subtree under ``action`` (to reuse for the next move), if it was expanded."""
    if root is None or root.terminal:
        return None
    child = root.children[root.child_index(action)]
    return None if child is None or child.terminal else child
