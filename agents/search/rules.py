"""How a search selects actions: small functions over :class:`~agents.search.tree.Node` arrays.

In the spirit of mctx, a search is one tree plus a root and an interior
selection function; :class:`Rules` bundles them with what the search reports
(the move to play and the policy target).  Three sets of rules:

* :class:`UCT`: UCB1 on mean values, unexplored actions first (in the node's
  action order), children proven lost skipped: the classic ``mcts`` baseline.
* :class:`PUCT`: AlphaZero's PUCT with first-play urgency, Dirichlet noise on
  the root's legal actions, moves from the visit counts with a temperature;
  optionally KataGo's forced playouts with policy-target pruning.
* :class:`Gumbel`: Gumbel MuZero (Danihelka et al., 2022).  The root samples
  ``considered`` actions without replacement (Gumbel-top-k) and shares the
  simulations among them by sequential halving; interior nodes pick the action
  whose visit share lags furthest behind the improved policy.  The policy
  target is the improved policy ``softmax(logits + sigma(completed q))``, which
  improves on the prior even with a handful of simulations.

All values are in [-1, 1] for the node's player to act (see
:mod:`agents.search.tree`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from agents.search.tree import Node, softmax
from agents.search.visited import interior_edge, root_edge

# --- scores ------------------------------------------------------------------------


def uct_scores(node: Node, c: float, visits_here: float) -> np.ndarray:
    """UCB1 ``Q + c sqrt(ln N / n)`` of every (visited) edge; ``N`` the node's own visits.

    ``c`` is the constant on [-1, 1] values (twice UCB1's on [0, 1] rewards).
    Children proven lost for the player to act score ``-inf``.
    """
    visits = node.visits
    scores = node.value_sum / visits + c * np.sqrt(math.log(visits_here) / visits)
    proofs = node.child_proven
    if proofs is not None:
        scores = np.where(proofs == 1 - node.player, -np.inf, scores)
    return scores


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


def dirichlet_prior(
    prior: np.ndarray, rng: np.random.Generator, alpha: float, fraction: float
) -> np.ndarray:
    """The prior mixed with Dirichlet noise over the legal actions only."""
    if len(prior) <= 1 or fraction == 0.0:
        return prior
    noise = rng.dirichlet(np.full(len(prior), alpha))
    return (1.0 - fraction) * prior + fraction * noise


# --- rules ---------------------------------------------------------------------------


@dataclass
class RootPlan:
    """What a search decides about its root before the first simulation."""

    #: The prior the root selects with (Dirichlet-noised for PUCT with noise).
    prior: np.ndarray
    #: Gumbel noise per root action (zeros without noise), and the sequential
    #: halving schedule (Gumbel only).
    gumbel: np.ndarray = field(default_factory=lambda: np.zeros(0))
    schedule: tuple[int, ...] = ()
    #: Whether the root was noised (a self-play search whose result is a target).
    noise: bool = False
    #: Root edges by decreasing ``gumbel + logits``, first index first on ties (Gumbel only).
    order: list[int] = field(default_factory=list)


class Rules:
    """Root and interior selection, the move choice and the policy target of a search."""

    #: Whether a kept subtree's root restarts its tallies (sequential halving does).
    restarts_root = False
    #: Whether :meth:`choose` samples through the root noise at a temperature
    #: (Gumbel does), so a search meant to sample a move needs noise.
    samples_with_noise = False

    def plan_root(
        self, root: Node, rng: np.random.Generator, noise: bool, simulations: int
    ) -> RootPlan:
        """Prepare the root (noise, schedules) before its search's first simulation."""
        return RootPlan(root.prior)

    def select_root(self, root: Node, plan: RootPlan, simulation: int) -> int:
        """The root edge for simulation number ``simulation`` (0-based)."""
        return self.select(root, root.total_visits)

    def select(self, node: Node, visits_here: float) -> int:
        """The edge to follow at an interior node visited ``visits_here`` times."""
        raise NotImplementedError

    def choose(
        self, root: Node, plan: RootPlan, temperature: float, rng: np.random.Generator
    ) -> int:
        """The index (into ``root.actions``) of the move to play."""
        raise NotImplementedError

    def policy_target(self, root: Node, plan: RootPlan) -> np.ndarray:
        """Probabilities over ``root.actions`` to train a policy towards: the visit shares."""
        total = root.total_visits
        return root.visits / total if total > 0 else root.prior


@dataclass(frozen=True)
class UCT(Rules):
    """UCB1 with unexplored actions first; proven wins played, proven losses avoided."""

    #: Exploration constant on [-1, 1] values: 2.0 is UCB1's c = 1 on [0, 1] rewards.
    c: float = 2.0

    def select(self, node: Node, visits_here: float) -> int:
        visits = node.visits
        if visits[-1] == 0.0:  # children are expanded in the node's (shuffled) order
            return int(visits.argmin())
        return int(uct_scores(node, self.c, visits_here).argmax())

    def choose(
        self, root: Node, plan: RootPlan, temperature: float, rng: np.random.Generator
    ) -> int:
        """A proven win, else the most visited child not proven lost (ties: best mean)."""
        me = root.player
        proofs = root.child_proven
        if proofs is not None:
            wins = np.flatnonzero(proofs == me)
            if len(wins):
                return int(wins[0])
        visits = root.visits
        candidates = [
            i
            for i in range(len(visits))
            if visits[i] > 0 and (proofs is None or proofs[i] != 1 - me)
        ] or [i for i in range(len(visits)) if visits[i] > 0]
        return max(candidates, key=lambda i: (visits[i], root.value_sum[i] / visits[i]))


def forced_visits(root: Node, prior: np.ndarray, k: float) -> np.ndarray:
    """KataGo's forced playouts per root edge: ``sqrt(k * P(a) * N)``, N the root's visits."""
    return np.sqrt(k * prior * float(root.total_visits))


def pruned_visits(root: Node, rules: PUCT, prior: np.ndarray) -> np.ndarray:
    """KataGo's policy-target pruning: the root's visits less the forced ones that were
    not needed.

    Every edge but the most visited gives back up to its forced playouts, as long
    as its PUCT score stays below the best edge's; an edge left with one visit or
    fewer drops out.  Visits the search would have spent anyway are kept, so the
    target loses the noise forcing added and keeps what the search found.
    """
    visits = root.visits.astype(np.float64)
    if root.total_visits <= 0:
        return visits
    scores = puct_scores(root, rules.c_puct, rules.fpu_reduction, prior)
    best = int(np.argmax(visits))
    forced = forced_visits(root, prior, rules.forced_playouts)
    exploration = rules.c_puct * prior * math.sqrt(float(root.total_visits))
    q = root.value_sum / np.maximum(visits, 1.0)
    gap = scores[best] - q
    # Q + exploration / (1 + n) < best score  <=>  n > exploration / gap - 1.
    needed = np.where(gap > 0, np.floor(exploration / np.maximum(gap, 1e-12)), visits)
    pruned = np.minimum(visits, np.maximum(visits - forced, needed))
    pruned = np.where(pruned <= 1.0, 0.0, pruned)
    pruned[best] = visits[best]
    return pruned


@dataclass(frozen=True)
class PUCT(Rules):
    """AlphaZero's PUCT; root noise from a Dirichlet over the legal actions.

    ``forced_playouts`` k > 0 adds KataGo's forced playouts to noised (self-play)
    searches: a root edge with fewer than ``sqrt(k * P(a) * N)`` visits is
    visited next, so noise-favoured moves get looked at, and the policy target
    prunes those visits back out (:func:`pruned_visits`).  Gumbel needs neither:
    its sequential halving already shares simulations among sampled actions, and
    its target (the improved policy from completed Q) does not count visits.
    """

    c_puct: float = 1.5
    fpu_reduction: float = 0.2
    dirichlet_alpha: float = 0.25
    dirichlet_fraction: float = 0.25
    forced_playouts: float = 0.0

    def plan_root(
        self, root: Node, rng: np.random.Generator, noise: bool, simulations: int
    ) -> RootPlan:
        if not noise:
            return RootPlan(root.prior)
        return RootPlan(
            dirichlet_prior(root.prior, rng, self.dirichlet_alpha, self.dirichlet_fraction),
            noise=True,
        )

    def _forcing(self, plan: RootPlan) -> bool:
        return self.forced_playouts > 0 and plan.noise

    def select_root(self, root: Node, plan: RootPlan, simulation: int) -> int:
        scores = puct_scores(root, self.c_puct, self.fpu_reduction, plan.prior)
        if self._forcing(plan):
            lagging = root.visits < forced_visits(root, plan.prior, self.forced_playouts)
            if lagging.any():
                scores = np.where(lagging, scores, -np.inf)
        return int(np.argmax(scores))

    def policy_target(self, root: Node, plan: RootPlan) -> np.ndarray:
        """The visit shares; with forced playouts, after pruning them (:func:`pruned_visits`)."""
        if not self._forcing(plan) or root.total_visits <= 0:
            return super().policy_target(root, plan)
        visits = pruned_visits(root, self, plan.prior)
        return visits / visits.sum()

    def select(self, node: Node, visits_here: float) -> int:
        return int(np.argmax(puct_scores(node, self.c_puct, self.fpu_reduction, node.prior)))

    def choose(
        self, root: Node, plan: RootPlan, temperature: float, rng: np.random.Generator
    ) -> int:
        """Visit counts raised to ``1 / temperature``; the most visited at temperature 0."""
        if len(root.actions) == 1:
            return 0
        visits = root.visits
        if temperature <= 0 or root.total_visits == 0:
            best = visits == visits.max()
            # Ties (e.g. no simulations) go to the higher prior.
            return int(np.argmax(np.where(best, root.prior, -1.0)))
        weights = visits ** (1.0 / temperature)
        return int(rng.choice(len(weights), p=weights / weights.sum()))


@dataclass(frozen=True)
class Gumbel(Rules):
    """Gumbel MuZero: Gumbel-top-k with sequential halving at the root."""

    #: Actions sampled at the root by Gumbel-top-k.
    considered: int = 16
    #: sigma(q) = (c_visit + max visits) * c_scale * q01.
    c_visit: float = 50.0
    c_scale: float = 1.0
    #: Map Q to [0, 1] by its min and max over the edges (mctx) instead of its
    #: fixed range [-1, 1].
    rescale_q: bool = False

    restarts_root = True
    samples_with_noise = True

    def sigma(self, node: Node, q: np.ndarray) -> np.ndarray:
        """Gumbel MuZero's monotone transform of Q: ``(c_visit + max N) * c_scale * q01``.

        ``q01`` maps Q to [0, 1]: from its fixed range [-1, 1] by default, or by
        the min and max over the edges (``rescale_q``, as in mctx), which also
        stretches the tiny differences of an untrained value head to full scale.
        """
        if self.rescale_q:
            low, high = float(q.min()), float(q.max())
            scaled = (q - low) / max(high - low, 1e-8)
        else:
            scaled = (q + 1.0) * 0.5
        return (self.c_visit + float(node.visits.max(initial=0.0))) * self.c_scale * scaled

    def improved_policy(self, node: Node) -> np.ndarray:
        """``softmax(logits + sigma(completed q))``: the Gumbel policy target."""
        return softmax(node.logits + self.sigma(node, completed_q(node)))

    def root_scores(self, root: Node, gumbel: np.ndarray, considered_visit: float) -> np.ndarray:
        """Score ``g + logits + sigma(q)`` over the actions still in the halving."""
        score = gumbel + root.logits + self.sigma(root, completed_q(root))
        return np.where(root.visits == considered_visit, score, -np.inf)

    def plan_root(
        self, root: Node, rng: np.random.Generator, noise: bool, simulations: int
    ) -> RootPlan:
        n = len(root.actions)
        gumbel = rng.gumbel(size=n) if noise else np.zeros(n)
        schedule = considered_visits(min(self.considered, n), simulations)
        order = np.argsort(-(gumbel + root.logits), kind="stable").tolist()
        return RootPlan(root.prior, gumbel, schedule, order=order)

    def select_root(self, root: Node, plan: RootPlan, simulation: int) -> int:
        """``argmax(root_scores(...))``, computed over the visited edges (:mod:`.visited`)."""
        return root_edge(root, plan.gumbel, plan.order, plan.schedule[simulation], self)

    def select(self, node: Node, visits_here: float) -> int:
        """The edge whose visit share lags furthest behind the improved policy.

        ``argmax(improved_policy(node) - visits / (1 + total visits))``, computed
        over the visited edges (:func:`.visited.interior_edge`).
        """
        return interior_edge(node, self)

    def choose(
        self, root: Node, plan: RootPlan, temperature: float, rng: np.random.Generator
    ) -> int:
        """The sequential-halving winner: with its Gumbel noise when ``temperature > 0``."""
        if len(root.actions) == 1:
            return 0
        gumbel = plan.gumbel if temperature > 0 else np.zeros(len(root.actions))
        most = float(root.visits.max())
        return int(np.argmax(self.root_scores(root, gumbel, most)))

    def policy_target(self, root: Node, plan: RootPlan) -> np.ndarray:
        return self.improved_policy(root)
