"""Elo ratings from match results: a Bradley-Terry maximum-likelihood fit.

The model: agent i scores against agent j with probability
``p_ij = 1 / (1 + 10 ** ((elo_j - elo_i) / 400))``.  Results enter as points
(a win 1, a draw 1/2) over games, i.e. a draw counts as half a win and half a
loss, the usual treatment (it makes the likelihood that of a binomial with
fractional counts).  One agent is anchored (its rating fixed) because only
differences are identifiable.

Confidence intervals come from the observed Fisher information: the inverse of
the negative Hessian of the log-likelihood at the optimum, with the anchor's
row and column removed, gives each rating's variance relative to the anchor.
Counting draws as half wins makes these intervals slightly conservative
(a draw carries less variance than a coin flip).

A perfect score (100-0) has no finite maximum; ``prior`` adds that many
virtual drawn games to every pairing that was played, which keeps every rating
finite at a negligible cost in bias (1 virtual draw against 100 real games).
But the interval around such a rating says little (0-0-100 against one
opponent gave "Elo 59 [-423, 542]"): an agent that made no point at all (or
every point) gets a one-sided 95% bound instead (:func:`elo_bound`), "below X"
("above X"), where X is the rating at which that result would still happen 5%
of the time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ELO_PER_NATURAL_UNIT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


@dataclass(frozen=True)
class PairResult:
    """Points ``score_i`` that agent ``i`` made against agent ``j`` in ``games`` games."""

    i: int
    j: int
    score_i: float
    games: float


@dataclass(frozen=True)
class Rating:
    """An agent's fitted Elo, its 95% interval, and the games behind it."""

    agent: str
    elo: float
    ci95: tuple[float, float]
    games: float
    #: ``("<", X)`` or ``(">", X)``: the one-sided 95% bound of an agent that
    #: made no point (every point) in its games, shown instead of ``elo``.
    bound: tuple[str, float] | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "elo": round(self.elo, 1),
            "ci95": [round(self.ci95[0], 1), round(self.ci95[1], 1)],
            "games": self.games,
            "bound": None if self.bound is None else [self.bound[0], round(self.bound[1], 1)],
        }


