"""Where self-play runs: in the trainer's process, or in a pool of worker processes.

An executor takes the iteration's network weights and the games' seeds and
returns their :class:`~train.selfplay.SelfPlayResult`.  The weights are fixed
for the whole iteration; each worker builds its own network once and loads
the new weights at every call.  Games are split into contiguous chunks, one
per worker, and every game draws its randomness from its own seed, so the
games played do not depend on the backend.

Backends register in :data:`EXECUTORS`; the distributed one, Ray actors, is
:class:`train.ray_backend.RayExecutor` (same interface,
:class:`train.executor.SelfPlayExecutor`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import torch

from agents.infra.worker_pool import guarded_pool, kill_workers, results_as_finished
from agents.network.inference import resolve_device
from agents.network.network import PolicyValueNet
from train.config import Config, config_from_dict
from train.cpu_clock import task_cpu_seconds
from train.executor import SelfPlayExecutor, Weights, play_with_weights
from train.selfplay import SelfPlayResult


class InProcessExecutor:
    """Self-play in the trainer's own process (the simplest; one core or one GPU)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.device = resolve_device(config.device)
        self.model = PolicyValueNet(config.network)

    def play(self, weights: Weights, seeds: list[int], first_index: int) -> SelfPlayResult:
        return play_with_weights(self.model, self.config, self.device, weights, seeds, first_index)

    def close(self) -> None:
        pass


# --- a pool of worker processes ------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(config_dict: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    config = config_from_dict(config_dict)
    _WORKER["config"] = config
    _WORKER["device"] = resolve_device(config.device)
    _WORKER["model"] = PolicyValueNet(config.network)


def _worker_play(weights_bytes: bytes, seeds: list[int], first_index: int) -> SelfPlayResult:
    start = task_cpu_seconds()
    weights = torch.load(io.BytesIO(weights_bytes), map_location="cpu", weights_only=True)
    result = play_with_weights(
        _WORKER["model"], _WORKER["config"], _WORKER["device"], weights, seeds, first_index
    )
    result.cpu_seconds = task_cpu_seconds() - start
    return result


def split(seeds: list[int], parts: int) -> list[tuple[int, list[int]]]:
    """Contiguous chunks ``(offset, seeds)``, as even as possible, none empty."""
    parts = max(1, min(parts, len(seeds)))
    size, extra = divmod(len(seeds), parts)
    chunks = []
    start = 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        chunks.append((start, seeds[start:end]))
        start = end
    return chunks


class ProcessExecutor:
    """Self-play in ``config.workers`` processes, each batching its own games."""

    def __init__(self, config: Config) -> None:
        self.config = config
        # Workers die with the trainer, whatever stops it (agents.infra.worker_pool).
        self.pool = guarded_pool(config.workers, _init_worker, (config.to_dict(),))
        self._playing = False

    def play(self, weights: Weights, seeds: list[int], first_index: int) -> SelfPlayResult:
        buffer = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in weights.items()}, buffer)
        payload = buffer.getvalue()
        calls = [
            (payload, chunk, first_index + offset)
            for offset, chunk in split(seeds, self.config.workers)
        ]
        self._playing = True  # until every chunk is back: close() then kills the workers
        parts = dict(results_as_finished(self.pool, _worker_play, calls))
        self._playing = False
        result = SelfPlayResult(games=[], stats=[])
        for i in range(len(calls)):  # in seed order, whichever worker finished first
            result.merge(parts[i])
        return result

    def close(self) -> None:
        if self._playing:  # interrupted mid-iteration
            kill_workers(self.pool)
        self.pool.shutdown(cancel_futures=True)


def _ray_executor(config: Config) -> SelfPlayExecutor:
    """Ray actors (:mod:`train.ray_backend`).

    Imported here, in the function, only because Ray is an optional extra that
    is slow to import (``ray_backend`` imports nothing from this module).
    """
    from train.ray_backend import RayExecutor

    return RayExecutor(config)


#: Backend name (``config.backend``) -> executor factory.
EXECUTORS: dict[str, Callable[[Config], SelfPlayExecutor]] = {
    "inprocess": InProcessExecutor,
    "process": ProcessExecutor,
    "ray": _ray_executor,
}


def make_executor(config: Config) -> SelfPlayExecutor:
    """The executor for ``config.backend``."""
    factory = EXECUTORS.get(config.backend)
    if factory is None:
        raise ValueError(
            f"unknown self-play backend {config.backend!r}; known: {', '.join(EXECUTORS)}"
        )
    return factory(config)
