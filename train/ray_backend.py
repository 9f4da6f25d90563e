"""Self-play on Ray (``backend: ray``): workers are Ray actors, the learner stays in the driver.

Needs the optional extra: ``pip install -e ".[ray]"``.  Per iteration:

1. the driver puts the network weights in Ray's object store once
   (``ray.put``); every actor fetches them once, at its first task of the
   iteration, and keeps its own network between iterations;
2. the iteration's seeds are split into tasks (``ray.games_per_task`` games
   each, by default ``selfplay.games_in_flight``), one per actor at a time;
3. results are collected with ``ray.wait`` as they finish, and the actor that
   finished gets the next task, so a slow actor (or node) holds up only the
   task it is playing, never a queue of others or a fixed share of the
   iteration;
4. the results are merged in seed order: every game draws its randomness from
   its own seed, so the games played are the same as with the ``inprocess``
   and ``process`` backends (a position's network output may differ in the
   last float bit with the other positions of its batch, so the recorded
   targets are bit-identical only where the batches are the same).

An actor that dies (killed, its node lost, out of memory) is replaced by a new
one and its unfinished tasks are resubmitted; the learner, the replay window
and the run's state live in the driver and are untouched.  More than
``ray.max_actor_failures`` deaths in one iteration stop the run with
:class:`RayBackendError` (something is wrong beyond bad luck).

``ray.address`` chooses the cluster: ``null`` a local Ray (the same config
runs on a laptop), ``auto`` the cluster this machine was joined to with
``ray start``, ``ray://head:10001`` a remote one through Ray Client.  When
the driver is already connected (``ray.init`` called before the run, as the
tests do), that connection is used and left open.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import torch

from agents.infra.ray_address import RayClusterLost, ray_address, wait_first
from agents.network.network import PolicyValueNet
from train.config import Config, ConfigError, RayConfig, config_from_dict
from train.cpu_clock import task_cpu_seconds
from train.executor import Weights, play_with_weights
from train.selfplay import SelfPlayResult

try:
    import ray
    from ray.exceptions import RayActorError
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigError('backend: ray needs Ray, an optional extra: pip install -e ".[ray]"') from exc

from agents.evaluation.ray_runner import kill_actor, release_actors  # after the check: it needs Ray

log = logging.getLogger(__name__)


class RayBackendError(RuntimeError):
    """Self-play on Ray cannot go on (too many actor deaths in one iteration)."""


def connect(settings: RayConfig) -> bool:
    """Connect the driver to Ray as ``settings.address`` says; True if this started it.

    An existing connection (``ray.init`` called before) is kept as it is.
    """
    if ray.is_initialized():
        return False
    try:  # no address: a local Ray, even past a stale cluster file; a dead one: refused now
        address = ray_address(settings.address, "ray.address")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    runtime_env: dict[str, Any] = {}
    if settings.ship_code:
        import agents
        import train
        import yinsh_env

        runtime_env["py_modules"] = [yinsh_env, agents, train]
    ray.init(address=address, runtime_env=runtime_env or None)
    return True


def actor_count(settings: RayConfig) -> int:
    """``settings.actors``, or (0) as many actors as the cluster's CPUs hold."""
    if settings.actors:
        return settings.actors
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    return max(1, int(cpus // settings.cpus_per_actor) if settings.cpus_per_actor else int(cpus))


def split_tasks(seeds: list[int], size: int) -> list[tuple[int, list[int]]]:
    """Contiguous tasks ``(offset, seeds)`` of at most ``size`` games, in seed order."""
    return [(start, seeds[start : start + size]) for start in range(0, len(seeds), size)]


class SelfPlayWorker:
    """The body of one self-play actor: its network is built once and kept.

    The weights arrive as an object reference wrapped in a list, so that Ray
    does not fetch them for every task: the actor fetches them once per
    ``version`` (iteration) and reuses them for the iteration's other tasks.
    """

    def __init__(self, config: dict[str, Any], threads: int, use_gpu: bool) -> None:
        torch.set_num_threads(threads)
        self.config = config_from_dict(config)
        cuda = use_gpu and torch.cuda.is_available()
        self.device = torch.device("cuda" if cuda else "cpu")
        self.model = PolicyValueNet(self.config.network)
        self.version = -1
        self.weights: Weights = {}

    def play(
        self, weights: list[Any], version: int, seeds: list[int], first_index: int
    ) -> SelfPlayResult:
        start = task_cpu_seconds()
        if version != self.version:
            self.weights = ray.get(weights[0])
            self.version = version
        result = play_with_weights(
            self.model, self.config, self.device, self.weights, seeds, first_index
        )
        result.cpu_seconds = task_cpu_seconds() - start
        return result


TaskCallback = Callable[["RayExecutor", int], None]


class RayExecutor:
    """Self-play in Ray actors; implements :class:`train.executor.SelfPlayExecutor`.

    ``on_task_done(executor, task)`` is called in the driver after each task's
    result arrives (progress reports; the tests use it to kill an actor while
    others are busy).
    """

    def __init__(self, config: Config, on_task_done: TaskCallback | None = None) -> None:
        self.config = config
        self.settings = config.ray
        self.on_task_done = on_task_done
        self.owns_ray = connect(self.settings)
        self._actor_class = ray.remote(
            num_cpus=self.settings.cpus_per_actor, num_gpus=self.settings.gpus_per_actor
        )(SelfPlayWorker)
        self._config_dict = config.to_dict()
        #: Actors that died and were replaced, over the whole run.
        self.actor_failures = 0
        self._version = 0
        #: Tasks in flight: result reference -> (task, actor slot, actor handle).
        self._running: dict[Any, tuple[int, int, Any]] = {}
        self.actors: list[Any] = []
        try:
            self.actors = [self._new_actor() for _ in range(actor_count(self.settings))]
        except BaseException:
            self.close()
            raise

    def _new_actor(self) -> Any:
        threads = max(1, int(self.settings.cpus_per_actor))
        use_gpu = self.settings.gpus_per_actor > 0
        return self._actor_class.remote(self._config_dict, threads, use_gpu)

    def busy_actors(self) -> list[Any]:
        """Handles of the actors with a task in flight now."""
        return list({id(actor): actor for _, _, actor in self._running.values()}.values())

    def task_size(self, games: int) -> int:
        """Games per task for an iteration of ``games`` games.

        By default (``games_per_task: 0``) a task holds ``games_in_flight``
        games, so that its network batches start full (small tasks mean small
        batches: on a CPU, two-game tasks ran at a third of the speed of
        eight-game ones), and fewer where that would leave an actor idle.
        """
        if self.settings.games_per_task:
            return self.settings.games_per_task
        even_share = math.ceil(games / len(self.actors))
        return max(1, min(self.config.selfplay.games_in_flight, even_share))

    def play(self, weights: Weights, seeds: list[int], first_index: int) -> SelfPlayResult:
        start = time.perf_counter()
        self._version += 1
        weights_ref = ray.put({k: v.detach().cpu() for k, v in weights.items()})
        tasks = split_tasks(seeds, self.task_size(len(seeds)))
        pending = deque(range(len(tasks)))
        results: dict[int, SelfPlayResult] = {}
        deaths = 0

        def fill() -> None:
            """Give a pending task to every idle actor.

            One task per actor at a time: a task queued behind a slow actor
            would wait for it while others idle at the end of the iteration,
            and the round trip between two tasks is small next to their play.
            """
            busy = {slot for _, slot, _ in self._running.values()}
            for slot, actor in enumerate(self.actors):
                if pending and slot not in busy:
                    task = pending.popleft()
                    offset, chunk = tasks[task]
                    ref = actor.play.remote(
                        [weights_ref], self._version, chunk, first_index + offset
                    )
                    self._running[ref] = (task, slot, actor)

        fill()
        try:
            while self._running:
                try:
                    ref = wait_first(list(self._running))
                except RayClusterLost as exc:
                    raise RayBackendError(str(exc)) from None
                task, slot, actor = self._running.pop(ref)
                try:
                    # A copy: arrays read straight from the object store are
                    # read-only views that would pin it for as long as the
                    # replay window keeps the games.
                    results[task] = copy.deepcopy(ray.get(ref))
                except RayActorError as exc:
                    pending.appendleft(task)
                    if self.actors[slot] is actor:  # the first news of this death
                        deaths += 1
                        self.actor_failures += 1
                        if deaths > self.settings.max_actor_failures:
                            raise RayBackendError(
                                f"{deaths} self-play actors died in one iteration "
                                f"(ray.max_actor_failures = {self.settings.max_actor_failures}); "
                                f"last: {exc}"
                            ) from exc
                        log.warning("self-play actor %d died; replacing it: %s", slot, exc)
                        self._replace(slot)
                else:
                    if self.on_task_done is not None:
                        self.on_task_done(self, task)
                fill()
        finally:
            # Whatever is still running on an error is abandoned (close() kills it).
            self._running.clear()
        merged = SelfPlayResult(games=[], stats=[])
        for task in range(len(tasks)):
            merged.merge(results[task])
        merged.seconds = time.perf_counter() - start  # the driver's wall time
        return merged

    def _replace(self, slot: int) -> None:
        kill_actor(self.actors[slot])
        self.actors[slot] = self._new_actor()

    def close(self) -> None:
        release_actors(self.actors, owns_ray=self.owns_ray)
        self.actors = []
        self.owns_ray = False
