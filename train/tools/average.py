"""One network from several checkpoints of a run: their weights averaged (SWA).

A checkpoint is one sample of a noisy trajectory: two checkpoints a few
iterations apart play each other unevenly, either way.  Averaging the
weights of the last few checkpoints of a run (stochastic weight averaging;
KataGo ships averaged networks) keeps what they share and cancels some of
that noise, at no training cost.

The average is taken by :class:`torch.optim.swa_utils.AveragedModel`; the
batch-norm statistics of the averaged weights are then measured anew by
:func:`torch.optim.swa_utils.update_bn` on positions from a run's replay
window (the statistics of averaged weights are not the average of their
statistics).  Without a replay file the averaged statistics are kept, and
the file's ``metadata["average"]["batch_norm"]`` says so.

Command line::

    python -m train.tools.average runs/long/checkpoints/iter_000540.pt \\
        runs/long/checkpoints/iter_000560.pt runs/long --out averaged.pt

The output is a slim checkpoint (:func:`train.run_checkpoint.slim_checkpoint`):
``net:path=averaged.pt``, ``init.weights`` and ``python -m train.tools.ship_network
export`` all load it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel, update_bn

from agents.infra.cli_args import any_path, int_in, output_file
from agents.network.network import PolicyValueNet
from train.cpu_clock import CPU_KEY
from train.replay import ReplayBuffer
from train.run_checkpoint import (
    CheckpointError,
    atomic_save,
    config_of,
    load_weights,
    read_file,
    replay_path,
    resolve_checkpoint,
    slim_checkpoint,
)

#: Positions the batch-norm statistics are measured on, by default.
DEFAULT_BN_POSITIONS: Final = 4096
_BATCH: Final = 256


def average_checkpoints(
    paths: Sequence[str | Path],
    replay: str | Path | None = None,
    bn_positions: int = DEFAULT_BN_POSITIONS,
    seed: int = 0,
) -> dict[str, Any]:
    """A slim checkpoint whose weights are the mean of ``paths``' weights.

    Every checkpoint must hold the same network (blocks, channels, heads);
    CheckpointError names the first that does not.  ``replay`` is a replay
    file (``iter_N.replay.pt``) whose positions, under random symmetries,
    re-measure the batch-norm statistics; ``None`` looks beside the newest
    checkpoint for one and keeps the averaged statistics if there is none.
    The newest checkpoint (highest iteration) gives the config and iteration.
    """
    if not paths:
        raise CheckpointError("no checkpoints to average")
    resolved = [resolve_checkpoint(p) for p in paths]
    if len(set(resolved)) != len(resolved):
        raise CheckpointError("a checkpoint is named twice: each is averaged once")
    loaded = [(path, read_file(path)) for path in resolved]
    newest_path, newest = max(loaded, key=lambda item: int(item[1]["iteration"]))
    network = config_of(newest, newest_path).network
    averaged: AveragedModel | None = None
    for path, data in loaded:
        other = config_of(data, path).network
        if other != network:
            raise CheckpointError(
                f"checkpoint {path} holds another network ({other}) than {newest_path} "
                f"({network}): only one network's checkpoints average"
            )
        model = load_weights(PolicyValueNet(network), data, path)
        if averaged is None:
            # use_buffers: the batch-norm statistics are averaged too, what the averaged
            # weights keep when no replay file re-measures them.
            averaged = AveragedModel(model, use_buffers=True)
        averaged.update_parameters(model)
    assert averaged is not None
    net = averaged.module
    assert isinstance(net, PolicyValueNet)
    replay_file = Path(replay) if replay is not None else replay_path(newest_path)
    if replay is None and not replay_file.exists():
        batch_norm = "the checkpoints' statistics averaged (no replay file to measure them on)"
    else:
        positions = _replay_planes(replay_file, bn_positions, seed)
        update_bn(_batches(positions), net)
        batch_norm = f"measured on {len(positions)} positions of {replay_file}"
    net.eval()
    metadata = {
        "average": {
            "checkpoints": [str(p) for p, _ in loaded],
            "iterations": [int(d["iteration"]) for _, d in loaded],
            "batch_norm": batch_norm,
        }
    }
    out = slim_checkpoint({**newest, "model": net.state_dict()}, metadata)
    history = newest.get("history")
    if isinstance(history, dict) and CPU_KEY in history:
        # The newest checkpoint's CPU clock: where agents.network.pretrained export and
        # init.weights continue the count from.
        out["history"] = {CPU_KEY: float(history[CPU_KEY])}
    return out


def _replay_planes(path: Path, count: int, seed: int) -> np.ndarray:
    """``count`` positions (planes) drawn from a replay file, each under a random symmetry."""
    data = read_file(path, "replay")
    try:
        buffer = ReplayBuffer(window=int(data["replay"]["window"]))
        buffer.load_state_dict(data["replay"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"replay file {path} holds no replay window: {exc}") from None
    if len(buffer) == 0:
        raise CheckpointError(f"replay file {path} holds no positions")
    return buffer.sample(count, np.random.default_rng(seed)).planes


def _batches(planes: np.ndarray) -> Iterator[torch.Tensor]:
    for start in range(0, len(planes), _BATCH):
        yield torch.from_numpy(planes[start : start + _BATCH])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.tools.average",
        description="Average the weights of a run's checkpoints into one network (SWA).",
    )
    parser.add_argument(
        "checkpoints", nargs="+", type=any_path, help="checkpoint files or run directories"
    )
    parser.add_argument("--out", type=output_file((".pt",), parents=True), required=True)
    parser.add_argument(
        "--replay",
        type=any_path,
        default=None,
        help="a replay file whose positions re-measure the batch-norm statistics "
        "(default: the newest checkpoint's, if it has one)",
    )
    parser.add_argument("--bn-positions", type=int_in(1, 1_000_000), default=DEFAULT_BN_POSITIONS)
    parser.add_argument("--seed", type=int_in(0, 2**32 - 1), default=0)
    args = parser.parse_args(argv)
    if args.out.resolve() in {Path(p).resolve() for p in args.checkpoints}:
        parser.error(f"--out {args.out} is one of the checkpoints: write the average elsewhere")
    try:
        data = average_checkpoints(args.checkpoints, args.replay, args.bn_positions, args.seed)
    except (CheckpointError, OSError) as exc:
        print(f"train.tools.average: {exc}", file=sys.stderr)
        return 2
    atomic_save(data, args.out)
    info = data["metadata"]["average"]
    print(
        f"wrote {args.out}: iterations {', '.join(map(str, info['iterations']))} averaged; "
        f"batch norm {info['batch_norm']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
