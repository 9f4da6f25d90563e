"""The network in int8: ONNX Runtime's static quantisation, calibrated on self-play positions.

On one CPU core the float network already runs near the core's float
throughput (``python -m benchmarks.bench_limit``), so only fewer or cheaper
operations make it faster.  Int8 convolutions are cheaper: ONNX Runtime's
integer kernels (VNNI where the CPU has it) run the tower about twice as
fast.  :func:`quantize_int8` rewrites the exported graph with QDQ pairs
around every convolution of the tower (weights per channel, activations per
tensor), leaving the policy head's two 1x1 convolutions in float: quantising
them too cost more policy accuracy than it bought speed (top-1 agreement with
the float network 0.88 instead of 0.95 on self-play positions).

Static quantisation needs each activation's range: :func:`calibration_planes`
plays the network's own raw policy (moves sampled from it, seeded) and
keeps every third position, so the ranges are those of the games the
network will search.  Calibrating on 128 positions takes about 0.3 CPU
seconds; it runs whenever an int8 evaluator is built (an agent, each
self-play iteration), so the int8 graph always matches the weights.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents.search import Leaf, network_leaf
from yinsh_env.engine.state import State

#: The evaluator signature used here (:data:`agents.search.BatchEvaluator`).
Evaluate = Callable[[Sequence[Leaf]], tuple[list[np.ndarray], np.ndarray]]

#: Convolutions left in float: the policy head's (``policy_conv``, ``policy_planes``).
FLOAT_NODES_MARK = "/policy_"


def calibration_planes(evaluate: Evaluate, count: int = 128, seed: int = 0) -> np.ndarray:
    """``count`` positions' planes from the network's raw-policy self-play, every third kept."""
    rng = np.random.default_rng(seed)
    planes: list[np.ndarray] = []
    ply = 0
    while len(planes) < count:
        state = State()
        while not state.is_terminal and len(planes) < count:
            leaf = network_leaf(state)
            logits, _ = evaluate([leaf])
            if ply % 3 == 0:
                planes.append(leaf.planes)  # type: ignore[arg-type]
            ply += 1
            z = np.exp(logits[0] - logits[0].max())
            state.apply(int(leaf.actions[rng.choice(len(z), p=z / z.sum())]))
    return np.stack(planes)


def _own_initializers(model: Any) -> None:
    """Give each ``Identity`` of an initializer its own copy of the initializer.

    PyTorch's exporter keeps one copy of equal constants (an untrained
    network's biases are all zero) and feeds the others through ``Identity``
    nodes; the quantiser only quantises a bias that is an initializer, and
    ONNX Runtime cannot fuse a convolution whose bias stayed float, which then
    runs in float between a dequantise and a quantise (slower than float).
    """
    from onnx import TensorProto

    initializers = {i.name: i for i in model.graph.initializer}
    for node in list(model.graph.node):
        if node.op_type == "Identity" and node.input[0] in initializers:
            copy = TensorProto()
            copy.CopyFrom(initializers[node.input[0]])
            copy.name = node.output[0]
            model.graph.initializer.append(copy)
            model.graph.node.remove(node)


@contextmanager
def quiet_quantizer() -> Iterator[None]:
    """ONNX Runtime's quantiser logs advice (pre-processing, shape inference) as warnings."""
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


#: How activation ranges are read from the calibration positions: ``minmax`` (the
#: default: the extremes seen), ``percentile`` (99.999%) or ``entropy`` (KL-optimal
#: thresholds).  ``python -m benchmarks.bench_int8`` compares them: none agrees with
#: the float network measurably better than ``minmax``.
CALIBRATION_METHODS: Final = ("minmax", "percentile", "entropy")


def quantize_int8(
    graph: bytes,
    planes: np.ndarray,
    batch: int = 64,
    float_nodes: bool = True,
    method: str = "minmax",
) -> bytes:
    """The float ONNX ``graph`` with int8 convolutions, ranges calibrated on ``planes``.

    ``float_nodes``: keep the policy head's convolutions in float (the network's
    graph); False quantises every convolution (any graph with a ``planes`` input).
    ``method``: one of :data:`CALIBRATION_METHODS`.
    """
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    methods = dict(zip(CALIBRATION_METHODS, ("MinMax", "Percentile", "Entropy")))
    if method not in methods:
        raise ValueError(f"calibration method {method!r}: expected one of {CALIBRATION_METHODS}")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter(planes[i : i + batch] for i in range(0, len(planes), batch))

        def get_next(self) -> dict[str, np.ndarray] | None:
            chunk = next(self.batches, None)
            return None if chunk is None else {"planes": np.ascontiguousarray(chunk)}

    model = onnx.load_from_string(graph)
    _own_initializers(model)
    excluded = [
        n.name for n in model.graph.node if n.op_type == "Conv" and FLOAT_NODES_MARK in n.name
    ]
    if float_nodes and not excluded:
        raise ValueError(f"no convolution named *{FLOAT_NODES_MARK}* in the graph")
    with tempfile.TemporaryDirectory(prefix="yinsh-int8-") as folder, quiet_quantizer():
        out = Path(folder) / "int8.onnx"
        quantize_static(
            model,
            out,
            Reader(),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["Conv"],
            nodes_to_exclude=excluded if float_nodes else [],
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=getattr(CalibrationMethod, methods[method]),
        )
        return out.read_bytes()