def _tables(n: int, results: Sequence[PairResult], prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Matrices of games ``N[i, j]`` and points ``S[i, j]`` of i against j."""
    games = np.zeros((n, n))
    points = np.zeros((n, n))
    for r in results:
        if not (0 <= r.i < n and 0 <= r.j < n) or r.i == r.j:
            raise ValueError(f"result {r} names agents outside 0..{n - 1} or an agent twice")
        if r.games < 0 or not 0 <= r.score_i <= r.games:
            raise ValueError(f"result {r}: need 0 <= score <= games")
        games[r.i, r.j] += r.games
        games[r.j, r.i] += r.games
        points[r.i, r.j] += r.score_i
        points[r.j, r.i] += r.games - r.score_i
    if prior:
        played = games > 0
        games[played] += prior
        points[played] += prior / 2
    return games, points


def _check_connected(games: np.ndarray, roots: Sequence[int] = (0,)) -> None:
    """Every agent reaches one of ``roots`` (the fixed agents) through played games."""
    n = len(games)
    seen = set(roots)
    frontier = list(roots)
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(games[i]):
            if int(j) not in seen:
                seen.add(int(j))
                frontier.append(int(j))
    if len(seen) != n:
        missing = sorted(set(range(n)) - seen)
        to = f"agent {roots[0]}" if len(roots) == 1 else f"the fixed agents {list(roots)}"
        raise ValueError(f"agents {missing} are not connected by games to {to}: no common scale")


def fit_bradley_terry(
    n_agents: int,
    results: Sequence[PairResult],
    anchor: int = 0,
    anchor_elo: float = 0.0,
    prior: float = 1.0,
    max_iter: int = 100,
    *,
    fixed: Mapping[int, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood Elo ratings and their standard errors.

    Returns ``(elo, stderr)``, arrays of length ``n_agents``.  One agent,
    ``anchor``, has rating ``anchor_elo``; or, with ``fixed`` (agent index ->
    Elo), every agent it names keeps that rating (the anchors of a fixed
    scale, :mod:`agents.evaluation.scale`) and the others are fitted around
    them.  Fixed agents have standard error 0.  Raises :class:`ValueError`
    for results that leave some agent unconnected or (with ``prior=0``) a
    rating unbounded by a perfect score.
    """
    if fixed is None:
        if n_agents < 1 or not 0 <= anchor < n_agents:
            raise ValueError(f"need at least one agent and an anchor in 0..{n_agents - 1}")
        fixed = {anchor: anchor_elo}
    if not fixed or any(not 0 <= k < n_agents for k in fixed):
        raise ValueError(f"fixed agents {sorted(fixed)} must be in 0..{n_agents - 1}")
    if prior < 0:
        raise ValueError(f"prior must be >= 0, got {prior}")
    games, points = _tables(n_agents, results, prior)
    roots = sorted(fixed)
    free = np.array([k for k in range(n_agents) if k not in fixed], dtype=int)
    # natural units: p_ij = sigmoid(theta_i - theta_j)
    theta = np.full(n_agents, np.mean(list(fixed.values())) / ELO_PER_NATURAL_UNIT)
    for k, value in fixed.items():
        theta[k] = value / ELO_PER_NATURAL_UNIT
    if len(free) == 0:
        return _with_fixed(theta * ELO_PER_NATURAL_UNIT, fixed), np.zeros(n_agents)
    _check_connected(games, roots)
    origin = theta.copy()

    def loglik(t: np.ndarray) -> float:
        diff = t[:, None] - t[None, :]
        # log sigmoid(d) = -log1p(exp(-d)), computed stably.
        log_p = -np.logaddexp(0.0, -diff)
        return float(np.sum(points * log_p))

    def gradient_hessian(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = 1.0 / (1.0 + np.exp(-(t[:, None] - t[None, :])))
        grad = np.sum(points - games * p, axis=1)
        w = games * p * (1.0 - p)
        hess = w.copy()
        np.fill_diagonal(hess, -w.sum(axis=1))
        return grad, hess

    current = loglik(theta)
    for _ in range(max_iter):
        grad, hess = gradient_hessian(theta)
        g, h = grad[free], hess[np.ix_(free, free)]
        step = np.linalg.solve(-h, g)
        scale = 1.0
        while True:  # Newton step, halved until the likelihood does not drop
            candidate = theta.copy()
            candidate[free] += scale * step
            value = loglik(candidate)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, current = candidate, value
        if np.max(np.abs(scale * step)) < 1e-10:
            break
    if np.max(np.abs(theta - origin)) > 30:
        raise ValueError(
            "a perfect score makes a rating unbounded; fit with prior > 0 (virtual draws)"
        )
    _, hess = gradient_hessian(theta)
    covariance = np.linalg.inv(-hess[np.ix_(free, free)])
    stderr = np.zeros(n_agents)
    stderr[free] = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    return _with_fixed(theta * ELO_PER_NATURAL_UNIT, fixed), stderr * ELO_PER_NATURAL_UNIT


def _with_fixed(elo: np.ndarray, fixed: Mapping[int, float]) -> np.ndarray:
    """``elo`` with the fixed ratings exactly as given (no round trip through natural units)."""
    for k, value in fixed.items():
        elo[k] = value
    return elo


def elo_ratings(
    agents: Sequence[str],
    results: Sequence[PairResult],
    anchor: int = 0,
    anchor_elo: float = 0.0,
    prior: float = 1.0,
    *,
    fixed: Mapping[int, float] | None = None,
) -> list[Rating]:
    """Fitted :class:`Rating` per agent (in ``agents`` order), with 95% intervals.

    ``anchor``/``anchor_elo`` or ``fixed`` as in :func:`fit_bradley_terry`.
    """
    elo, stderr = fit_bradley_terry(len(agents), results, anchor, anchor_elo, prior, fixed=fixed)
    games = np.zeros(len(agents))
    for r in results:
        games[r.i] += r.games
        games[r.j] += r.games
    pinned = set(fixed) if fixed is not None else {anchor}
    return [
        Rating(
            agent=name,
            elo=float(e),
            ci95=(float(e - Z95 * s), float(e + Z95 * s)),
            games=float(g),
            bound=None if k in pinned else _bound_of(k, results, elo),
        )
        for k, (name, e, s, g) in enumerate(zip(agents, elo, stderr, games))
    ]


def _bound_of(k: int, results: Sequence[PairResult], elo: np.ndarray) -> tuple[str, float] | None:
    """Agent ``k``'s :func:`elo_bound` against its opponents as fitted."""
    points, met = 0.0, []
    for r in results:
        if r.games and k in (r.i, r.j):
            points += r.score_i if r.i == k else r.games - r.score_i
            met.append((float(elo[r.j if r.i == k else r.i]), r.games))
    return elo_bound(points, met)


def elo_bound(points: float, opponents: Sequence[tuple[float, float]]) -> tuple[str, float] | None:
    """The one-sided 95% Elo bound of a side that made no point (or every point).

    ``opponents`` are (Elo, games) of what it met.  With no point in ``n``
    games, a mean score above ``1 - 0.05 ** (1 / n)`` would have given at
    least one point 95% of the time (Clopper-Pearson); the bound is the Elo
    at which the expected score against those opponents is that mean:
    ``("<", X)``.  Every point gives ``(">", X)``; any other score None.

    >>> side, elo = elo_bound(0, [(1000.0, 100)])  # 0-0-100 against an agent rated 1000
    >>> side, round(elo)
    ('<', 393)
    >>> elo_bound(1.5, [(0.0, 2), (200.0, 1)]) is None  # some points: the interval says it
    True
    """
    games = sum(n for _, n in opponents)
    if games <= 0 or 0 < points < games:
        return None
    tail = 1.0 - 0.05 ** (1.0 / games)  # the one-sided 95% limit of the mean score
    target = tail if points == 0 else 1.0 - tail
    low = min(e for e, _ in opponents) - 4000.0
    high = max(e for e, _ in opponents) + 4000.0
    for _ in range(100):  # the expected score rises with the Elo: bisect
        middle = (low + high) / 2
        expected = sum(n * expected_score(middle, e) for e, n in opponents) / games
        low, high = (middle, high) if expected < target else (low, middle)
    return ("<" if points == 0 else ">", (low + high) / 2)


def expected_score(elo_a: float, elo_b: float) -> float:
    """Expected score of a player rated ``elo_a`` against one rated ``elo_b``.

    >>> round(expected_score(200, 0), 2)
    0.76
    """
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def wilson_interval(points: float, games: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for the mean score of ``points`` won in ``games`` games.

    With draws counted as half a point a game's score has at most the variance
    of a win/loss coin with the same mean, so the binomial Wilson interval is a
    sound (slightly conservative) interval for the score; unlike the plain
    normal approximation it stays inside [0, 1] and is not empty at 100%.

    >>> [round(bound, 2) for bound in wilson_interval(20, 20)]  # 20 wins in 20
    [0.84, 1.0]
    """
    if games <= 0:
        return (0.0, 1.0)
    p = points / games
    denom = 1.0 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(kw_only=True)
class Tally:
    """One side's wins, draws and losses, counted game by game, with its score.

    The record behind every W-D-L the project prints (a pairing, a rated
    agent against an anchor, a library policy's evaluation): subclasses name
    what was tallied first, these counts follow as keywords.
    """

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, points: float) -> None:
        """Count one game in which this side made ``points``: above 1/2 a win, below a loss."""
        self.games += 1
        if points > 0.5:
            self.wins += 1
        elif points < 0.5:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """The mean score: points over games (0 before any game)."""
        return self.points / self.games if self.games else 0.0

    @property
    def score_ci95(self) -> tuple[float, float]:
        """The score's 95% Wilson interval (:func:`wilson_interval`)."""
        return wilson_interval(self.points, self.games)

    @property
    def wdl(self) -> str:
        """``wins-draws-losses``, as the tables print it."""
        return f"{self.wins}-{self.draws}-{self.losses}"
