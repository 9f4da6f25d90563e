"""Arena games on Ray actors (``yinsh-eval --backend ray``, ``--address ADDR``).

Needs the optional extra: ``pip install -e ".[ray]"``.  As the trainer's
self-play backend (:mod:`train.ray_backend`) does: each actor is one worker
(:func:`~agents.evaluation.runners.init_worker`: it builds the match's
agents from their spec strings, lazily), takes one game at a time, and gets
the next as soon as it returns one, so a slow actor or node holds up only
its own game.  Every game draws its randomness from its task's seed, so the
games (and so the results) are those that one process plays.

An actor that dies (killed, its node lost) is replaced and its game played
again by another; more than :data:`MAX_ACTOR_FAILURES` deaths in a match
stop it.  ``address`` chooses the cluster as in the trainer's ``ray.address``:
None a local Ray, even when a stale cluster file names a head that is gone
(or the one ``ray.init`` already connected to, left open;
:mod:`agents.infra.ray_address`),
``auto`` the cluster this machine joined, ``ray://head:10001`` a remote one
through Ray Client; on a cluster given by address this checkout's packages
travel with the job, in case the nodes lack them.
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agents.evaluation.games import GameResult, GameTask, WorkerDied
from agents.evaluation.match_worker import init_worker, play_task, registry_snapshot
from agents.infra.ray_address import RayClusterLost, ray_address, wait_first
from agents.params import clip

try:
    import ray
    from ray.exceptions import RayActorError
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ValueError('--backend ray needs Ray, an optional extra: pip install -e ".[ray]"') from exc

log = logging.getLogger(__name__)

#: Actor deaths tolerated in one match (each dead actor is replaced).
MAX_ACTOR_FAILURES = 8


class RayRunnerError(WorkerDied):
    """Too many actors died in one match."""


class EvalWorker:
    """The body of one arena actor: a worker process's state, kept between games."""

    def __init__(
        self, specs: list[Any], registry: dict[str, Any], rings_to_win: int, limit: float | None
    ) -> None:
        init_worker(specs, registry, rings_to_win, limit)

    def play(self, task: GameTask) -> GameResult:
        return play_task(task)


def connect(address: str | None) -> bool:
    """Connect the driver to Ray at ``address``; True if this call started the connection."""
    if ray.is_initialized():
        return False
    address = ray_address(address)  # ValueError, in one line, for an address that is dead
    runtime_env: dict[str, Any] | None = None
    if address != "local":
        root = Path(__file__).resolve().parents[2]  # this checkout: its three packages
        runtime_env = {"py_modules": [str(root / p) for p in ("yinsh_env", "agents", "train")]}
    try:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    except Exception as exc:  # Ray raises RuntimeError, ConnectionError, ValueError...
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(
            f"--address {clip(repr(address))}: cannot connect to Ray: {clip(reason, 200)}"
        ) from None
    return True


class RayRunner:
    """Plays game tasks on ``actors`` Ray actors (0: one per CPU of the cluster)."""

    def __init__(
        self,
        specs: Sequence[Any],
        actors: int,
        rings_to_win: int = 3,
        limit: float | None = None,
        address: str | None = None,
    ) -> None:
        self.owns_ray = connect(address)
        self._actor_class = ray.remote(num_cpus=1)(EvalWorker)
        self._args = (list(specs), registry_snapshot(specs), rings_to_win, limit)
        if actors <= 0:
            actors = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.actor_failures = 0
        self.actors: list[Any] = []
        try:
            self.actors = [self._actor_class.remote(*self._args) for _ in range(actors)]
        except BaseException:
            self.close()
            raise

    def play(self, tasks: Sequence[GameTask]) -> Iterator[GameResult]:
        pending = deque(tasks)
        running: dict[Any, tuple[GameTask, int]] = {}

        def fill() -> None:
            busy = {slot for _, slot in running.values()}
            for slot, actor in enumerate(self.actors):
                if pending and slot not in busy:
                    task = pending.popleft()
                    running[actor.play.remote(task)] = (task, slot)

        fill()
        try:
            while running:
                try:
                    ref = wait_first(list(running))
                except RayClusterLost as exc:
                    raise RayRunnerError(str(exc)) from None
                task, slot = running.pop(ref)
                try:
                    result = ray.get(ref)
                except RayActorError as exc:
                    self.actor_failures += 1
                    if self.actor_failures > MAX_ACTOR_FAILURES:
                        raise RayRunnerError(
                            f"{self.actor_failures} arena actors died in one match; last: {exc}"
                        ) from exc
                    log.warning("arena actor %d died; replacing it: %s", slot, exc)
                    kill_actor(self.actors[slot])
                    self.actors[slot] = self._actor_class.remote(*self._args)
                    pending.appendleft(task)
                else:
                    yield result
                fill()
        except BaseException:
            if running:  # stopped early: the games still running are abandoned
                for ref in running:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
            raise

    def close(self) -> None:
        release_actors(self.actors, owns_ray=self.owns_ray)
        self.actors = []
        self.owns_ray = False


def kill_actor(actor: Any) -> None:
    """Stop an actor for good; one already dead is fine."""
    with contextlib.suppress(Exception):
        ray.kill(actor, no_restart=True)


def release_actors(actors: Sequence[Any], *, owns_ray: bool) -> None:
    """Kill a pool's actors, and shut Ray down when the pool started it."""
    for actor in actors:
        kill_actor(actor)
    if owns_ray and ray.is_initialized():
        ray.shutdown()
