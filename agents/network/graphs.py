"""The shipped networks as ONNX graphs: ``pretrained`` plays in ONNX Runtime, without torch.

Beside each shipped checkpoint ``weights/NAME.pt`` the package holds its graphs,
``NAME.fp32.onnx`` (the float network) and ``NAME.int8.onnx`` (int8 convolutions,
calibrated as :class:`~agents.network.onnx_inference.OnnxEvaluator` calibrates
them), and ``NAME.json``: what a player needs besides a graph (the network's
search settings and variant, the checkpoint's ``metadata``) and the SHA-256 of
the checkpoint they were made from.  A player takes the graphs only while that
hash is the checkpoint's, so a replaced checkpoint is never played with the old
graphs.  ``python -m agents.network.export_onnx`` makes them (it needs torch);
tests/agents/network/test_shipped_graphs.py checks that they still give the checkpoint's
policy and value.

:class:`GraphEvaluator` evaluates search leaves with an ONNX Runtime session in
numpy alone; :class:`~agents.network.onnx_inference.OnnxEvaluator`, the graph
exported from a torch network when it is loaded, answers through the same
:func:`evaluate_leaves`.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import numpy as np

from agents.network.play_config import PlayConfig, play_config
from agents.network.policy_map import raw_gather
from agents.search import Leaf
from yinsh_env.util.file_hash import file_sha256 as sha256_of_file

#: Arithmetic of the ONNX Runtime graph: float, or int8 convolutions
#: (:mod:`agents.network.quantize`); ``auto``: int8 where the network runs in ONNX
#: Runtime, else float.
Precision = Literal["auto", "fp32", "int8"]
#: The precisions a graph is shipped in.
SHIPPED_PRECISIONS: Final = ("fp32", "int8")
#: What ``NAME.json`` says it is.
FORMAT: Final = "yinsh-shipped-graphs"
VERSION: Final = 1


def precision_name(text: str) -> Precision:
    """``text`` as a :data:`Precision`; ValueError naming it otherwise."""
    if text not in ("auto", "fp32", "int8"):
        raise ValueError(f"inference precision {text!r}: expected auto, fp32 or int8")
    return text  # type: ignore[return-value]


def onnxruntime_available() -> bool:
    """Whether ONNX Runtime can be imported (a base dependency; checked all the same)."""
    try:
        return importlib.util.find_spec("onnxruntime") is not None
    except (ImportError, ValueError):
        return False


def ort_session(graph: bytes | Path, threads: int = 1) -> Any:
    """An ONNX Runtime session of ``graph`` (bytes or a file) on ``threads`` CPU threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only
    source = str(graph) if isinstance(graph, Path) else graph
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


class Timers(Protocol):
    """Where an evaluator counts its work: self-play reports the network's share of time."""

    #: Wall time inside the evaluator (batching, the network, the gather).
    seconds: float
    #: Wall time of the forward pass alone.
    forward_seconds: float
    positions: int
    batches: int


def evaluate_leaves(
    session: Any, leaves: Sequence[Leaf], timers: Timers
) -> tuple[list[np.ndarray], np.ndarray]:
    """Each leaf's legal logits, and the values, from a graph with outputs ``raw`` and ``value``.

    One leaf's planes go in as a view; each leaf's legal logits are gathered
    from the graph's raw policy (the sums the network's own gather makes, for
    the legal actions only: :func:`agents.network.policy_map.raw_gather`).
    The time taken and the positions are added to ``timers``.
    """
    start = time.perf_counter()
    if len(leaves) == 1:
        planes = leaves[0].planes[None]  # type: ignore[index]
    else:
        planes = np.stack([leaf.planes for leaf in leaves])  # type: ignore[misc]
    forward_start = time.perf_counter()
    raw, values = session.run(None, {"planes": planes})
    forward_end = time.perf_counter()
    primary, secondary = raw_gather()
    logits = []
    for row, leaf in zip(raw, leaves):
        actions = leaf.actions
        logits.append(row[primary[actions]] + row[secondary[actions]])
    timers.forward_seconds += forward_end - forward_start
    timers.seconds += time.perf_counter() - start
    timers.positions += len(leaves)
    timers.batches += 1
    return logits, values


class GraphEvaluator:
    """Evaluates search leaves with an ONNX graph (:data:`agents.search.BatchEvaluator`).

    ``graph``: the graph's bytes or file; ``precision`` says what it holds
    (``fp32`` or ``int8``) for the agent that reports it.
    """

    def __init__(self, graph: bytes | Path, threads: int = 1, precision: str = "fp32") -> None:
        self.precision = precision
        self.threads = threads
        self.session = ort_session(graph, threads)
        self.reset_timers()

    def __call__(self, leaves: Sequence[Leaf]) -> tuple[list[np.ndarray], np.ndarray]:
        return evaluate_leaves(self.session, leaves, self)

    def reset_timers(self) -> None:
        self.seconds = self.forward_seconds = 0.0
        self.positions = self.batches = 0


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex (read in chunks; a regular file only)."""
    return sha256_of_file(path)


@dataclass(frozen=True)
class ShippedGraphs:
    """A checkpoint's exported graphs and what a player needs with them."""

    #: The checkpoint they were made from.
    checkpoint: Path
    #: ``NAME.json``: format, the checkpoint's SHA-256, config sections, metadata, graphs.
    info: dict[str, Any]

    @property
    def play(self) -> PlayConfig:
        """The network's config sections a player reads (search settings, variant)."""
        return play_config(self.info["config"])

    @property
    def metadata(self) -> dict[str, Any]:
        """The checkpoint's ``metadata`` (how it was made), as the checkpoint holds it."""
        return dict(self.info.get("metadata", {}))

    def graph(self, precision: str) -> Path:
        """The graph file of ``precision`` (``fp32`` or ``int8``)."""
        return self.checkpoint.with_name(self.info["graphs"][precision]["file"])


def graphs_path(checkpoint: Path) -> Path:
    """Where a checkpoint's graphs are described: ``NAME.json`` beside ``NAME.pt``."""
    return checkpoint.with_suffix(".json")


def shipped_graphs(checkpoint: Path) -> ShippedGraphs | None:
    """The graphs exported from ``checkpoint``, or None: none beside it, or they were
    made from another file (the checkpoint was replaced since: its hash differs)."""
    described = graphs_path(checkpoint)
    if not described.is_file():
        return None
    info = json.loads(described.read_text(encoding="utf-8"))
    if info.get("format") != FORMAT or info.get("version") != VERSION:
        return None
    if info.get("checkpoint_sha256") != file_sha256(checkpoint):
        return None
    found = ShippedGraphs(checkpoint, info)
    if not all(found.graph(p).is_file() for p in SHIPPED_PRECISIONS):
        return None
    return found
