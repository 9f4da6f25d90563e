"""Monte Carlo tree search over the engine, with priors and values from a network.

The search is a handful of small functions over :class:`Node` arrays (scores,
backup, the Gumbel schedule, the policy targets) and one driver,
:class:`Search`, that walks a single game's tree.  The driver never calls the
network: :meth:`Search.next_leaf` returns the position it needs evaluated and
:meth:`Search.expand` takes the answer, so a caller can advance many searches
and evaluate all their leaves in one batch (:func:`run_searches`,
:mod:`train.selfplay`).

Values are kept per player.  Each node knows the player to act there, and an
edge accumulates the leaf values from *that* player's point of view.  YINSH
often gives one player several decisions in a row (a row removal, then a ring
removal) and lets the opponent resolve their rows before moving, so flipping
the sign at every ply, as two-player searches often do, would be wrong.

Two selection rules:

* ``puct``: AlphaZero's PUCT, Dirichlet noise on the root's legal actions,
  moves chosen from the visit counts with a temperature.
* ``gumbel``: Gumbel MuZero (Danihelka et al., 2022).  The root samples
  ``gumbel_considered`` actions without replacement (Gumbel-top-k) and shares
  the simulations among them by sequential halving; interior nodes pick the
  action whose visit share lags furthest behind the improved policy.  The
  policy target is the improved policy ``softmax(logits + sigma(completed q))``,
  which improves on the prior even with a handful of simulations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from yinsh_env.observation import encode
from yinsh_env.state import WHITE, State

from .config import SearchConfig

# --- the tree ---------------------------------------------------------------------


class Node:
    """An evaluated position: its legal actions and per-edge statistics.

    Statistics live in arrays over the legal actions (``visits[i]`` is the
    visit count of ``actions[i]``); children are created only when visited.
    ``value_sum`` holds the values backed up through each edge from the point
    of view of ``player``, the player to act here.
    """

    __slots__ = (
        "actions",
        "children",
        "logits",
        "player",
        "prior",
        "terminal",
        "value",
        "value_sum",
        "visits",
    )

    def __init__(self, player: int, actions: np.ndarray, logits: np.ndarray, value: float) -> None:
        self.player = player
        self.actions = actions
        #: Log-probabilities of the prior policy over ``actions``.
        self.logits = logits
        self.prior = np.exp(logits)
        #: The network's (or the final) value of this position for ``player``.
        self.value = value
        self.terminal = len(actions) == 0
        n = len(actions)
        self.visits = np.zeros(n)
        self.value_sum = np.zeros(n)
        self.children: list[Node | None] = [None] * n

    @classmethod
    def evaluated(cls, leaf: Leaf, logits: np.ndarray, value: float) -> Node:
        """A node for a leaf from the network's raw logits over its legal actions."""
        return cls(leaf.player, leaf.actions, log_softmax(logits), value)

    @classmethod
    def final(cls, state: State) -> Node:
        """A node for a finished game: its value is the game's result."""
        empty = np.zeros(0)
        return cls(state.to_act, np.zeros(0, dtype=np.int64), empty, state.returns()[state.to_act])

    @property
    def total_visits(self) -> float:
        return float(self.visits.sum())

    def mean_value(self) -> float:
        """This node's value estimate for ``player``: its own value and all below it."""
        return (self.value + float(self.value_sum.sum())) / (1.0 + self.total_visits)

    def child_index(self, action: int) -> int:
        """Index of ``action`` among the legal actions (raises if illegal)."""
        i = int(np.searchsorted(self.actions, action))
        if i >= len(self.actions) or self.actions[i] != action:
            raise ValueError(f"action {action} is not legal in this node")
        return i


def log_softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    return z - math.log(float(np.exp(z).sum()))


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max())
    return z / z.sum()


def white_value(node: Node) -> float:
    """``node.value`` (for the player to act there) from White's view."""
    return node.value if node.player == WHITE else -node.value


Path = list[tuple[Node, int]]


