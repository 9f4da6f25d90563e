"""What every self-play backend shares: the executor interface and one call of play.

An executor takes the iteration's network weights and the games' seeds and
returns their :class:`~train.selfplay.SelfPlayResult`.  The backends:
:mod:`train.selfplay_workers` (in the trainer's process, or a pool of processes) and
:mod:`train.ray_backend` (Ray actors); :func:`train.selfplay_workers.make_executor`
picks one by ``config.backend``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import torch

from agents.network.inference import amp_enabled
from agents.network.network import PolicyValueNet
from agents.network.onnx_inference import make_evaluator
from train.config import Config
from train.selfplay import SelfPlayResult, play_games

__all__ = ["SelfPlayExecutor", "Weights", "play_with_weights"]

Weights = Mapping[str, torch.Tensor]


class SelfPlayExecutor(Protocol):
    """Plays an iteration's self-play games with given weights."""

    def play(self, weights: Weights, seeds: list[int], first_index: int) -> SelfPlayResult: ...

    def close(self) -> None: ...


def play_with_weights(
    model: PolicyValueNet,
    config: Config,
    device: torch.device,
    weights: Weights,
    seeds: list[int],
    first_index: int,
) -> SelfPlayResult:
    """Load ``weights`` into ``model`` and play one game per seed, leaves batched."""
    model.load_state_dict(weights)
    evaluator = make_evaluator(
        model,
        device,
        config.inference,
        amp=amp_enabled(config.amp, device),
        precision=config.inference_precision,
    )
    result = play_games(evaluator, seeds, config.search, config.selfplay, first_index)
    result.network_seconds = evaluator.seconds
    result.network_positions = evaluator.positions
    result.network_batches = evaluator.batches
    return result
