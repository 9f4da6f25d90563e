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

:func:`graph_differences` measures how far each shipped graph's policy and
value are from what the checkpoint gives now; ``--check`` fails beyond
:data:`TOLERANCE` (tests/agents/test_shipped_graphs.py runs it too).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
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

#: Largest difference allowed between a shipped graph's outputs (policy logits,
#: values) and the checkpoint's now, by precision.  Float: the exporter's rounding.
#: Int8: against an int8 graph made now, so another ONNX Runtime's quantiser may
#: round a few weights otherwise; a stale graph (other weights) misses by logits.
TOLERANCE: Final = {"fp32": 1e-4, "int8": 0.05}
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


def positions(count: int = 48, seed: int = 0) -> list[Leaf]:
    """Leaves of ``count`` positions from seeded random games (placing rings, moves, rows)."""
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


def graph_differences(checkpoint: Path, count: int = 48) -> dict[str, float]:
    """The largest difference, by precision, between the shipped graph's logits and
    values and those of the graph made from ``checkpoint`` now, over ``count`` positions.

    CheckpointError when no graphs are shipped for it, or they were made from
    another file (:func:`agents.network.graphs.shipped_graphs`).
    """
    from .graphs import shipped_graphs

    if not checkpoint.is_file():
        raise CheckpointError(f"checkpoint file {checkpoint} does not exist")
    shipped = shipped_graphs(checkpoint)
    if shipped is None:
        raise CheckpointError(
            f"{checkpoint}: no graphs made from it beside it "
            "(python -m agents.network.export_onnx writes them)"
        )
    now, _, _ = make_graphs(checkpoint)
    leaves = positions(count)
    found = {}
    for precision in SHIPPED_PRECISIONS:
        a_logits, a_values = GraphEvaluator(shipped.graph(precision))(leaves)
        b_logits, b_values = GraphEvaluator(now[precision])(leaves)
        logits = max(float(np.abs(a - b).max()) for a, b in zip(a_logits, b_logits))
        found[precision] = max(logits, float(np.abs(a_values - b_values).max()))
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
                found = graph_differences(checkpoint)
                stale = [p for p, d in found.items() if d > TOLERANCE[p]]
                failed |= bool(stale)
                shown = ", ".join(f"{p} {d:.2g}" for p, d in found.items())
                print(f"{checkpoint}: largest difference {shown}", "STALE" if stale else "ok")
            else:
                for path in export(checkpoint):
                    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        except (CheckpointError, OSError) as exc:
            print(f"export_onnx: {exc}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
