"""The network shipped with the package: agent spec ``pretrained[:sims=N]``.

The file ``train/weights/pretrained.pt`` is a slim checkpoint (network
weights, the training config, and ``metadata``: how it was made, on what
machine, in how much time, and how it scored), loadable by everything that
loads a checkpoint (``net:path=...`` included).  ``pretrained`` plays it with
:data:`DEFAULT_SIMS` simulations of its search, sized to take no longer per
decision than ``alphabeta:depth=3`` (about 80 ms on a 2-core machine);
``pretrained:sims=0`` plays the raw policy (under a millisecond per decision);
``pretrained:time=0.1`` searches for 0.1 s of wall clock a decision instead.
Its network runs in int8 where ONNX Runtime runs it (``precision=auto``;
``precision=fp32`` for the float network): as strong at equal simulations
(200-2-198 over 400 games against float at 64 simulations) and about 1.5x
the simulations a CPU second (``python -m benchmarks.bench_limit``).

Making one from a run (docs/guide/pretrained.md says how the shipped one
was made)::

    python -m train.pretrained export runs/long/best.pt --command "yinsh-train ..." \\
        --cpu-hours 3.1 --notes "..."
    python -m train.pretrained info          # what the shipped file says about itself
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import date
from pathlib import Path
from typing import Any

import torch

from agents.cli_args import any_path, input_file, number_in, output_file
from agents.params import Backend, Device, OptionalSims, Seconds, Threads, checked

from .agent import NetAgent
from .checkpoint import (
    CheckpointError,
    atomic_save,
    read_file,
    resolve_checkpoint,
    slim_checkpoint,
)
from .cpu_clock import CPU_KEY, TRAIN_CPU_KEY
from .onnx_inference import Precision

WEIGHTS = Path(__file__).with_name("weights") / "pretrained.pt"
#: Simulations per decision of ``pretrained``: about as long as alphabeta:depth=3 takes
#: (ONNX Runtime; ``python -m agents.eval_cli pretrained random`` prints ms/move).
DEFAULT_SIMS = 256


def weights_path() -> Path:
    """The shipped weights; CheckpointError when the package was built without them."""
    if not WEIGHTS.is_file():
        raise CheckpointError(f"the package holds no pretrained network (missing {WEIGHTS})")
    return WEIGHTS


class PretrainedAgent(NetAgent):
    """The shipped network: :class:`train.agent.NetAgent` on :func:`weights_path`."""

    @checked
    def __init__(
        self,
        seed: int | None = None,
        sims: OptionalSims = DEFAULT_SIMS,
        device: Device = "cpu",
        threads: Threads = 1,
        backend: Backend = "auto",
        precision: Precision = "auto",
        time: Seconds = 0.0,
    ) -> None:
        path = str(weights_path())
        super().__init__(seed, path, sims, device, threads, backend, precision, time)


def metadata(path: str | Path | None = None) -> dict[str, Any]:
    """The ``metadata`` of a slim checkpoint (default: the shipped one)."""
    file = Path(path) if path is not None else weights_path()
    return dict(read_file(file).get("metadata", {}))


def machine() -> str:
    """The CPU model and core count, as recorded in metadata."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


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
    parser = argparse.ArgumentParser(prog="python -m train.pretrained", description=__doc__)
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
            print(f"wrote {export(args.checkpoint, args.out, extra)}")
        else:
            print(json.dumps(metadata(args.path), indent=1))
    except (CheckpointError, OSError) as exc:
        print(f"train.pretrained: {exc}", file=sys.stderr)
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
