"""How close the network runs to what one CPU core allows, and where a decision's time goes.

Usage (from the project root)::

    python -m benchmarks.bench_limit [--network PATH] [--seconds 1] [--rounds 3] [--games 16]

Prints, on one core (one ONNX Runtime thread, this process pinned to one
processor where the OS allows), the CPU clock of this process:

* the network's operations per position: multiply-adds of every convolution
  and linear layer (the tower runs on the 11 x 11 grid), and operations =
  2 x multiply-adds;
* the core's attainable throughput for the same kind of work through the same
  runtime: large convolutions shaped like the tower's (48 channels, 3 x 3, on
  11 x 11, batch 256) and wider (128 channels), and a 1024^3 matrix product,
  in float and as int8 (the quantiser's QDQ graph of the same convolution;
  ONNX Runtime's integer kernels);
* the network's positions/s at batch 1 (the agent) and 16 (about self-play's
  batch), in float and int8, and before this work (the float graph of
  commit b3e447b, which gathered the 2,142 action logits inside the graph),
  as operations/s and as a fraction of the best attainable figure of the
  same arithmetic;
* a ``pretrained`` decision (256 simulations) split into the network's
  forward pass, the evaluator's glue around it (stacking planes, gathering
  each leaf's legal logits) and the search's own work (the evaluation
  cache's look-ups included), float and int8, with the network evaluations
  a simulation costs (fewer than one: the evaluation cache);
* the same split for self-play with ``configs/long.yaml``'s settings and the
  network's weights (``--games`` games, 16 in flight, batched leaves).

Each part of a split is measured in this process's CPU time around the calls
themselves (:class:`CpuTimed`), so other jobs on the machine do not inflate
the network's share the way a wall-clock timer inside the evaluator would.

Figures are the best round of ``--rounds`` (CPU time: other jobs on the
machine disturb them less); the ratios are what to quote.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.network.network import PolicyValueNet
from agents.network.onnx_inference import OnnxEvaluator, export_onnx
from agents.network.pretrained import weights_path
from agents.network.quantize import quantize_int8
from train.run_checkpoint import load_model
from yinsh_env.envs.observation import GRID


def multiply_adds(model: PolicyValueNet) -> int:
    """Multiply-adds of one position: convolutions over the grid, linear layers."""
    total = 0
    cells = GRID * GRID
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            kh, kw = module.kernel_size
            total += cells * module.out_channels * module.in_channels * kh * kw // module.groups
        elif isinstance(module, nn.Linear):
            total += module.in_features * module.out_features
    # The auxiliary ownership head is not in the exported graph.
    head = model.ownership_out
    return total - cells * head.out_channels * head.in_channels


def best_rate(run: Callable[[], Any], work: float, seconds: float, rounds: int) -> float:
    """The best ``work`` per CPU second over ``rounds`` rounds of ``seconds`` each."""
    run()
    best = 0.0
    for _ in range(rounds):
        count, start = 0, time.process_time()
        while (elapsed := time.process_time() - start) < seconds:
            run()
            count += 1
        best = max(best, count * work / elapsed)
    return best


class CpuTimed:
    """A callable (or an ONNX Runtime session's ``run``) that adds up its CPU seconds.

    One thread: :func:`time.process_time` around each call is the call's own
    CPU time (about a microsecond of overhead against hundreds per forward pass).
    """

    def __init__(self, call: Callable[..., Any]) -> None:
        self.call = call
        self.seconds = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return self.call(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - start

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """As ``InferenceSession.run``: an evaluator's ``session`` may be replaced by this."""
        return self(*args, **kwargs)


def session(graph: bytes) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def conv_graph(batch: int, channels: int, size: int) -> tuple[bytes, np.ndarray, int]:
    """A 3 x 3 convolution (float ONNX), an input, and its multiply-adds."""

    class Conv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.conv(x))

    import io
    import warnings

    example = torch.randn(batch, channels, size, size)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Conv().eval(), (example,), buffer, input_names=["planes"], dynamo=False)
    return buffer.getvalue(), example.numpy(), batch * size * size * channels * channels * 9


