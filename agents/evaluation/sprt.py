"""The sequential probability ratio test on game pairs, as fishtest and fastchess run it.

A match is played in *pairs*: two games from one opening, colours swapped.
A pair scores 0, 1/2, 1, 3/2 or 2 points for agent A, so a match is five
counts (the *pentanomial* statistics ``[LL, LD, DD+WL, WD, WW]``).  Pairs
cancel most of the noise that openings and colours add, and counting them
(not games) keeps the test honest: the two games of a pair are correlated,
which a game-by-game (trinomial) test would ignore.

**The test.**  H0: A is ``elo0`` stronger than B; H1: ``elo1``.  After every
pair the log-likelihood ratio (LLR) of the pairs so far is compared with
Wald's bounds ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``:
below the lower one H0 is accepted, above the upper one H1, in between the
match goes on.  The likelihoods are fishtest's GSPRT: under each hypothesis
the pentanomial distribution is the maximum-likelihood one (given the counts)
whose mean pair score is the hypothesis's expected score, so no draw rate or
pair correlation has to be assumed.  Then the probability of accepting H1
when A is only ``elo0`` better is about ``alpha``, and of accepting H0 when A
is ``elo1`` better about ``beta`` (tests/agents/evaluation/test_sprt.py checks both on
thousands of simulated matches).

**Which Elo.**  ``elo0`` and ``elo1`` are *logistic* Elo: expected score
``1 / (1 + 10 ** (-elo / 400))``, the model of every rating this project
prints (the Bradley-Terry fits of :mod:`agents.evaluation.elo`, the fixed scale of
:mod:`agents.evaluation.scale`), so a bound reads in the unit a user sees
next to it: ``elo1=50`` is a gain of 50 on the scale.  fishtest moved to
*normalised* Elo because in chess, with balanced books and 70-90% draws, the
same logistic Elo costs very different numbers of games at different draw
rates; YINSH games are rarely drawn (a few percent against strong agents),
where the two nearly coincide, and a user comparing checkpoints wants the
scale's unit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A pair's score for agent A as a fraction of the pair's two points.
PAIR_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: What an empty pentanomial cell counts as in the likelihoods (fishtest's 1e-3):
#: it keeps every cell possible, so the first pairs move the LLR a finite step.
REGULARISE = 1e-3
DECISIONS = ("H0", "H1", "none")


def logistic_score(elo: float | np.ndarray) -> Any:
    """Expected score at ``elo`` logistic Elo: ``1 / (1 + 10 ** (-elo / 400))``."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(elo, dtype=float) / 400.0))


def _constrained_mle(freqs: np.ndarray, score: float) -> np.ndarray:
    """The distribution over :data:`PAIR_SCORES` closest (max likelihood) to ``freqs``
    with mean ``score``: ``p_i = f_i / (1 + lam (a_i - score))``, ``lam`` by bisection.

    ``freqs`` has shape (..., 5), rows summing to 1 and all positive.
    """
    shifted = PAIR_SCORES - score  # a_i - s
    low = np.full(freqs.shape[:-1], -1.0 / (1.0 - score))
    high = np.full(freqs.shape[:-1], 1.0 / score)
    # sum_i f_i (a_i - s) / (1 + lam (a_i - s)) decreases in lam; its zero is the MLE.
    for _ in range(45):  # the bracket's width, under 4, shrinks below 1e-13
        lam = 0.5 * (low + high)
        value = np.sum(freqs * shifted / (1.0 + lam[..., None] * shifted), axis=-1)
        above = value > 0
        low = np.where(above, lam, low)
        high = np.where(above, high, lam)
    lam = 0.5 * (low + high)
    probs = freqs / (1.0 + lam[..., None] * shifted)
    return probs / probs.sum(axis=-1, keepdims=True)


