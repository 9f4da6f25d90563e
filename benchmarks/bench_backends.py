"""Self-play games/s of the backends on one machine: in-process, worker processes, Ray actors.

Usage (from the project root; the Ray backend needs ``pip install -e ".[ray]"``)::

    python -m benchmarks.bench_backends [--config configs/quick.yaml] [--games 32]
        [--workers 2] [--rounds 2] [--backends inprocess process ray] [key.sub=value ...]

Every backend plays the same ``--games`` games (the same seeds, a freshly
initialised network) for ``--rounds`` iterations with the same executor, as
a training run does; the first round includes starting the workers
(processes spawned, Ray started and its actors built, the weights shipped),
the later rounds are the steady state.  ``--workers`` is the number of
worker processes and of Ray actors (one CPU each).  Prints games/s and
moves/s per round and for the steady state.

Figures are noisy on a shared machine: run it twice, on a quiet one.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import torch

from agents.infra.cli_args import int_in
from agents.network.network import PolicyValueNet
from train.config import Config
from train.config_files import config_or_exit
from train.selfplay_workers import make_executor
from train.trainer import game_seed

BACKENDS = ("inprocess", "process", "ray")


def backend_config(config: Config, backend: str, workers: int) -> Config:
    """``config`` with self-play on ``backend`` with ``workers`` workers or actors."""
    ray = dataclasses.replace(config.ray, actors=workers, cpus_per_actor=1.0)
    return dataclasses.replace(config, backend=backend, workers=workers, ray=ray)


def bench(config: Config, backend: str, games: int, rounds: int) -> list[tuple[float, int, int]]:
    """(seconds, games, moves) of each round, the executor's start-up in the first."""
    torch.manual_seed(config.seed)
    weights = PolicyValueNet(config.network).state_dict()
    seeds = [game_seed(config.seed, 0, g) for g in range(games)]
    figures = []
    start = time.perf_counter()
    executor = make_executor(config)
    try:
        for _ in range(rounds):
            result = executor.play(weights, seeds, 0)
            now = time.perf_counter()
            moves = sum(s.plies for s in result.stats)
            figures.append((now - start, len(result.stats), moves))
            start = now
    finally:
        executor.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/quick.yaml")
    parser.add_argument("--games", type=int_in(1, 100_000), default=32, help="games per round")
    parser.add_argument("--rounds", type=int_in(1, 1000), default=2, help="iterations per backend")
    parser.add_argument("--workers", type=int_in(1, 1024), default=2, help="processes / Ray actors")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value")
    args = parser.parse_args()
    base = config_or_exit(parser, args.config, args.overrides)
    torch.set_num_threads(1)
    print(
        f"{args.config}: {base.network.blocks}x{base.network.channels} network, "
        f"{base.search.simulations}/{base.selfplay.fast_simulations} simulations, "
        f"{base.selfplay.games_in_flight} games in flight; {args.games} games per round, "
        f"{args.workers} workers"
    )
    print(f"{'backend':<10} {'round':>6} {'seconds':>8} {'games/s':>8} {'moves/s':>8}")
    for backend in args.backends:
        config = backend_config(base, backend, args.workers)
        figures = bench(config, backend, args.games, args.rounds)
        rows = [(str(i), *f) for i, f in enumerate(figures, start=1)]
        steady = figures[1:] or figures
        rows.append(("steady", *(sum(f[k] for f in steady) for k in range(3))))
        for label, seconds, games, moves in rows:
            print(
                f"{backend:<10} {label:>6} {seconds:8.1f} {games / seconds:8.2f} "
                f"{moves / seconds:8.0f}"
            )


if __name__ == "__main__":
    main()
