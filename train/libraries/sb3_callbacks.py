"""sb3-contrib's MaskablePPO callbacks of the example: time budgets and progress.

:mod:`train.libraries.sb3_maskable_ppo` passes them to ``learn``:

* :class:`TimeLimit` and :class:`CpuTimeLimit` stop training after
  ``--minutes`` of wall time or ``--cpu-minutes`` of this process's CPU time;
  :class:`BudgetSchedule` anneals the learning rate over that budget;
* :class:`ProgressCallback` reports through
  :class:`~train.libraries.progress.RunProgress`: episode returns, the learner's
  score against each opponent its sampler met, the curriculum's stage, and a
  check against a fixed opponent every so many steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from train.libraries.progress import RunProgress
from yinsh_env.envs.matchmaking import OpponentSampler

try:
    from stable_baselines3.common.callbacks import BaseCallback

    from train.libraries.sb3_selfplay import OpponentScores, curriculum_of
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'the MaskablePPO example needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc


class TimeLimit(BaseCallback):
    """Stops training after ``seconds`` of wall time (checked after every step)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.deadline = time.perf_counter() + seconds

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


class BudgetSchedule:
    """A learning rate annealed linearly to 0 over the run's time budget.

    SB3 calls a schedule with the share of ``total_timesteps`` still to go; a run
    stopped by ``--minutes`` or ``--cpu-minutes`` never reaches its timesteps, so
    this reads the clocks instead, as the single-file PPO does: the larger of the
    shares used of the wall budget (from construction) and of the CPU budget (the
    process's CPU time, as :class:`CpuTimeLimit` counts it).  With neither budget
    it is SB3's linear schedule.

    >>> BudgetSchedule(1e-3)(0.25)
    0.00025
    >>> 0.0 < BudgetSchedule(1e-3, minutes=60)(1.0) <= 1e-3
    True
    """

    def __init__(self, rate: float, minutes: float = 0.0, cpu_minutes: float = 0.0) -> None:
        self.rate = float(rate)
        self.wall_seconds = 60.0 * minutes
        self.cpu_seconds = 60.0 * cpu_minutes
        self.start = time.monotonic()

    def spent(self) -> float:
        """The share of the budget used (the larger of wall and CPU)."""
        shares = [0.0]
        if self.wall_seconds > 0:
            shares.append((time.monotonic() - self.start) / self.wall_seconds)
        if self.cpu_seconds > 0:
            shares.append(time.process_time() / self.cpu_seconds)
        return max(shares)

    def __call__(self, progress_remaining: float) -> float:
        if self.wall_seconds <= 0 and self.cpu_seconds <= 0:
            return self.rate * progress_remaining
        return self.rate * max(0.0, 1.0 - self.spent())


class CpuTimeLimit(BaseCallback):
    """Stops training once this process has used ``seconds`` of CPU time.

    Counted from the process's start (``time.process_time``: every thread, the
    imports and set-up included), so that runs on a shared machine get the same
    budget whatever else it runs; checked after every step.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def _on_step(self) -> bool:
        return time.process_time() < self.seconds


class ProgressCallback(BaseCallback):
    """Progress lines, TensorBoard scalars and a bar for ``learn`` (:class:`RunProgress`).

    Adds up each game's rewards into episode returns; when a line is due
    (every ``progress.every`` seconds, or every ``report_every`` steps when
    that is not 0) it gives the learner's score per opponent of ``sampler``
    since the last line and, every ``check_every`` steps (0: never), a
    ``check`` (a callable returning ``(name, score, games)``: a short match
    against a fixed opponent).
    """

    def __init__(
        self,
        progress: RunProgress,
        sampler: OpponentSampler | None = None,
        report_every: int = 0,
        check_every: int = 0,
        check: Callable[[Any], tuple[str, float, int]] | None = None,
    ) -> None:
        super().__init__()
        if report_every < 0 or check_every < 0:
            raise ValueError(
                f"report_every and check_every >= 0, not {report_every}, {check_every}"
            )
        self.progress = progress
        self.scores = OpponentScores(sampler) if sampler is not None else None
        self.report_every = report_every
        self.check_every = check_every
        self.check = check
        self._returns: Any = None
        self._last_report = self._last_check = 0

    def _on_training_start(self) -> None:
        self._last_report = self._last_check = self.num_timesteps

    def _on_step(self) -> bool:
        rewards, dones = self.locals["rewards"], self.locals["dones"]
        if self._returns is None:
            self._returns = rewards * 0.0
        self._returns += rewards
        for game in dones.nonzero()[0]:
            self.progress.episode(float(self._returns[game]))
            self._returns[game] = 0.0
        steps = self.num_timesteps
        checking = bool(
            self.check_every and self.check and steps - self._last_check >= self.check_every
        )
        reporting = bool(self.report_every and steps - self._last_report >= self.report_every)
        if self.progress.update(steps, self._extra, force=checking or reporting) is not None:
            self._last_report = steps
        return True

    def _extra(self) -> dict[str, Any]:
        parts: dict[str, Any] = {}
        steps = self.num_timesteps
        if self.scores is not None:
            scores = self.scores.since_last()
            for name, score, _ in scores:
                self.progress.scalar(f"score/{name}", score, steps)
            parts["score"] = OpponentScores.describe(scores)
            ladder = curriculum_of(self.scores.sampler)
            if ladder is not None:
                parts["stage"] = ladder.current.name
        if (
            self.check is not None
            and self.check_every
            and steps - self._last_check >= self.check_every
        ):
            self._last_check = steps
            name, score, games = self.check(self.model)
            self.progress.scalar(f"check/{name}", score, steps)
            parts[f"vs {name}"] = f"{score:.2f} ({games} games)"
        return parts

    def _on_training_end(self) -> None:
        if self.num_timesteps != self._last_report:  # the run's last figures, once
            self.progress.update(self.num_timesteps, self._extra, force=True)


__all__ = ["CpuTimeLimit", "ProgressCallback", "TimeLimit"]