def backup(path: Path, leaf_white_value: float) -> None:
    """Add one visit and the leaf's value to every edge of ``path``.

    Each edge receives the value as seen by the player who chose it: not an
    alternating sign, since the same player may choose several times in a row.
    """
    for node, i in path:
        node.visits[i] += 1.0
        node.value_sum[i] += leaf_white_value if node.player == WHITE else -leaf_white_value


# --- selection rules -----------------------------------------------------------------


def puct_scores(node: Node, c_puct: float, fpu_reduction: float, prior: np.ndarray) -> np.ndarray:
    """Q + U for every edge; unvisited edges take the node's value minus a reduction."""
    visits = node.visits
    visited = visits > 0
    fpu = node.mean_value() - fpu_reduction
    q = np.where(visited, node.value_sum / np.maximum(visits, 1.0), fpu)
    u = c_puct * prior * (math.sqrt(max(node.total_visits, 1.0)) / (1.0 + visits))
    return q + u


def completed_q(node: Node) -> np.ndarray:
    """Q of visited edges; unvisited ones get the mixed value (Gumbel MuZero, app. D).

    The mixed value interpolates the network's value with the prior-weighted
    mean Q of the visited edges, so unexplored actions are neither favoured
    nor dismissed.
    """
    visits = node.visits
    visited = visits > 0
    total = float(visits.sum())
    if total == 0.0:
        return np.full(len(visits), node.value)
    q = np.where(visited, node.value_sum / np.maximum(visits, 1.0), 0.0)
    weights = np.where(visited, node.prior, 0.0)
    weighted_q = float((weights * q).sum()) / max(float(weights.sum()), 1e-12)
    mixed = (node.value + total * weighted_q) / (total + 1.0)
    return np.where(visited, q, mixed)


def sigma(node: Node, q: np.ndarray, config: SearchConfig) -> np.ndarray:
    """Gumbel MuZero's monotone transform of Q: ``(c_visit + max N) * c_scale * q01``.

    ``q01`` maps Q to [0, 1]: from its fixed range [-1, 1] by default, or by the
    min and max over the edges (``gumbel_rescale_q``, as in mctx), which also
    stretches the tiny differences of an untrained value head to full scale.
    """
    if config.gumbel_rescale_q:
        low, high = float(q.min()), float(q.max())
        scaled = (q - low) / max(high - low, 1e-8)
    else:
        scaled = (q + 1.0) * 0.5
    return (
        (config.gumbel_c_visit + float(node.visits.max(initial=0.0)))
        * config.gumbel_c_scale
        * scaled
    )


def improved_policy(node: Node, config: SearchConfig) -> np.ndarray:
    """``softmax(logits + sigma(completed q))``: the Gumbel policy target."""
    return softmax(node.logits + sigma(node, completed_q(node), config))


def gumbel_interior_scores(node: Node, config: SearchConfig) -> np.ndarray:
    """Pick the edge whose visit share lags furthest behind the improved policy."""
    policy = improved_policy(node, config)
    return policy - node.visits / (1.0 + node.total_visits)