def matmul_graph(n: int) -> tuple[bytes, np.ndarray, int]:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((n, n), np.float32))
    weight.name = "w"
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["planes", "w"], ["y"])],
        "matmul",
        [helper.make_tensor_value_info("planes", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(1).standard_normal((n, n), np.float32)
    return onnx.shape_inference.infer_shapes(model).SerializeToString(), x, n**3


def rate_of(graph: bytes, x: np.ndarray, ops: float, seconds: float, rounds: int) -> float:
    """Operations per CPU second of one ONNX graph on input ``x``."""
    runner, feed = session(graph), {"planes": x}
    return best_rate(lambda: runner.run(None, feed), ops, seconds, rounds)


def limits(seconds: float, rounds: int) -> dict[str, tuple[float, float]]:
    """GOP/s of large float and int8 kernels: name -> (float, int8 or 0)."""
    out: dict[str, tuple[float, float]] = {}
    for name, (graph, x, macs) in {
        "conv 48ch 3x3 11x11, batch 256 (the tower's shape)": conv_graph(256, 48, 11),
        "conv 128ch 3x3 11x11, batch 64": conv_graph(64, 128, 11),
        "matmul 1024^3": matmul_graph(1024),
    }.items():
        fp32 = rate_of(graph, x, 2 * macs, seconds, rounds)
        int8 = 0.0
        if name.startswith("conv"):
            quantized = quantize_int8(graph, x, batch=len(x), float_nodes=False)
            int8 = rate_of(quantized, x, 2 * macs, seconds, rounds)
        out[name] = (fp32 / 1e9, int8 / 1e9)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_limit")
    parser.add_argument("--network", default=str(weights_path()), help="checkpoint or run")
    parser.add_argument("--seconds", type=float, default=1.0, help="per figure per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=16, help="self-play games a round")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    torch.set_num_threads(1)
    model, _, _ = load_model(args.network)
    macs = multiply_adds(model)
    ops = 2 * macs
    print(f"network: {args.network}")
    print(f"operations per position: {macs / 1e6:.1f} M multiply-adds = {ops / 1e6:.1f} M ops\n")
    print("| attainable, one core (ONNX Runtime, 1 thread) | float GOP/s | int8 GOP/s |")
    print("|---|---|---|")
    table = limits(args.seconds, args.rounds)
    for name, (fp32, int8) in table.items():
        print(f"| {name} | {fp32:.1f} | {int8:.1f} |" if int8 else f"| {name} | {fp32:.1f} | - |")
    limit = {"fp32": max(v[0] for v in table.values()), "int8": max(v[1] for v in table.values())}
    print("\n| network | batch | positions/s | GOP/s | of the attainable |")
    print("|---|---|---|---|---|")
    from benchmarks.interleave import ring_move_positions
    from yinsh_env.envs.observation import encode

    planes = np.stack([encode(s) for s in ring_move_positions(64, 0)])
    evaluators = {p: OnnxEvaluator(model, precision=p) for p in ("fp32", "int8")}
    graphs = {  # label -> (session, arithmetic)
        "fp32, before (b3e447b's graph: policy gathered inside)": (
            session(export_onnx(model, gathered=True)),
            "fp32",
        ),
        **{p: (e.session, p) for p, e in evaluators.items()},
    }
    for label, (runner, precision) in graphs.items():
        for batch in (1, 16):
            chunks = [planes[i : i + batch] for i in range(0, 64, batch)]

            def run(s: Any = runner, chunks: list[np.ndarray] = chunks) -> None:
                for chunk in chunks:
                    s.run(None, {"planes": chunk})

            rate = best_rate(run, 64, args.seconds, args.rounds)
            share = rate * ops / 1e9 / limit[precision]
            print(
                f"| {label} | {batch} | {rate:,.0f} | {rate * ops / 1e9:.1f} | "
                f"{share:.0%} of {precision} |"
            )
    print()
    decision_split(tuple(evaluators), args.rounds)
    print()
    selfplay_split(args.network, tuple(evaluators), args.games, args.rounds)
    return 0


def _split_row(
    label: str, rate: float, per: float, cpu: float, run: CpuTimed, call: CpuTimed
) -> str:
    """A table row: the rate, evaluations per unit, and forward / glue / search shares."""
    forward, glue = run.seconds / cpu, (call.seconds - run.seconds) / cpu
    return (
        f"| {label} | {rate:,.0f} | {per:.2f} | {forward:.0%} | {glue:.0%} "
        f"| {1 - forward - glue:.0%} |"
    )


def _timed(evaluator: OnnxEvaluator) -> tuple[CpuTimed, CpuTimed]:
    """Time ``evaluator``'s forward passes (its session replaced); and a timed call of it."""
    run = CpuTimed(evaluator.session.run)
    evaluator.session = run
    return run, CpuTimed(evaluator)


def decision_split(precisions: tuple[str, ...], rounds: int) -> None:
    """Where a ``pretrained`` decision (256 simulations) spends its CPU time (best round)."""
    from agents import make_agent
    from benchmarks.interleave import forget, ring_move_positions

    positions = ring_move_positions(6, 1)
    print(
        "| pretrained, 256 simulations | simulations/CPU-s | evaluations/simulation "
        "| network forward | evaluator glue | search |"
    )
    print("|---|---|---|---|---|---|")
    for precision in precisions:
        agent: Any = make_agent(f"pretrained:precision={precision}", seed=0)
        agent.act(positions[0].copy())
        best = ""
        top = 0.0
        for _ in range(rounds):
            session = agent.evaluator.session
            run, call = _timed(agent.evaluator)
            agent.cache.evaluate = call
            evaluated = agent.evaluator.positions
            start = time.process_time()
            for state in positions:
                forget(agent)  # each decision searched afresh: rounds repeat them
                agent.act(state.copy())
            cpu = time.process_time() - start
            agent.evaluator.session = session
            sims = 256 * len(positions)
            if sims / cpu > top:
                top = sims / cpu
                per = (agent.evaluator.positions - evaluated) / sims
                best = _split_row(precision, top, per, cpu, run, call)
        print(best)


def selfplay_split(network: str, precisions: tuple[str, ...], games: int, rounds: int) -> None:
    """The same split for self-play: ``configs/long.yaml``'s settings, ``network``'s weights."""
    from train.config import load_config
    from train.config_files import resolve_config
    from train.selfplay import play_games
    from train.trainer import game_seed

    print(
        f"| self-play, configs/long.yaml, {games} games | moves/CPU-s | evaluations/move "
        "| network forward | evaluator glue | search |"
    )
    print("|---|---|---|---|---|---|")
    model, _, _ = load_model(network)
    for precision in precisions:
        config = load_config(resolve_config("long"), [f"inference_precision={precision}"])
        evaluator = OnnxEvaluator(model, precision=precision)
        seeds = [game_seed(config.seed, 0, g) for g in range(games)]
        best, top = "", 0.0
        for _ in range(rounds):
            session, evaluated = evaluator.session, evaluator.positions
            run, call = _timed(evaluator)
            start = time.process_time()
            result = play_games(call, seeds, config.search, config.selfplay)
            cpu = time.process_time() - start
            evaluator.session = session
            moves = sum(s.plies for s in result.stats)
            if moves / cpu > top:
                top = moves / cpu
                per = (evaluator.positions - evaluated) / moves
                best = _split_row(precision, top, per, cpu, run, call)
        print(best)


if __name__ == "__main__":
    raise SystemExit(main())
