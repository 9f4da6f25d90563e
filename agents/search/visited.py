"""Gumbel's selections computed over the visited edges only: a few microseconds a call.

Gumbel MuZero's completed Q gives every unvisited edge of a node one value,
the mixed value, so the unvisited entries of the improved policy
``softmax(logits + sigma(completed q))`` are each edge's prior times one
common factor.  Among them the highest prior (first index on ties) is the
only candidate a selection can pick, and the softmax's normaliser needs only
their prior mass (one minus the visited edges' prior).  So
:func:`interior_edge` and :func:`root_edge` score the visited edges one by one
in Python floats (a handful at an interior node) and one unvisited candidate,
instead of a dozen numpy passes over every legal action per call; they choose
what :meth:`~agents.search.rules.Gumbel.improved_policy` and
:meth:`~agents.search.rules.Gumbel.root_scores` choose (the tests compare them
on random nodes), up to the rounding of a sum.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from agents.search.tree import Node


class Sigma(Protocol):
    """The settings of ``sigma(q) = (c_visit + max visits) * c_scale * q01`` (Gumbel)."""

    @property
    def c_visit(self) -> float: ...
    @property
    def c_scale(self) -> float: ...
    @property
    def rescale_q(self) -> bool: ...


class VisitedStats:
    """A node's visited edges as Python lists, with its completed-Q constants."""

    __slots__ = (
        "amplitude",
        "edges",
        "logits",
        "low",
        "mixed",
        "q",
        "spread",
        "total",
        "unvisited",
        "visits",
        "weight",
    )

    def __init__(self, node: Node, sigma: Sigma) -> None:
        visits = node.visits
        found = visits.nonzero()[0]  # flatnonzero without its wrappers (4 us less a call)
        self.edges: list[int] = found.tolist()
        self.visits: list[float] = visits[found].tolist()
        sums: list[float] = node.value_sum[found].tolist()
        self.logits: list[float] = node.logits[found].tolist()
        self.q = [w / n for w, n in zip(sums, self.visits)]
        self.total = total = sum(self.visits)
        self.unvisited = len(self.edges) < len(visits)
        prior: list[float] = node.prior[found].tolist()
        #: The visited edges' prior mass (the unvisited hold the rest).
        self.weight = weight = sum(prior)
        weighted_q = sum(p * q for p, q in zip(prior, self.q)) / max(weight, 1e-12)
        self.mixed = (node.value + total * weighted_q) / (total + 1.0)
        self.amplitude = (sigma.c_visit + max(self.visits, default=0.0)) * sigma.c_scale
        #: Rescaling: Q's minimum and spread over the completed Q (spread 0: no rescaling).
        self.low = self.spread = 0.0
        if sigma.rescale_q:
            values = [*self.q, self.mixed] if self.unvisited else self.q
            self.low = min(values)
            self.spread = max(max(values) - self.low, 1e-8)

    def sigma(self, q: float) -> float:
        """sigma(q), with the operations of :meth:`~.rules.Gumbel.sigma` in its order."""
        if self.spread:
            return self.amplitude * ((q - self.low) / self.spread)
        return self.amplitude * ((q + 1.0) * 0.5)


def first_unvisited(order: list[int], visits: np.ndarray) -> int:
    """The first edge of ``order`` not yet visited (-1 if every edge is)."""
    for i in order:
        if visits[i] == 0.0:
            return i
    return -1


def prior_order(node: Node) -> list[int]:
    """Edges by decreasing prior, first index first on ties (kept on the node)."""
    order = node.order
    if order is None:
        order = node.order = np.argsort(-node.logits, kind="stable").tolist()
    return order


def interior_edge(node: Node, sigma: Sigma) -> int:
    """``argmax(improved policy - visits / (1 + total visits))`` (Gumbel's interior rule)."""
    if not node.visits.any():  # one completed Q for all: the improved policy is the prior
        return prior_order(node)[0]
    stats = VisitedStats(node, sigma)
    exponents = [lg + stats.sigma(q) for lg, q in zip(stats.logits, stats.q)]
    candidate = first_unvisited(prior_order(node), node.visits) if stats.unvisited else -1
    mixed_sigma = stats.sigma(stats.mixed)
    top = max(exponents)
    if candidate >= 0:
        top = max(top, float(node.logits[candidate]) + mixed_sigma)
    shares = [math.exp(e - top) for e in exponents]
    normaliser = sum(shares)
    if candidate >= 0:
        normaliser += math.exp(mixed_sigma - top) * max(0.0, 1.0 - stats.weight)
    lag = 1.0 + stats.total
    best, best_score = -1, -math.inf
    for i, share, n in zip(stats.edges, shares, stats.visits):
        score = share / normaliser - n / lag
        if score > best_score or (score == best_score and i < best):
            best, best_score = i, score
    if candidate >= 0:
        score = math.exp(float(node.logits[candidate]) + mixed_sigma - top) / normaliser
        if score > best_score or (score == best_score and candidate < best):
            best = candidate
    return best


def root_edge(
    root: Node, gumbel: np.ndarray, order: list[int], considered_visit: float, sigma: Sigma
) -> int:
    """``argmax`` of ``g + logits + sigma(completed q)`` over the edges visited
    ``considered_visit`` times (Gumbel's root rule); ``order`` ranks the edges by
    ``g + logits``, the order of the unvisited ones when ``considered_visit`` is 0."""
    if considered_visit == 0.0:
        best = first_unvisited(order, root.visits)
        return max(best, 0)
    stats = VisitedStats(root, sigma)
    best, best_score = 0, -math.inf
    for i, n, q in zip(stats.edges, stats.visits, stats.q):
        if n == considered_visit:
            score = float(gumbel[i] + root.logits[i]) + stats.sigma(q)
            if score > best_score:
                best, best_score = i, score
    return best
