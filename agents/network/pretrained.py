"""The network shipped with the package: agent spec ``pretrained[:sims=N]``.

The file ``agents/network/weights/pretrained.pt`` is a slim checkpoint (network
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

Making one from a run, and reading what a shipped file says about itself:
:mod:`train.tools.pretrained` (docs/guide/pretrained.md says how the shipped
one was made).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from agents.params import Backend, Device, OptionalSims, Seconds, Threads, checked

from .agent import NetAgent
from .checkpoint import CheckpointError, read_file
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
    """A shipped network: :class:`agents.network.agent.NetAgent` on :func:`weights_path`.

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
