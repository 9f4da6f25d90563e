"""The network shipped with the package: agent spec ``pretrained[:sims=N]``.

The file ``agents/network/weights/pretrained.pt`` is a slim checkpoint (network
weights, the training config, and ``metadata``: how it was made, on what
machine, in how much time, and how it scored), loadable by everything that
loads a checkpoint (``net:path=...`` included).  ``pretrained`` plays it with
:data:`DEFAULT_SIMS` simulations of its search, sized to take no longer per
decision than ``alphabeta:depth=3``; ``pretrained:sims=0`` plays the raw
policy; ``pretrained:time=0.1`` searches for 0.1 s of wall clock a decision
instead.  Its network runs in int8 where ONNX Runtime runs it
(``precision=auto``, as for every network agent; ``precision=fp32`` for the
float network), because int8 is the stronger of the two at equal time (the
measurements and their commands: docs/studies/speed.md; its strength:
docs/guide/pretrained.md).

On the CPU (``device=cpu``, the default) it plays the graphs shipped beside the
checkpoint (:mod:`agents.network.graphs`) in ONNX Runtime, so it needs no
torch; ``backend=torch``, or a GPU, loads the checkpoint with torch instead.

Making one from a run, and reading what a shipped file says about itself:
:mod:`train.tools.ship_network` (docs/guide/pretrained.md says how the shipped
one was made).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from agents.network.agent import NetAgent
from agents.network.checkpoint import CheckpointError, read_file
from agents.network.graphs import GraphEvaluator, Precision, onnxruntime_available, shipped_graphs
from agents.network.play_config import PlayConfig
from agents.params import Backend, Device, OptionalSims, Seconds, Threads, checked
from agents.search import BatchEvaluator

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

    def _load_network(
        self, device: str, threads: int, backend: str, precision: str
    ) -> tuple[BatchEvaluator, PlayConfig]:
        """The shipped graph in ONNX Runtime where the network runs there (the CPU,
        backend ``auto`` or ``onnx``): no torch; else the checkpoint, as ``net`` loads it."""
        graphs = shipped_graphs(self.checkpoint)
        if graphs is None or not _runs_shipped_graph(device, backend):
            return super()._load_network(device, threads, backend, precision)
        chosen = "int8" if precision == "auto" else precision
        return GraphEvaluator(graphs.graph(chosen), threads, chosen), graphs.play


def _runs_shipped_graph(device: str, backend: str) -> bool:
    """Whether the settings run the network in ONNX Runtime on the CPU (``auto``: a
    device is chosen by torch where it is installed)."""
    if backend == "torch" or not onnxruntime_available():
        return False
    return device == "cpu" or (device == "auto" and not _torch_installed())


def _torch_installed() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def metadata(path: str | Path | None = None) -> dict[str, Any]:
    """The ``metadata`` of a slim checkpoint (default: the shipped one, read from its
    graphs' description where shipped, so without torch)."""
    file = Path(path) if path is not None else weights_path()
    graphs = shipped_graphs(file)
    if graphs is not None:
        return graphs.metadata
    return dict(read_file(file).get("metadata", {}))
