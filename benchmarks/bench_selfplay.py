"""Self-play throughput, and the share of self-play time spent inside the network.

Usage (from the project root)::

    python -m benchmarks.bench_selfplay [--configs quick default]   # names or paths
                                        [--games N] [--threads T] [key.sub=value ...]

For each config, plays ``N`` self-play games in one process exactly as a
training iteration does (its network size, search, playout caps and games in
flight), with a freshly initialised network, and prints:

* moves/s: game positions played per second;
* simulations/s: search simulations per second;
* network positions/s and the mean batch size;
* the share of time inside the network evaluator (stacking the planes,
  the forward pass, bringing the logits back), and of the forward pass alone;
  the rest is the search's own Python work (selection, backup, the engine,
  encoding the leaves).

Self-play in a worker process runs one torch thread (``--threads``).
Figures are noisy on a shared machine: run it twice, on a quiet one.
"""

from __future__ import annotations

import argparse
import time

import torch

from agents.infra.cli_args import int_in
from agents.network.inference import resolve_device
from agents.network.network import PolicyValueNet, count_parameters
from agents.network.onnx_inference import make_evaluator
from train.config import Config
from train.config_files import config_or_exit
from train.selfplay import play_games
from train.trainer import game_seed


def bench(config_path: str, config: Config, games: int, threads: int) -> None:
    torch.set_num_threads(threads)
    torch.manual_seed(config.seed)
    model = PolicyValueNet(config.network)
    device = resolve_device(config.device)
    evaluator = make_evaluator(
        model, device, config.inference, amp=config.amp, precision=config.inference_precision
    )
    seeds = [game_seed(config.seed, 0, g) for g in range(games)]
    start = time.perf_counter()
    result = play_games(evaluator, seeds, config.search, config.selfplay)
    seconds = time.perf_counter() - start
    moves = sum(s.plies for s in result.stats)
    sims = sum(s.simulations for s in result.stats)
    print(
        f"{config_path}: {config.network.blocks}x{config.network.channels} "
        f"({count_parameters(model):,} parameters), {config.search.algorithm} "
        f"{config.search.simulations}/{config.selfplay.fast_simulations} simulations "
        f"(full search p={config.selfplay.full_search_prob}), "
        f"{config.selfplay.games_in_flight} games in flight, device {device}, {threads} thread(s), "
        f"inference {type(evaluator).__name__} {config.inference_precision}"
    )
    print(f"  {games} games, {moves} moves in {seconds:.1f} s")
    print(f"  moves/s              {moves / seconds:10.1f}")
    print(f"  simulations/s        {sims / seconds:10.1f}")
    print(f"  network positions/s  {evaluator.positions / seconds:10.1f}")
    print(f"  mean batch           {evaluator.positions / max(1, evaluator.batches):10.1f}")
    print(f"  time in network      {evaluator.seconds / seconds:10.1%}")
    print(f"  ... forward pass     {evaluator.forward_seconds / seconds:10.1%}")
    print(f"  search (python)      {1 - evaluator.seconds / seconds:10.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--configs", nargs="+", default=["configs/quick.yaml", "configs/default.yaml"]
    )
    parser.add_argument("--games", type=int_in(1, 100_000), default=32, help="games per config")
    parser.add_argument("--threads", type=int_in(1, 1024), default=1, help="torch threads")
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value")
    args = parser.parse_args()
    configs = [(path, config_or_exit(parser, path, args.overrides)) for path in args.configs]
    for path, config in configs:
        bench(path, config, args.games, args.threads)


if __name__ == "__main__":
    main()