def llr(counts: Any, elo0: float, elo1: float) -> Any:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    ``counts``: pentanomial pair counts, shape (5,) or (..., 5) (many matches
    at once, as the simulations do).  0 before the first pair.
    """
    counts = np.asarray(counts, dtype=float)
    pairs = counts.sum(axis=-1)
    regular = np.where(counts > 0, counts, REGULARISE)
    freqs = regular / regular.sum(axis=-1, keepdims=True)
    p0 = _constrained_mle(freqs, float(logistic_score(elo0)))
    p1 = _constrained_mle(freqs, float(logistic_score(elo1)))
    value = pairs * np.sum(freqs * np.log(p1 / p0), axis=-1)
    return float(value) if np.ndim(value) == 0 else value


@dataclass(frozen=True)
class SprtSettings:
    """The hypotheses (logistic Elo of A over B) and the error rates."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for key in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"sprt {key} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"sprt {key} must be finite, got {value}")
        if not self.elo1 > self.elo0:
            raise ValueError(f"sprt needs elo1 > elo0, got elo0={self.elo0}, elo1={self.elo1}")
        if abs(self.elo0) > 2000 or abs(self.elo1) > 2000:
            raise ValueError("sprt elo0 and elo1 must be within [-2000, 2000]")
        for key in ("alpha", "beta"):
            if not 0 < getattr(self, key) < 0.5:
                raise ValueError(f"sprt {key} must be in (0, 0.5), got {getattr(self, key)}")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    @classmethod
    def parse(cls, text: str) -> SprtSettings:
        """``elo0=E0,elo1=E1[,alpha=A,beta=B]`` (the ``--sprt`` option)."""
        values: dict[str, float] = {}
        allowed = ("elo0", "elo1", "alpha", "beta")
        for item in str(text).split(","):
            key, eq, raw = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"--sprt {text!r}: expected key=value, got {item.strip()!r}")
            if key not in allowed:
                raise ValueError(
                    f"--sprt {text!r}: unknown key {key!r} (keys: {', '.join(allowed)})"
                )
            if key in values:
                raise ValueError(f"--sprt {text!r}: {key} given twice")
            try:
                values[key] = float(raw)
            except ValueError:
                raise ValueError(
                    f"--sprt {text!r}: {key}={raw.strip()!r} is not a number"
                ) from None
        missing = [k for k in ("elo0", "elo1") if k not in values]
        if missing:
            raise ValueError(f"--sprt {text!r}: {' and '.join(missing)} missing")
        return cls(**values)


@dataclass
class Sprt:
    """A running test: feed it game pairs with :meth:`add_pair`, read :attr:`decision`."""

    settings: SprtSettings
    counts: list[int] = field(default_factory=lambda: [0] * 5)
    llr: float = 0.0

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def decision(self) -> str:
        """``"H1"``, ``"H0"``, or ``"none"`` while the LLR lies between the bounds."""
        if self.llr >= self.settings.upper:
            return "H1"
        if self.llr <= self.settings.lower:
            return "H0"
        return "none"

    def add_pair(self, points: float) -> str:
        """Count a pair in which A made ``points`` (0, 0.5, ..., 2); the decision so far."""
        cell = round(2 * points)
        if not 0 <= cell <= 4 or abs(2 * points - cell) > 1e-9:
            raise ValueError(f"a game pair scores 0, 0.5, 1, 1.5 or 2 points, got {points}")
        self.counts[cell] += 1
        self.llr = llr(self.counts, self.settings.elo0, self.settings.elo1)
        return self.decision

    def status(self) -> str:
        """One line: pairs, pentanomial counts (``[LL, LD, DD+WL, WD, WW]`` for A), LLR, bounds."""
        s = self.settings
        return (
            f"SPRT elo0={s.elo0:g} elo1={s.elo1:g}: {self.pairs} pairs, pentanomial "
            f"{self.counts}, LLR {self.llr:+.2f} in [{s.lower:.2f}, {s.upper:.2f}]"
        )

    def to_json(self) -> dict[str, Any]:
        s = self.settings
        return {
            "elo0": s.elo0,
            "elo1": s.elo1,
            "alpha": s.alpha,
            "beta": s.beta,
            "llr": round(self.llr, 4),
            "lower": round(s.lower, 4),
            "upper": round(s.upper, 4),
            "decision": self.decision,
            "pairs": self.pairs,
            "pentanomial": list(self.counts),
        }


def pentanomial_probabilities(elo: float, draw: float = 0.0) -> np.ndarray:
    """Pair-score probabilities for two independent games at ``elo`` with draw rate ``draw``.

    For simulations: each game is a win, draw or loss with mean score
    :func:`logistic_score` (``elo``) and the given draw probability.
    """
    score = float(logistic_score(elo))
    win = score - draw / 2
    loss = 1.0 - win - draw
    if min(win, loss) < 0:
        raise ValueError(f"draw rate {draw} is impossible at {elo} Elo")
    game = np.array([loss, draw, win])
    pair = np.convolve(game, game)
    return pair / pair.sum()


def settings_from_mapping(data: Mapping[str, Any]) -> SprtSettings:
    """:class:`SprtSettings` from a JSON-like mapping (keys as in :meth:`Sprt.to_json`)."""
    return SprtSettings(*(float(data[k]) for k in ("elo0", "elo1", "alpha", "beta")))
