"""The single-file PPO's output: progress lines, TensorBoard scalars, checks, the saved policy.

:mod:`train.libraries.ppo` keeps the algorithm; its :class:`Report` keeps the
run's clock (the wall-clock and CPU budgets), the learner's recent episodes and
scores, and writes through :class:`~train.libraries.progress.RunProgress` (a
line every ``--report-every`` seconds, TensorBoard scalars, a bar on a
terminal).  Every ``--check-every`` seconds the most-likely-action policy
plays ``--check-games`` games against ``--check-against``
(:func:`~train.libraries.ppo_games.check`) and the policy is saved to
``--save``; the best check's policy is also kept as ``STEM-best.pt``.
The TorchRL recipe (:mod:`train.libraries.torchrl_ppo`) trains the same network
and reports through the same class, naming its own files (``files``).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agents.learned.ppo_policy import PPO_FILES, PolicyFiles, PPOPolicy, save_policy
from train.libraries.ppo_games import check
from train.libraries.progress import RunProgress
from yinsh_env.envs.matchmaking import OpponentPool


class Settings(Protocol):
    """What the report reads of the run's :class:`~train.libraries.ppo.Args`."""

    minutes: float
    cpu_minutes: float | None
    total_steps: int | None
    seed: int
    rings_to_win: int
    opening_plies: int
    num_envs: int
    num_steps: int
    report_every: float
    check_against: str
    check_every: float
    check_games: int
    final_check_games: int
    save: Path
    logdir: Path | None


class Report:
    """The run's output and clock: progress lines and scalars, checks, the saved policy."""

    def __init__(
        self,
        args: Settings,
        argv: Sequence[str] | None,
        policy: PPOPolicy,
        pool: OpponentPool,
        checker: Any,
        files: PolicyFiles = PPO_FILES,
    ) -> None:
        self.args, self.policy, self.checker, self.files = args, policy, checker, files
        save = args.save
        logdir = args.logdir or save.with_suffix("").with_name(save.stem + "-tb")
        self.progress = RunProgress(args.total_steps, args.report_every, logdir)
        command = [f"python -m {files.trainer}", *(argv or sys.argv[1:])]
        self.progress.writer.add_text("command", " ".join(command))
        settings = "\n".join(f"{k}: {v}" for k, v in vars(args).items())
        self.progress.writer.add_text("hyperparameters", settings)
        self.returns: deque[float] = deque(maxlen=200)
        self.lengths: deque[int] = deque(maxlen=200)
        #: The learner's last scores against each opponent ("self": the snapshots).
        self.recent: defaultdict[str, deque[float]] = defaultdict(lambda: deque(maxlen=200))
        self.best, self.best_path = -1.0, save.with_name(save.stem + "-best" + save.suffix)
        self.last_check: float | None = None
        self.progress.write(
            f"{files.agent}: {args.num_envs} games x {args.num_steps} steps per rollout, opponents "
            + ", ".join(f"{e.name} {w:.2f}" for e, w in zip(pool.entries, pool.weights()))
            + f"; {sum(p.numel() for p in policy.parameters()):,} weights; saving to {save}"
        )
        self.start = self.last_report = self.last_check_time = time.monotonic()
        self.cpu_start = time.process_time()

    def spent(self) -> float:
        """The share of the time budget used: wall clock or CPU, the larger."""
        share = (time.monotonic() - self.start) / (self.args.minutes * 60.0)
        if self.args.cpu_minutes is not None:
            cpu = time.process_time() - self.cpu_start
            share = max(share, cpu / (60.0 * self.args.cpu_minutes))
        return share

    def scored(self, opponent: str, score: float) -> None:
        """The learner scored ``score`` (1, 0.5, 0) in a game against ``opponent``."""
        self.recent["self" if opponent.startswith("self") else opponent].append(score)

    def episode(self, episode_return: float, length: int, steps: int) -> None:
        """A game ended with the learner's ``episode_return`` after ``length`` decisions."""
        self.returns.append(episode_return)
        self.lengths.append(length)
        self.progress.scalar("charts/episodic_return", episode_return, steps)

    def run_check(self, games: int, steps: int, update: int) -> float:
        """A check of ``games`` games; the policy saved, and kept apart if the best yet."""
        args = self.args
        seed = args.seed + update
        score = check(self.policy, self.checker, games, seed, args.rings_to_win, args.opening_plies)
        self.progress.scalar(f"check/{args.check_against}", score, steps)
        save_policy(args.save, self.policy, args.rings_to_win, self.files)
        if score > self.best:  # ties keep the earlier policy
            self.best = score
            save_policy(self.best_path, self.policy, args.rings_to_win, self.files)
            self.progress.scalar(f"check/best_{args.check_against}", score, steps)
        return score

    def after_update(self, steps: int, update: int, losses: dict[str, float], lr: float) -> None:
        """The update's scalars; a check and a progress line when they are due."""
        args, now = self.args, time.monotonic()
        sps = steps / max(now - self.start, 1e-9)
        figures = {**losses, "charts/learning_rate": lr, "charts/steps_per_second": sps}
        figures.update({f"train_score/{k}": float(np.mean(v)) for k, v in self.recent.items()})
        for name, value in figures.items():
            self.progress.scalar(name, value, steps)
        if args.check_games and now - self.last_check_time >= args.check_every:
            self.last_check = self.run_check(args.check_games, steps, update)
            self.last_check_time = now = time.monotonic()
        self.progress.advance(steps)
        if now - self.last_report >= args.report_every:
            self.last_report = now
            self.progress.write(self.line(steps, update, now - self.start, sps, losses))

    def line(
        self, steps: int, update: int, elapsed: float, sps: float, losses: dict[str, float]
    ) -> str:
        """The progress line: steps, speed, returns, the scores in training, the last check."""
        cpu_rate = steps / max(time.process_time() - self.cpu_start, 1e-9)
        mean_return = np.mean(self.returns) if self.returns else float("nan")
        mean_length = np.mean(self.lengths) if self.lengths else float("nan")
        checked = self.last_check is not None
        return (
            f"{elapsed:6.0f}s steps {steps:,} ({sps:,.0f}/s, {cpu_rate:,.0f}/CPU-s) "
            f"update {update} return {mean_return:+.2f} length {mean_length:.0f} "
            f"entropy {losses['losses/entropy']:.2f} | score "
            + " ".join(f"{k} {np.mean(v):.2f}" for k, v in sorted(self.recent.items()))
            + (f" | check {self.args.check_against} {self.last_check:.2f}" if checked else "")
        )

    def finish(self, steps: int, updates: int) -> None:
        """The last check, the saved policy and the closing line."""
        args, games = self.args, self.args.final_check_games
        final = self.run_check(games, steps, updates) if games else None
        save_policy(args.save, self.policy, args.rings_to_win, self.files)
        elapsed = time.monotonic() - self.start
        cpu = time.process_time() - self.cpu_start
        against = (
            f"; most-likely-action policy vs {args.check_against}: {final:.2f} over {games} games"
            if final is not None
            else ""
        )
        best = f"; best check {self.best:.2f}: {self.best_path}" if self.best >= 0 else ""
        self.progress.write(
            f"done: {steps:,} steps in {elapsed:.0f}s ({steps / elapsed:,.0f}/s; "
            f"{cpu:.0f} CPU-s, {steps / max(cpu, 1e-9):,.0f} steps per CPU-second), "
            f"{updates} updates{against}; saved {args.save} "
            f"(play it as {self.files.agent}:path={args.save})" + best
        )
        self.progress.close()


__all__ = ["Report", "Settings"]
