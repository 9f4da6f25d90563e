"""Export the shipped checkpoints' graphs, so that ``pretrained`` plays without torch.

For each ``weights/NAME.pt`` (or the checkpoints named) it writes
``NAME.fp32.onnx``, ``NAME.int8.onnx`` and ``NAME.json``
(:mod:`agents.network.graphs` says what each holds).  The graphs are the ones
:class:`~agents.network.onnx_inference.OnnxEvaluator` builds when it loads the
checkpoint: the float graph exported from PyTorch, and its int8 version
calibrated on the float network's own raw-policy positions.  Run it after
replacing or adding a shipped checkpoint (it needs the ``train`` extra)::

    python -m agents.network.export_onnx              # every shipped checkpoint
    python -m agents.network.export_onnx --check      # compare, write nothing

``--check`` holds each shipped graph against the checkpoint's float32 network
(:func:`graph_agreement`): the files must be the ones described and made from
this checkpoint (SHA-256), the float graph must give the network's outputs up
to float32 rounding, and the int8 graph must stay within quantisation's reach
of them (:data:`BOUNDS`).  It never re-makes the int8 graph to compare bit for
bit: calibration runs on the CPU's own float kernels, so a re-make differs from
one CPU to the next while both are equally good
(tests/agents/test_shipped_graphs.py runs the check).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents.search import Leaf, network_leaf
from yinsh_env.atomic_write import write_bytes, write_text
from yinsh_env.state import State

from .checkpoint import CheckpointError, load_network
from .config import PlayConfig
from .graphs import (
    FORMAT,
    SHIPPED_PRECISIONS,
    VERSION,
    GraphEvaluator,
    file_sha256,
    graphs_path,
)
from .onnx_inference import export_onnx
from .pretrained import WEIGHTS_DIR
from .quantize import calibration_planes, quantize_int8

#: The settings the int8 graph is calibrated with: those of
#: :func:`agents.network.quantize.calibration_planes`, as at load.
CALIBRATION: Final = {"positions": 128, "seed": 0}


def make_graphs(checkpoint: Path) -> tuple[dict[str, bytes], PlayConfig, dict[str, Any]]:
    """A checkpoint's graphs by precision, its config, and its ``metadata``."""
    model, config, data = load_network(checkpoint)
    fp32 = export_onnx(model)
    reference = GraphEvaluator(fp32)
    planes = calibration_planes(reference, CALIBRATION["positions"], CALIBRATION["seed"])
    int8 = quantize_int8(fp32, planes)
    return {"fp32": fp32, "int8": int8}, config, dict(data.get("metadata", {}))


def versions() -> dict[str, str]:
    """The versions of what made the graphs (a graph may change with them)."""
    import onnx
    import onnxruntime
    import torch

    return {
        "torch": torch.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
    }


def export(checkpoint: Path) -> list[Path]:
    """Write ``checkpoint``'s graphs and their description beside it; the files written."""
    graphs, config, metadata = make_graphs(checkpoint)
    written = []
    described: dict[str, dict[str, str]] = {}
    for precision in SHIPPED_PRECISIONS:
        path = checkpoint.with_suffix(f".{precision}.onnx")
        write_bytes(path, graphs[precision])
        described[precision] = {"file": path.name, "sha256": file_sha256(path)}
        written.append(path)
    info = {
        "format": FORMAT,
        "version": VERSION,
        "checkpoint": checkpoint.name,
        "checkpoint_sha256": file_sha256(checkpoint),
        "command": "python -m agents.network.export_onnx",
        "made_with": versions(),
        "calibration": CALIBRATION,
        "config": dataclasses.asdict(config),
        "metadata": metadata,
        "graphs": described,
    }
    out = graphs_path(checkpoint)
    write_text(out, json.dumps(info, indent=2, sort_keys=True) + "\n")
    written.append(out)
    return written


def positions(count: int = 200, seed: int = 0) -> list[Leaf]:
    """Leaves of ``count`` positions from seeded random games (placing rings, moves, rows).

    Integer arithmetic alone, so every CPU draws the same positions.
    """
    rng = np.random.default_rng(seed)
    leaves: list[Leaf] = []
    while len(leaves) < count:
        state = State()
        while not state.is_terminal and len(leaves) < count:
            if rng.random() < 0.3:
                leaves.append(network_leaf(state))
            legal = state.legal_actions()
            state.apply(int(legal[rng.integers(len(legal))]))
    return leaves


@dataclass(frozen=True)
class Bound:
    """How close a graph must stay to the float32 network, over fixed positions."""

    #: Fraction of positions whose most likely action must be the network's.
    agree: float
    #: Largest difference of a value (the value lies in [-1, 1]).
    values: float
    #: Largest total-variation distance between a position's two policies.
    policy: float
    #: Largest difference of a legal action's logit, or None (int8: unbounded per logit).
    logits: float | None


