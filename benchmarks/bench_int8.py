"""Ways to make the network int8: how closely each follows the float network, and how fast it runs.

Usage (from the project root; the replay file is only read)::

    python -m benchmarks.bench_int8 --replay RUN/checkpoints/iter_N.replay.pt [--network PATH]

Int8 through ONNX Runtime can be dynamic, or static with calibration on
positions of play.  For the network (the shipped one by
default) this builds each variant: static quantisation (:mod:`agents.network.quantize`,
what ``precision=int8`` plays) calibrated on 128 or 512 of the network's own
raw-policy positions, with each of :data:`agents.network.quantize.CALIBRATION_METHODS`;
and ONNX Runtime's dynamic quantisation (weights int8 ahead of time,
activations quantised on the fly at every call).  On the held-out games of a
training run's replay window (:func:`benchmarks.distill_blocks.split_replay`)
it prints each variant's top-1 agreement with the float network, the policy's
KL divergence from it and the value's squared error, and its positions per
CPU second at batch 1 and 16 (one thread, the best of ``--rounds``), as a
ratio to the float graph in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.network.network import raw_gather
from agents.network.onnx_inference import OnnxEvaluator, export_onnx
from agents.network.pretrained import weights_path
from agents.network.quantize import calibration_planes, quantize_int8, quiet_quantizer
from benchmarks.bench_limit import best_rate, session
from benchmarks.distill_blocks import agreement, split_replay
from train.run_checkpoint import load_model


def dynamic_int8(graph: bytes) -> bytes:
    """ONNX Runtime's dynamic quantisation of ``graph``'s convolutions (no calibration)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="yinsh-dyn-") as folder, quiet_quantizer():
        source, out = Path(folder) / "fp32.onnx", Path(folder) / "int8.onnx"
        onnx.save(onnx.load_from_string(graph), source)
        quantize_dynamic(source, out, op_types_to_quantize=["Conv"], weight_type=QuantType.QInt8)
        return out.read_bytes()


def variants(model: Any) -> dict[str, bytes]:
    """Label -> ONNX graph: float, the static int8 variants and the dynamic one."""
    graph = export_onnx(model)
    evaluator = OnnxEvaluator(model, precision="fp32")
    calibration = {n: calibration_planes(evaluator, n) for n in (128, 512)}
    out = {"fp32": graph}
    with contextlib.redirect_stdout(io.StringIO()):  # the histogram calibrators print
        for label, count, method in (
            ("static, minmax, 128 positions (precision=int8)", 128, "minmax"),
            ("static, minmax, 512 positions", 512, "minmax"),
            ("static, percentile, 128 positions", 128, "percentile"),
            ("static, entropy, 128 positions", 128, "entropy"),
        ):
            out[label] = quantize_int8(graph, calibration[count], method=method)
    out["dynamic (activations quantised at each call)"] = dynamic_int8(graph)
    return out


def runner(graph: bytes) -> tuple[Any, Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]]:
    """A session of ``graph``, and planes -> (action logits, values) through it."""
    s = session(graph)
    primary, secondary = raw_gather()

    def run(planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raw, values = s.run(None, {"planes": np.ascontiguousarray(planes.numpy())})
        return torch.from_numpy(raw[:, primary] + raw[:, secondary]), torch.from_numpy(values)

    return s, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_int8")
    parser.add_argument("--replay", required=True, help="a run's iter_N.replay.pt (read only)")
    parser.add_argument("--network", default=str(weights_path()), help="checkpoint or run")
    parser.add_argument("--seconds", type=float, default=1.0, help="per figure per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be positive and --rounds at least 1")
    if not Path(args.replay).is_file():
        parser.error(f"--replay {args.replay!r}: no such file")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    torch.set_num_threads(1)
    model, _, _ = load_model(args.network)
    _, held_out = split_replay(args.replay)
    from benchmarks.interleave import ring_move_positions
    from yinsh_env.envs.observation import encode

    planes = np.stack([encode(s) for s in ring_move_positions(64, 0)])
    print("| variant | top-1 agreement | KL | value MSE | b1 vs fp32 | b16 vs fp32 |")
    print("|---|---|---|---|---|---|")
    base: dict[int, float] = {}
    for label, graph in variants(model).items():
        s, run = runner(graph)
        m = agreement(run, model, held_out)
        rates = {}
        for batch in (1, 16):
            chunks = [planes[i : i + batch] for i in range(0, len(planes), batch)]
            rates[batch] = best_rate(
                lambda c=chunks, s=s: [s.run(None, {"planes": x}) for x in c],
                len(planes),
                args.seconds,
                args.rounds,
            )
        base = base or rates
        print(
            f"| {label} | {m['top1']:.3f} | {max(m['kl'], 0.0):.4f} | {m['value_mse']:.5f} "
            f"| {rates[1] / base[1]:.2f}x | {rates[16] / base[16]:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
