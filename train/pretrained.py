"""The network shipped with the package: agent spec ``pretrained[:sims=N]``.

The file ``train/weights/pretrained.pt`` is a slim checkpoint (network
weights, the training config, and ``metadata``: how it was made, on what
machine, in how much time, and how it scored), loadable by everything that
loads a checkpoint (``net:path=...`` included).  ``pretrained`` plays it with
:data:`DEFAULT_SIMS` simulations of its search, sized to take no longer per
decision than ``alphabeta:depth=3``; ``pretrained:sims=0`` plays the raw
policy; ``pretrained:time=0.1`` searches for 0.1 s of wall clock a decision
instead.  Its network runs in int8 where ONNX Runtime runs it
(``precision=auto``; ``precision=fp32`` for the float network), because int8
is the stronger of the two at equal time (the measurements and their commands:
docs/studies/speed.md; its strength: docs/guide/pretrained.md).

Making one from a run (docs/guide/pretrained.md says how the shipped one
was made)::

    python -m train.pretrained export runs/long/best.pt --command "yinsh-train ..." \\
        --cpu-hours 3.1 --notes "..."
    python -m train.pretrained info          # what the shipped file says about itself
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import torch
from pydantic import AfterValidator

from agents.cli_args import any_path, input_file, number_in, output_file
from agents.evaluation.version import machine
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

WEIGHTS_DIR = Path(__file__).with_name("weights")
WEIGHTS = WEIGHTS_DIR / "pretrained.pt"
#: Simulations per decision of ``pretrained``: about as long as alphabeta:depth=3 takes
#: (ONNX Runtime; ``python -m agents.evaluation.eval_cli pretrained random`` prints ms/move).
DEFAULT_SIMS = 256
_WEIGHTS_NAME = re.compile(r"[A-Za-z0-9][-_.A-Za-z0-9]{0,63}")


def _weights_name(text: str) -> str:
    if not _WEIGHTS_NAME.fullmatch(text):
        raise ValueError("must name a shipped network: letters, digits, '-', '_', '.'")
    return text


#: The name of a shipped network file (no folder, no suffix): ``pretrained``, ``anchor-v1``.
WeightsName = Annotated[str, AfterValidator(_weights_name)]


def shipped_weights() -> list[str]:
    """Names of the networks shipped in the package (``pretrained``, ``anchor-v1``, ...)."""
    return sorted(p.stem for p in WEIGHTS_DIR.glob("*.pt"))


def weights_path(name: str = "pretrained") -> Path:
    """A shipped network's file by name; CheckpointError when the package lacks it.

    ``pretrained`` is the current shipped network (it may be replaced by a
    better one); ``anchor-v1`` is a frozen copy, the network anchors of the
    fixed rating scale (:mod:`agents.evaluation.scale`), never retrained;
    ``long2-365`` and ``long2-557`` are the ones shipped between them (iterations
    365 and 557 of the same line), kept so that the figures measured with them replay.
    """
    path = WEIGHTS_DIR / f"{name}.pt"
    if name not in shipped_weights():
        known = ", ".join(shipped_weights()) or "none"
        raise CheckpointError(
            f"the package holds no network {name!r} (missing {path}; shipped: {known})"
        )
    return path


class PretrainedAgent(NetAgent):
    """A shipped network: :class:`train.agent.NetAgent` on :func:`weights_path`.

    ``weights`` names the file (``pretrained`` by default; the others, and why
    each is kept: :func:`weights_path`).
    """

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
        weights: WeightsName = "pretrained",
    ) -> None:
        path = str(weights_path(weights))
        super().__init__(seed, path, sims, device, threads, backend, precision, time)


def metadata(path: str | Path | None = None) -> dict[str, Any]:
    """The ``metadata`` of a slim checkpoint (default: the shipped one)."""
    file = Path(path) if path is not None else weights_path()
    return dict(read_file(file).get("metadata", {}))


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
