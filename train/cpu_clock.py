"""CPU seconds a training run spends, so strength can be read per CPU-hour.

Wall-clock time depends on what else the machine runs; CPU time does not (much).
The trainer adds up three kinds: its own process (learning, in-process
self-play), child processes it has already reaped (the arena's evaluation
pool), and what each self-play worker or Ray actor reports for its own tasks
(:attr:`train.selfplay.SelfPlayResult.cpu_seconds`), since those live for the
whole run and are never reaped while it goes on.
"""

from __future__ import annotations

import resource
import time
from typing import Final

__all__ = ["CPU_KEY", "TRAIN_CPU_KEY", "CpuClock", "task_cpu_seconds"]

#: Run-history key: CPU seconds of self-play and learning, summed over the run.
CPU_KEY: Final = "cpu_s"
#: Slim-file metadata key: the same, for the network a slim file holds.
TRAIN_CPU_KEY: Final = "train_cpu_s"


def _own_and_reaped() -> float:
    seconds = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        seconds += usage.ru_utime + usage.ru_stime
    return seconds


class CpuClock:
    """CPU seconds of this process and its reaped children, lap by lap."""

    def __init__(self) -> None:
        self._mark = _own_and_reaped()

    def lap(self) -> float:
        """Seconds since the last lap (or since the clock was made)."""
        now = _own_and_reaped()
        seconds, self._mark = now - self._mark, now
        return max(0.0, seconds)


def task_cpu_seconds() -> float:
    """This process's CPU seconds: a worker's clock, read around each task."""
    return time.process_time()