@lru_cache(maxsize=256)
def considered_visits(considered: int, simulations: int) -> tuple[int, ...]:
    """Sequential halving: the visit count a root action needs to be chosen at each simulation.

    Phase by phase the ``considered`` actions get equal visits, then the
    better half goes on (as in mctx's ``seq_halving``).
    """
    if considered <= 1:
        return tuple(range(simulations))
    log2 = math.ceil(math.log2(considered))
    sequence: list[int] = []
    visits = [0] * considered
    remaining = considered
    while len(sequence) < simulations:
        extra = max(1, simulations // (log2 * remaining))
        for _ in range(extra):
            sequence.extend(visits[:remaining])
            for i in range(remaining):
                visits[i] += 1
        remaining = max(2, remaining // 2)
    return tuple(sequence[:simulations])


def gumbel_root_scores(
    node: Node, gumbel: np.ndarray, considered_visit: float, config: SearchConfig
) -> np.ndarray:
    """Score ``g + logits + sigma(q)`` over the actions still in the halving."""
    q = sigma(node, completed_q(node), config)
    score = gumbel + node.logits + q
    return np.where(node.visits == considered_visit, score, -np.inf)


def sample_gumbel(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.gumbel(size=n)


def dirichlet_prior(
    prior: np.ndarray, rng: np.random.Generator, alpha: float, fraction: float
) -> np.ndarray:
    """The prior mixed with Dirichlet noise over the legal actions only."""
    if len(prior) <= 1 or fraction == 0.0:
        return prior
    noise = rng.dirichlet(np.full(len(prior), alpha))
    return (1.0 - fraction) * prior + fraction * noise


# --- one game's search ---------------------------------------------------------------


@dataclass
class Leaf:
    """A position the search needs the network to evaluate."""

    #: The observation planes, (11, 11, 17).
    planes: np.ndarray
    #: Its legal actions (sorted) and the player to act.
    actions: np.ndarray
    player: int

    @classmethod
    def of(cls, state: State) -> Leaf:
        return cls(encode(state), np.asarray(state.legal_actions(), dtype=np.int64), state.to_act)


class Search:
    """The search for one move of one game, advanced one simulation at a time.

    ``state`` is the game's position; the search applies actions to it while
    descending and undoes them before returning, so it is unchanged between
    calls.  ``root`` may be a subtree kept from the previous move.
    """

    def __init__(
        self,
        state: State,
        config: SearchConfig,
        simulations: int,
        rng: np.random.Generator,
        noise: bool = False,
        root: Node | None = None,
    ) -> None:
        self.state = state
        self.config = config
        self.simulations = simulations
        self.rng = rng
        self.noise = noise
        self.root = root
        self.done_simulations = 0
        self._pending: tuple[Path, Leaf] | None = None
        self._root_prior: np.ndarray | None = None
        self._gumbel: np.ndarray | None = None
        self._schedule: tuple[int, ...] = ()
        if root is not None:
            self._prepare_root()

    @property
    def finished(self) -> bool:
        return self.root is not None and self.done_simulations >= self.simulations

    def next_leaf(self) -> Leaf | None:
        """Run simulations until one needs the network; None once the search is finished.

        Simulations ending in a finished game are backed up on the spot.
        """
        if self._pending is not None:
            raise RuntimeError("the previous leaf has not been expanded yet")
        state = self.state
        if self.root is None:
            if state.is_terminal:
                raise ValueError(f"cannot search a finished game: {state.to_text()}")
            leaf = Leaf.of(state)
            self._pending = ([], leaf)
            return leaf
        while self.done_simulations < self.simulations:
            path = self._descend()
            if state.is_terminal:
                node, i = path[-1]
                child = node.children[i] = Node.final(state)
                backup(path, white_value(child))
                self._undo(len(path))
                self.done_simulations += 1
                continue
            leaf = Leaf.of(state)
            self._undo(len(path))
            self._pending = (path, leaf)
            return leaf
        return None

    def expand(self, logits: np.ndarray, value: float) -> None:
        """Attach the evaluation of the last leaf (logits over its legal actions)."""
        if self._pending is None:
            raise RuntimeError("no leaf is waiting for an evaluation")
        path, leaf = self._pending
        self._pending = None
        child = Node.evaluated(leaf, logits, value)
        if not path:
            self.root = child
            self._prepare_root()
            return
        node, i = path[-1]
        node.children[i] = child
        backup(path, white_value(child))
        self.done_simulations += 1

    def _prepare_root(self) -> None:
        root = self.root
        assert root is not None
        config = self.config
        if config.algorithm == "gumbel":
            # Sequential halving counts root visits from zero: a kept subtree keeps
            # its children (and their evaluations) but restarts the root's tallies.
            root.visits[:] = 0.0
            root.value_sum[:] = 0.0
            n = len(root.actions)
            self._gumbel = sample_gumbel(self.rng, n) if self.noise else np.zeros(n)
            considered = min(config.gumbel_considered, n)
            self._schedule = considered_visits(considered, self.simulations)
        elif self.noise:
            self._root_prior = dirichlet_prior(
                root.prior, self.rng, config.dirichlet_alpha, config.dirichlet_fraction
            )

    def _descend(self) -> Path:
        """Select edges from the root down to an unexpanded or final child, applying them."""
        config = self.config
        state = self.state
        node = self.root
        assert node is not None
        path: Path = []
        while True:
            if not path:
                scores = self._root_scores(node)
            elif config.algorithm == "gumbel":
                scores = gumbel_interior_scores(node, config)
            else:
                scores = puct_scores(node, config.c_puct, config.fpu_reduction, node.prior)
            i = int(np.argmax(scores))
            path.append((node, i))
            state.apply_unchecked(int(node.actions[i]))
            child = node.children[i]
            if child is None or child.terminal:
                return path
            node = child

    def _root_scores(self, root: Node) -> np.ndarray:
        config = self.config
        if config.algorithm == "gumbel":
            assert self._gumbel is not None
            considered_visit = self._schedule[self.done_simulations]
            return gumbel_root_scores(root, self._gumbel, considered_visit, config)
        prior = self._root_prior if self._root_prior is not None else root.prior
        return puct_scores(root, config.c_puct, config.fpu_reduction, prior)

    def _undo(self, n: int) -> None:
        for _ in range(n):
            self.state.pop()

    # --- results -------------------------------------------------------------------

    def policy_target(self) -> np.ndarray:
        """Probabilities over ``root.actions`` to train the policy towards."""
        root = self.root
        assert root is not None
        config = self.config
        if config.algorithm == "gumbel":
            return improved_policy(root, config)
        total = root.total_visits
        return root.visits / total if total > 0 else root.prior

    def choose(self, temperature: float) -> int:
        """The index (into ``root.actions``) of the move to play.

        ``gumbel``: the sequential-halving winner: sampled (with its Gumbel
        noise) when ``temperature > 0``, else the best of the most-visited
        actions.  ``puct``: visit counts raised to ``1 / temperature``.
        """
        root = self.root
        assert root is not None
        config = self.config
        if len(root.actions) == 1:
            return 0
        if config.algorithm == "gumbel":
            assert self._gumbel is not None
            gumbel = self._gumbel if temperature > 0 else np.zeros(len(root.actions))
            most = float(root.visits.max())
            return int(np.argmax(gumbel_root_scores(root, gumbel, most, config)))
        visits = root.visits
        if temperature <= 0 or root.total_visits == 0:
            best = visits == visits.max()
            # Ties (e.g. no simulations) go to the higher prior.
            return int(np.argmax(np.where(best, root.prior, -1.0)))
        weights = visits ** (1.0 / temperature)
        return int(self.rng.choice(len(weights), p=weights / weights.sum()))

    def root_value(self) -> float:
        """The searched value of the root for its player to act."""
        assert self.root is not None
        return self.root.mean_value()


def advance(root: Node | None, action: int) -> Node | None:
    """The subtree under ``action`` (to reuse for the next move), if it was expanded."""
    if root is None or root.terminal:
        return None
    child = root.children[root.child_index(action)]
    return None if child is None or child.terminal else child


# --- batched driving -------------------------------------------------------------------

#: Evaluates leaves in one batch: returns, per leaf, logits over its legal
#: actions and the value for its player to act.
BatchEvaluator = Callable[[Sequence[Leaf]], tuple[list[np.ndarray], np.ndarray]]


def run_searches(searches: Sequence[Search], evaluate: BatchEvaluator) -> None:
    """Run every search to completion, evaluating their leaves together each round."""
    active = list(searches)
    while active:
        leaves: list[Leaf] = []
        waiting: list[Search] = []
        for search in active:
            leaf = search.next_leaf()
            if leaf is not None:
                leaves.append(leaf)
                waiting.append(search)
        if not leaves:
            break
        logits, values = evaluate(leaves)
        for search, leaf_logits, value in zip(waiting, logits, values):
            search.expand(leaf_logits, float(value))
        active = [s for s in waiting if not s.finished]
