"""A search on a clock: its simulations planned from the measured rate, a deadline to stop it.

A time budget (``time=SECONDS``) must hold whatever the machine's load, and
Gumbel's sequential halving needs its number of simulations before the first
one (the schedule that halves the candidates is built from it).  So a timed
search plans ``rate x budget`` simulations, where the rate (simulations per
second of wall clock, the clock the budget is measured on) is an average
over the agent's previous timed searches, and also carries the deadline:
when the machine is slower than the plan, the search stops there and
returns the best action found so far (the root's most-visited candidates
compete, as at the end of a complete schedule); when it is faster, the
plan ends a little early and the next decision plans more.  Searches without
a schedule (UCT) just run to the deadline (:data:`UNBOUNDED` simulations).
"""

from __future__ import annotations

from typing import Final

#: Simulations of a search that only its deadline (or its proof) ends.
UNBOUNDED: Final = 1 << 40
#: The most simulations a timed search plans (a bound on the schedule's length).
MAX_PLANNED: Final = 1 << 20


class SimulationRate:
    """Simulations per second of the timed searches so far (an exponential average).

    Before any measurement the rate is ``guess``; ``weight`` is the share of
    the newest measurement, so the plan follows a change of load within a few
    decisions.
    """

    def __init__(self, guess: float = 1000.0, weight: float = 0.5) -> None:
        if guess <= 0 or not 0 < weight <= 1:
            raise ValueError(f"rate guess must be > 0 and weight in (0, 1], got {guess}, {weight}")
        self.rate = guess
        self.weight = weight
        self.measured = 0

    def plan(self, seconds: float) -> int:
        """The simulations to plan for ``seconds`` (at least one)."""
        return max(1, min(MAX_PLANNED, int(self.rate * seconds)))

    def record(self, simulations: int, seconds: float) -> None:
        """Fold one search's simulations and its duration into the rate."""
        if simulations <= 0 or seconds <= 0:
            return
        rate = simulations / seconds
        self.rate = rate if self.measured == 0 else self.rate + self.weight * (rate - self.rate)
        self.measured += 1
