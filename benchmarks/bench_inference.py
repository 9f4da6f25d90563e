"""Network positions/s on the CPU: the eager model against faster ways to run it.

Self-play spends most of its time in the network (75-89%, see
``bench_selfplay``), one small batch at a time on one thread, so the cost per
call matters as much as the arithmetic.  Each variant evaluates the same
batches of real positions (planes from random games) and must give the same
policy logits and values as the eager model (checked, to 1e-4); rounds are
interleaved so a busy machine slows every variant alike.

Usage::

    python -m benchmarks.bench_inference [--config quick|default] [--batch 16] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np
import torch

from agents.infra.cli_args import int_in, number_in
from agents.network.inference import NetworkEvaluator
from agents.network.network import PolicyValueNet
from agents.network.onnx_inference import OnnxEvaluator, PolicyValue, onnx_available
from train.config import NetworkConfig
from train.config_files import config_or_exit
from yinsh_env import State
from yinsh_env.envs.observation import encode

Runner = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def sample_planes(count: int, seed: int = 0) -> np.ndarray:
    """Planes of ``count`` positions from seeded random games (placements included)."""
    rng = random.Random(seed)
    planes = []
    while len(planes) < count:
        state = State()
        while not state.is_terminal and len(planes) < count:
            state.apply(rng.choice(state.legal_actions()))
            planes.append(encode(state, state.to_act))
    return np.stack(planes)


def frozen(model: PolicyValueNet, example: torch.Tensor) -> Runner:
    """TorchScript trace, frozen and optimised for inference (folds batch norm)."""
    traced = torch.jit.trace(PolicyValue(model).eval(), example, check_trace=False)
    return torch.jit.optimize_for_inference(torch.jit.freeze(traced))  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_inference")
    parser.add_argument("--config", default="quick", help="configs/NAME.yaml for the network")
    parser.add_argument("--batch", type=int_in(1, 4096), default=16)
    parser.add_argument("--rounds", type=int_in(1, 1000), default=5)
    parser.add_argument(
        "--seconds", type=number_in(0, 3600, above=True), default=1.0, help="per variant per round"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    network: NetworkConfig = config_or_exit(parser, args.config).network
    model = PolicyValueNet(network).eval()
    planes = torch.from_numpy(sample_planes(args.batch * 8))
    batches = list(planes.split(args.batch))
    with torch.inference_mode():
        eager = "eager (NetworkEvaluator)"
        variants: dict[str, Runner] = {
            eager: NetworkEvaluator(model, torch.device("cpu")).forward,
            "torchscript, frozen": frozen(model, batches[0]),
        }
        if onnx_available():
            variants["onnxruntime (OnnxEvaluator)"] = OnnxEvaluator(model).forward
        reference = [variants[eager](b) for b in batches]
        for name, runner in variants.items():
            for b, (policy, value) in zip(batches, reference):
                p, v = runner(b)
                same = torch.allclose(p, policy, atol=1e-4) and torch.allclose(v, value, atol=1e-4)
                if not same:
                    raise SystemExit(f"{name} disagrees with the eager model")
        best = {name: 0.0 for name in variants}
        for _ in range(args.rounds):
            for name, runner in variants.items():
                count, start = 0, time.perf_counter()
                while time.perf_counter() - start < args.seconds:
                    for b in batches:
                        runner(b)
                    count += len(batches) * args.batch
                best[name] = max(best[name], count / (time.perf_counter() - start))
    print(
        f"network {network.blocks}x{network.channels} ({args.config}), batch {args.batch}, 1 thread"
    )
    print("| variant | positions/s (best round) | vs eager |")
    print("|---|---|---|")
    base = best[eager]
    for name, rate in best.items():
        print(f"| {name} | {rate:,.0f} | {rate / base:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
