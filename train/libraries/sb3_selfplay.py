"""Self-play for sb3-contrib's MaskablePPO: frozen snapshots, the opponent sampler, a profile.

:mod:`train.libraries.sb3_maskable_ppo` ``--self-play`` uses these; they work with any
MaskablePPO model on the vector environment (:mod:`yinsh_env.vector.sb3`) or on
:class:`~yinsh_env.envs.gym_env.YinshGymEnv`:

* :class:`PolicySnapshot`: a deep copy of the learner's policy, in eval
  mode with gradients off, that plays as an opponent (an
  :class:`~agents.base.Agent`); training the learner never changes it.
* :class:`SelfPlayCallback`: adds a snapshot to an
  :class:`~yinsh_env.envs.matchmaking.OpponentPool` when training starts and every
  ``every`` learner steps, and prints a progress line every ``report_every``
  steps: the learner's score against each opponent met since the last line
  (the training curve, :class:`OpponentScores`), the curriculum's stage, steps per second.
* :func:`build_sampler`: the pool, curriculum or league the command line asks for
  (its ``greedy`` members batched: :func:`batch_greedy`).
* :class:`TimedVecEnv` and :class:`Profile`: where the time goes, the
  environments (with the opponents' moves) against the policy's forward
  passes while collecting and PPO's updates.

The environments must stay in this process (the vector environment,
:class:`yinsh_env.vector.sb3.YinshSB3VecEnv`, or SB3's ``DummyVecEnv``) so that
they share one sampler and see the snapshots the callback adds; on 2 cores,
processes would only add copying.  On the vector environment a snapshot
decides for all the games where it is to act in one forward pass
(:meth:`PolicySnapshot.act_batch`); where the learner runs in bf16, all the
snapshots with games to play decide together in one grouped pass
(:class:`~train.libraries.snapshot_batch.SnapshotBatch`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch

from agents.league import curriculum_from_specs, pool_from_specs
from agents.learned.library_agent import LegalSlots, LibraryPolicyAgent
from agents.learned.sb3_agent import (
    batch_policy_probabilities,
    packed_policy_probabilities,
    policy_probabilities,
)
from agents.learned.sb3_masking import use_fast_masking
from train.libraries.snapshot_batch import SnapshotBatch
from yinsh_env.engine.state import State
from yinsh_env.envs.matchmaking import Curriculum, League, OpponentPool, OpponentSampler

T = TypeVar("T")

try:
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'self-play with MaskablePPO needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc


class PolicySnapshot(LibraryPolicyAgent):
    """A frozen copy of a MaskablePPO policy as an opponent (samples by default).

    The copy is made on the CPU; it shares nothing with the learner, and runs
    its network in float32 whatever the learner's precision when asked on its
    own.  A bf16 learner's snapshots share a :class:`SnapshotBatch` as their
    ``joint``: the vector environment asks it once a round for all of them (one
    grouped bf16 pass, as the learner's own rollouts run in bf16).

    ``seconds`` adds up the time its forward passes take (the profile's share
    of the network inside the environments).
    """

    def __init__(self, policy: Any, seed: int | None = None, greedy: bool = False) -> None:
        super().__init__(seed, greedy, torch.get_num_threads())
        # A new policy from the learner's constructor arguments and weights (a deep
        # copy would also copy the last action distribution, which torch refuses).
        self.policy = type(policy)(**policy._get_constructor_parameters())
        self.policy.load_state_dict(policy.state_dict())
        self.policy.optimizer = None  # the copy never trains: no Adam state to keep
        self.policy.set_training_mode(False)
        use_fast_masking(self.policy)
        if getattr(self.policy, "bf16", False):
            # An opponent's batches are a few games: bf16's casts cost more than they save.
            self.policy.bf16 = False
        for parameter in self.policy.parameters():
            parameter.requires_grad_(False)
        self.seconds = 0.0
        #: Where set, the vector environment asks it for this snapshot's moves together
        #: with the other snapshots sharing it (:class:`SnapshotBatch`).
        self.joint: SnapshotBatch | None = None

    def legal_probabilities(self, state: State) -> np.ndarray:
        start = time.perf_counter()
        probs = policy_probabilities(self.policy, state)
        self.seconds += time.perf_counter() - start
        return probs

    def batch_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One forward pass for n games (the vector environment asks once a step)."""
        start = time.perf_counter()
        probs = batch_policy_probabilities(self.policy, observations, masks)
        self.seconds += time.perf_counter() - start
        return probs

    def packed_probabilities(
        self, observations: np.ndarray, masks: np.ndarray, slots: LegalSlots
    ) -> np.ndarray:
        """The legal actions' probabilities only (what ``act_batch`` samples from)."""
        start = time.perf_counter()
        probs = packed_policy_probabilities(self.policy, observations, masks, slots)
        self.seconds += time.perf_counter() - start
        return probs


def build_sampler(
    opponents: Sequence[str],
    self_play: bool = False,
    curriculum: Sequence[str] = (),
    strategy: str = "pfsp",
    max_snapshots: int = 10,
    threshold: float = 0.7,
    window: int = 100,
    curriculum_share: float = 0.5,
    seed: int = 0,
    weights: Sequence[float] | None = None,
) -> OpponentSampler:
    """The learner's opponents on the vector environment: a pool (``opponents`` plus
    snapshots when ``self_play``), a curriculum, or a league of both (``curriculum_share``
    of the episodes to the latter).  ``weights``: the opponents' shares in a fixed mix
    (``strategy="weighted"``)."""
    if not (opponents or self_play or curriculum):
        raise ValueError("no opponents: name some, a curriculum, or self-play")
    ladder = (
        curriculum_from_specs(curriculum, threshold, window, seed=seed + 1000)
        if curriculum
        else None
    )
    pool = None
    if opponents or self_play:
        pool = pool_from_specs(opponents, strategy, max_snapshots, seed=seed, weights=weights)
    for member in (ladder, pool):
        if member is not None:
            batch_greedy(member)
    if ladder is None:
        assert pool is not None
        return pool
    if pool is None:
        return ladder
    return League([(curriculum_share, ladder), (1.0 - curriculum_share, pool)])


def batch_greedy(sampler: OpponentSampler) -> OpponentSampler:
    """The sampler with its ``greedy`` members (any noise) as
    :class:`~agents.baselines.greedy_batch.GreedyOpponent`: the vector environment then
    scores all their games' moves at once instead of asking them game by game.

    Those members then play on the vector environment only (they have no ``act``).
    """
    from agents.baselines.greedy import GreedyAgent
    from agents.baselines.greedy_batch import GreedyOpponent

    for entry in sampler.entries:
        if type(entry.opponent) is GreedyAgent:
            entry.opponent = GreedyOpponent(entry.opponent.noise)
    return sampler


def _member(sampler: OpponentSampler, kind: type[T]) -> T | None:
    """The sampler if it is a ``kind``, else its league's first member that is one."""
    if isinstance(sampler, kind):
        return sampler
    if isinstance(sampler, League):
        return next((m for _, m in sampler.members if isinstance(m, kind)), None)
    return None


def snapshot_pool(sampler: OpponentSampler) -> OpponentPool | None:
    """The pool that takes the learner's snapshots: the sampler or its league's pool."""
    return _member(sampler, OpponentPool)


def curriculum_of(sampler: OpponentSampler) -> Curriculum | None:
    """The curriculum: the sampler or its league's."""
    return _member(sampler, Curriculum)


@dataclass
class _Seen:
    games: int = 0
    score: float = 0.0


class OpponentScores:
    """The learner's score against each of a sampler's opponents, since the last call."""

    def __init__(self, sampler: OpponentSampler) -> None:
        self.sampler = sampler
        self._seen: dict[int, _Seen] = {}

    def since_last(self) -> list[tuple[str, float, int]]:
        """``(opponent, mean score, games)`` for each opponent met since the last call."""
        scores = []
        for entry in getattr(self.sampler, "entries", []):
            seen = self._seen.setdefault(id(entry), _Seen())
            games, score = entry.games - seen.games, entry.score - seen.score
            seen.games, seen.score = entry.games, entry.score
            if games:
                scores.append((entry.name, score / games, games))
        return scores

    @staticmethod
    def describe(scores: Sequence[tuple[str, float, int]]) -> str:
        """``name 0.50 (12), ...``: each opponent's score and games."""
        return ", ".join(f"{n} {s:.2f} ({g})" for n, s, g in scores) or "no games ended"

    def text(self) -> str:
        """``score`` and :meth:`since_last` described, the curriculum's stage after it."""
        line = "score " + self.describe(self.since_last())
        ladder = curriculum_of(self.sampler)
        if ladder is not None:
            line += f" | stage {ladder.current.name}"
        return line


class SelfPlayCallback(BaseCallback):
    """Snapshots into ``pool`` every ``every`` steps (none without a pool); progress lines.

    Args:
        sampler: the environments' sampler (its members' records make the lines).
        pool: where snapshots go; ``None`` takes none.
        every: learner steps between snapshots (one more when training starts,
            unless :meth:`snapshot` took one before).
        report_every: learner steps between progress lines (0: none).
        write: where the lines go.
        snapshot_weight: each snapshot's weight in a fixed mix (the pool's
            ``weighted`` strategy: ``--self-share`` over the pool's size).
    """

    def __init__(
        self,
        sampler: OpponentSampler,
        pool: OpponentPool | None,
        every: int = 20_000,
        report_every: int = 10_000,
        write: Callable[[str], Any] = print,
        snapshot_weight: float = 1.0,
    ) -> None:
        super().__init__()
        if every < 1 or report_every < 0:
            raise ValueError(f"every >= 1 and report_every >= 0, not {every}, {report_every}")
        self.snapshot_weight = snapshot_weight
        self.sampler = sampler
        self.pool = pool
        self.every = every
        self.report_every = report_every
        self.write = write
        self.snapshots: list[PolicySnapshot] = []
        #: The snapshots' joint: all of a round's snapshots in one bf16 pass.
        self.joint = SnapshotBatch(torch.bfloat16)
        self._last_snapshot = 0
        self._last_report = 0
        self._scores = OpponentScores(sampler)
        self._start = time.perf_counter()

    def snapshot(self, policy: Any, step: int) -> PolicySnapshot:
        """Freeze ``policy`` into the pool as ``snapshot@STEP``.

        Call it once before ``learn`` when the pool starts empty: the
        environments choose their first opponents before any callback runs.
        """
        if self.pool is None:
            raise ValueError("this callback has no pool to take snapshots")
        snapshot = PolicySnapshot(policy, seed=len(self.snapshots))
        if getattr(policy, "bf16", False):  # a grouped pass pays in bf16 only
            snapshot.joint = self.joint
        self.pool.add_snapshot(snapshot, step, self.snapshot_weight)
        self.snapshots.append(snapshot)
        self._last_snapshot = step
        return snapshot

    def _on_training_start(self) -> None:
        self._start = time.perf_counter()
        self._last_report = self.num_timesteps
        if self.pool is not None and not self.snapshots:
            self.snapshot(self.model.policy, self.num_timesteps)

    def _on_step(self) -> bool:
        if self.pool is not None and self.num_timesteps - self._last_snapshot >= self.every:
            self.snapshot(self.model.policy, self.num_timesteps)
        if self.report_every and self.num_timesteps - self._last_report >= self.report_every:
            self.write(self.progress_line())
            self._last_report = self.num_timesteps
        return True

    def progress_line(self) -> str:
        """Steps, time, and the learner's score per opponent met since the last line."""
        elapsed = time.perf_counter() - self._start
        return (
            f"step {self.num_timesteps} {elapsed:.0f}s "
            f"{self.num_timesteps / max(elapsed, 1e-9):.0f}/s | {self._scores.text()}"
        )


class TimedVecEnv(VecEnvWrapper):
    """Adds up the seconds spent stepping and resetting the wrapped environments."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.seconds = 0.0

    def reset(self) -> Any:
        return self._timed(self.venv.reset)

    def step_wait(self) -> Any:
        return self._timed(self.venv.step_wait)

    def _timed(self, call: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return call()
        finally:
            self.seconds += time.perf_counter() - start


class Profile(BaseCallback):
    """Collecting against updating: add it to ``learn``'s callbacks, read :meth:`summary`.

    The environments' time (``env``) includes the opponents' moves; the
    snapshots' own forward passes are counted apart (``snapshots``).
    """

    def __init__(self, env: TimedVecEnv, snapshots: Sequence[PolicySnapshot] = ()) -> None:
        super().__init__()
        self.env = env
        self.snapshots = snapshots
        self.collecting = 0.0
        self.total = 0.0
        self._mark = self._began = time.perf_counter()

    def _on_training_start(self) -> None:
        self._began = time.perf_counter()

    def _on_rollout_start(self) -> None:
        self._mark = time.perf_counter()

    def _on_rollout_end(self) -> None:
        self.collecting += time.perf_counter() - self._mark

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self.total = time.perf_counter() - self._began

    def summary(self, steps: int) -> str:
        """One line: steps per second and the shares of the time."""
        env = self.env.seconds
        opponents = sum(s.seconds for s in self.snapshots)
        policy = max(self.collecting - env, 0.0)
        updates = max(self.total - self.collecting, 0.0)
        share = 100.0 / max(self.total, 1e-9)
        return (
            f"profile: {steps} steps in {self.total:.1f}s ({steps / max(self.total, 1e-9):.0f}/s); "
            f"environments {env:.1f}s ({env * share:.0f}%; snapshot opponents' network "
            f"{opponents:.1f}s of it), learner's forward passes while collecting "
            f"{policy:.1f}s ({policy * share:.0f}%), PPO updates {updates:.1f}s "
            f"({updates * share:.0f}%)"
        )
