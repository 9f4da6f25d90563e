"""Making a shipped network from a run, and reading what one says about itself.

``export`` writes a checkpoint's network as a slim checkpoint (float32
weights, the training config, and ``metadata``: how it was made, on what
machine, in how much time, and how it scored), the file the ``pretrained``
agent plays (:mod:`agents.network.pretrained`), with its ONNX graphs when
written among the shipped networks (:mod:`agents.network.export_onnx`: ``pretrained``
plays them without torch); ``info`` prints a slim file's metadata.
docs/guide/pretrained.md says how the shipped one was made::

    python -m train.tools.ship_network export runs/long/best.pt --command "yinsh-train ..." \\
        --cpu-hours 3.1 --notes "..."
    python -m train.tools.ship_network info          # what the shipped file says about itself
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

import torch

from agents.evaluation.version import machine
from agents.infra.cli_args import any_path, input_file, number_in, output_file
from agents.network.export_onnx import export as export_graphs
from agents.network.pretrained import WEIGHTS, metadata
from train.cpu_clock import CPU_KEY, TRAIN_CPU_KEY
from train.run_checkpoint import (
    CheckpointError,
    atomic_save,
    read_file,
    resolve_checkpoint,
    slim_checkpoint,
)


def export(source: str | Path, out: str | Path, info: dict[str, Any]) -> Path:
    """Write the network of checkpoint ``source`` with ``info`` as a slim checkpoint."""
    resolved = resolve_checkpoint(source)
    data = read_file(resolved)
    meta: dict[str, Any] = {
        "source": str(resolved),
        "iteration": int(data["iteration"]),
        "exported": date.today().isoformat(),
        "machine": machine(),
        "torch": str(torch.__version__),
    }
    history = data.get("history")
    if isinstance(history, dict) and CPU_KEY in history:
        # Where a run continuing from this file starts its CPU clock (train.init_weights).
        meta[TRAIN_CPU_KEY] = float(history[CPU_KEY])
    meta.update(info)
    out = Path(out)
    atomic_save(slim_checkpoint(data, meta), out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.tools.ship_network", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write a checkpoint's network as a slim file")
    ex.add_argument("checkpoint", type=any_path, help="checkpoint file or run directory")
    ex.add_argument("--out", type=output_file(), default=WEIGHTS)
    ex.add_argument("--command", dest="made_by", default="", help="the training command")
    ex.add_argument("--cpu-hours", type=number_in(0, 1e6), default=None)
    ex.add_argument("--wall-hours", type=number_in(0, 1e6), default=None)
    ex.add_argument("--notes", default="")
    ex.add_argument("--results", type=input_file, help="a JSON file of measured results to embed")
    info = sub.add_parser("info", help="print a slim checkpoint's metadata")
    info.add_argument("path", nargs="?", type=input_file, default=None)
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            extra: dict[str, Any] = {"command": args.made_by, "notes": args.notes}
            if args.cpu_hours is not None:
                extra["cpu_hours"] = args.cpu_hours
            if args.wall_hours is not None:
                extra["wall_hours"] = args.wall_hours
            if args.results is not None:
                extra["results"] = _results(args.results)
            written = export(args.checkpoint, args.out, extra)
            print(f"wrote {written}")
            if written.resolve().parent == WEIGHTS.parent.resolve():
                # A shipped network plays its ONNX graphs (agents.network.graphs).
                for path in export_graphs(written):
                    print(f"wrote {path}")
        else:
            print(json.dumps(metadata(args.path), indent=1))
    except (CheckpointError, OSError) as exc:
        print(f"train.tools.ship_network: {exc}", file=sys.stderr)
        return 2
    return 0


def _results(path: Path) -> Any:
    """The JSON value of a results file; CheckpointError naming the file, in one line."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise CheckpointError(f"--results file {path} is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, deep nesting
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise CheckpointError(f"--results file {path} is not JSON: {reason}") from None


if __name__ == "__main__":
    raise SystemExit(main())
