"""How an evaluation's games are played, and where: one object for every entry point.

:func:`~agents.evaluation.arena.run_arena` (matches, round robins, SPRT) and
:func:`~agents.evaluation.rate.rate_agent` (``--rate``) play their games the
same way: seeded openings, a variant, an optional move time limit, on this
machine or on Ray.  :class:`MatchSettings` carries those settings in one
frozen value, checked when it is made, so they travel from ``yinsh-eval`` and
the trainer's evaluation to the runners as one argument, and are recorded with
every result (:meth:`MatchSettings.to_json`).
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from typing import Any

from agents.evaluation.games import DEFAULT_OPENING_PLIES

#: Where matches are played: worker processes here, or Ray actors.
BACKENDS = ("local", "ray")


def check_backend(backend: str) -> None:
    """ValueError unless ``backend`` is known and (``ray``) installed."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (backends: {', '.join(BACKENDS)})")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ValueError('--backend ray needs Ray, an optional extra: pip install -e ".[ray]"')


@dataclass(frozen=True)
class MatchSettings:
    """The settings every game of an evaluation shares.

    ``seed`` draws the openings and seeds the agents; ``workers`` processes
    play the games (``backend="ray"``: that many Ray actors, 0 for one per
    CPU of the cluster at ``address``); ``opening_plies`` random ring
    placements start every game; ``rings_to_win`` is the variant (3 standard,
    1 Blitz); ``move_time_limit`` forfeits an agent that thinks longer than
    that many seconds on one decision.  Raises ``ValueError`` naming the bad
    field.
    """

    seed: int = 0
    workers: int = 1
    opening_plies: int = DEFAULT_OPENING_PLIES
    rings_to_win: int = 3
    move_time_limit: float | None = None
    backend: str = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        check_backend(self.backend)
        if self.workers < 0 or (self.workers == 0 and self.backend != "ray"):
            raise ValueError(
                f"workers must be >= 1 (0: one Ray actor per CPU, with backend='ray'), "
                f"got {self.workers}"
            )
        if self.move_time_limit is not None and not 0 < self.move_time_limit < math.inf:
            raise ValueError(f"move_time_limit must be positive, got {self.move_time_limit}")
        if self.address is not None and self.backend != "ray":
            raise ValueError(f"address goes with backend='ray', got backend={self.backend!r}")

    @property
    def parallel(self) -> bool:
        """Whether games leave this process (worker processes or Ray actors)."""
        return self.backend == "ray" or self.workers > 1

    def to_json(self) -> dict[str, Any]:
        """The settings as recorded with results (the cluster address left out)."""
        return {
            "workers": self.workers,
            "seed": self.seed,
            "opening_plies": self.opening_plies,
            "rings_to_win": self.rings_to_win,
            "move_time_limit": self.move_time_limit,
            "backend": self.backend,
        }


#: The settings of a call that gives none: one process, seed 0, the standard game.
DEFAULT_SETTINGS = MatchSettings()