#: Per precision.  ``fp32``: the exporter's graph computes what the network
#: computes, in other kernels: float32 rounding, about 1e-5 on the logits on any
#: CPU, so 1e-3 has a hundredfold margin and a graph of other weights misses by
#: whole logits.  ``int8``: quantisation's own error, which depends on the CPU's
#: integer kernels; measured on the four shipped networks over :func:`positions`
#: (200): with VNNI or AMX the most likely action kept in 93-96% of positions,
#: values within 0.08, each policy within 0.09 in total variation; with AVX2
#: alone (``qemu-x86_64 -cpu Haswell``: ONNX Runtime's u8s8 products can
#: saturate there) 85-93%, 0.15 and 0.33.  The bound leaves room beyond the worst
#: of them; another shipped network's int8 graph misses it by its policy (0.54
#: or more in total variation).
BOUNDS: Final = {
    "fp32": Bound(agree=0.99, values=1e-4, policy=1e-3, logits=1e-3),
    "int8": Bound(agree=0.75, values=0.3, policy=0.5, logits=None),
}


@dataclass(frozen=True)
class Agreement:
    """How a graph's outputs compare with the float32 network's over ``positions``."""

    precision: str
    positions: int
    #: Positions whose most likely action is the network's.
    agree: int
    #: Largest difference of a legal logit, of a value, and largest total variation.
    logits: float
    values: float
    policy: float

    def misses(self, bound: Bound | None = None) -> list[str]:
        """What falls outside ``bound`` (default: this precision's :data:`BOUNDS`), in words."""
        bound = bound or BOUNDS[self.precision]
        found = []
        if self.agree < bound.agree * self.positions:
            found.append(f"most likely action kept in {self.agree}/{self.positions}")
        if self.values > bound.values:
            found.append(f"values differ by {self.values:.3g} > {bound.values:g}")
        if self.policy > bound.policy:
            found.append(f"a policy differs by {self.policy:.3g} > {bound.policy:g}")
        if bound.logits is not None and self.logits > bound.logits:
            found.append(f"logits differ by {self.logits:.3g} > {bound.logits:g}")
        return found

    def __str__(self) -> str:
        return (
            f"{self.precision}: top-1 {self.agree}/{self.positions}, values {self.values:.2g}, "
            f"policy {self.policy:.2g}, logits {self.logits:.2g}"
        )


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max())
    return z / z.sum()


def compare(
    logits: Sequence[np.ndarray],
    values: np.ndarray,
    reference: tuple[Sequence[np.ndarray], np.ndarray],
    precision: str,
) -> Agreement:
    """An :class:`Agreement` of outputs against the ``reference`` network's."""
    ref_logits, ref_values = reference
    pairs = list(zip(logits, ref_logits))
    return Agreement(
        precision=precision,
        positions=len(pairs),
        agree=sum(int(np.argmax(a) == np.argmax(b)) for a, b in pairs),
        logits=max(float(np.abs(a - b).max()) for a, b in pairs),
        values=float(np.abs(np.asarray(values) - np.asarray(ref_values)).max()),
        policy=max(0.5 * float(np.abs(_softmax(a) - _softmax(b)).sum()) for a, b in pairs),
    )


def graph_agreement(checkpoint: Path, count: int = 200) -> dict[str, Agreement]:
    """Each shipped graph of ``checkpoint`` against its float32 network, over
    ``count`` :func:`positions`.

    CheckpointError when no graphs are described beside it, they were made from
    another file (:func:`agents.network.graphs.shipped_graphs`), or a graph file
    is not the one described (its SHA-256).
    """
    import torch

    from .graphs import shipped_graphs
    from .inference import NetworkEvaluator

    if not checkpoint.is_file():
        raise CheckpointError(f"checkpoint file {checkpoint} does not exist")
    shipped = shipped_graphs(checkpoint)
    if shipped is None:
        raise CheckpointError(
            f"{checkpoint}: no graphs made from it beside it "
            "(python -m agents.network.export_onnx writes them)"
        )
    for precision in SHIPPED_PRECISIONS:
        graph = shipped.graph(precision)
        if file_sha256(graph) != shipped.info["graphs"][precision]["sha256"]:
            described = graphs_path(checkpoint).name
            raise CheckpointError(f"{graph}: not the graph {described} describes")
    model, _, _ = load_network(checkpoint)
    leaves = positions(count)
    reference = NetworkEvaluator(model.float(), torch.device("cpu"), amp=False)(leaves)
    found = {}
    for precision in SHIPPED_PRECISIONS:
        logits, values = GraphEvaluator(shipped.graph(precision))(leaves)
        found[precision] = compare(logits, values, reference, precision)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.network.export_onnx", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "checkpoints", nargs="*", type=Path, help="checkpoints (default: every weights/*.pt)"
    )
    parser.add_argument(
        "--check", action="store_true", help="compare the shipped graphs; write nothing"
    )
    args = parser.parse_args(argv)
    checkpoints = args.checkpoints or sorted(WEIGHTS_DIR.glob("*.pt"))
    failed = False
    for checkpoint in checkpoints:
        try:
            if args.check:
                found = graph_agreement(checkpoint)
                misses = [f"{p}: {m}" for p, a in found.items() for m in a.misses()]
                failed |= bool(misses)
                shown = "; ".join(str(a) for a in found.values())
                verdict = "STALE (" + "; ".join(misses) + ")" if misses else "ok"
                print(f"{checkpoint}: {shown}: {verdict}")
            else:
                for path in export(checkpoint):
                    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        except (CheckpointError, OSError) as exc:
            print(f"export_onnx: {exc}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
