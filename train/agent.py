"""The network agent: a trained checkpoint playing through the common Agent interface.

Spec ``net:path=P[,sims=N]``: ``P`` is a checkpoint file or a run directory
(its newest complete checkpoint).  ``sims=0`` plays the raw policy's most
likely legal action; ``sims > 0`` runs the checkpoint's search (without
exploration noise) for that many simulations.  A missing or corrupt
checkpoint, or one with NaN or infinite weights, fails when the agent is
built (:mod:`train.checkpoint`), so the arena stops before any game.

Building the agent sets torch's thread count for the process (``threads``,
default 1): evaluating one position at a time gains nothing from more
threads, and idle threads spinning on a busy machine slow it down many times.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch

from agents.base import Agent
from agents.params import Backend, Device, OptionalSims, PathText, Threads, checked
from agents.search import ActionStats, Analysis, Search, network_leaf, run_searches
from yinsh_env.state import State

from .checkpoint import checkpoint_iteration, load_model, resolve_checkpoint
from .inference import resolve_device
from .mcts import network_search
from .onnx_inference import make_evaluator
from .preflight import check_device


class NetAgent(Agent):
    """Plays with a trained network, raw (``sims=0``) or with tree search."""

    @checked
    def __init__(
        self,
        seed: int | None = None,
        path: PathText = "",
        sims: OptionalSims = 0,
        device: Device = "cpu",
        threads: Threads = 1,
        backend: Backend = "auto",
    ) -> None:
        super().__init__(seed)
        check_device(device)
        self.checkpoint = resolve_checkpoint(path)
        model, config, _ = load_model(self.checkpoint)
        self.search_config = config.search
        #: The variant it was trained for: the arena refuses to pair it with another.
        self.rings_to_win = config.selfplay.rings_to_win
        self.sims = sims
        torch.set_num_threads(threads)
        self.evaluator = make_evaluator(model, resolve_device(device), backend, threads=threads)
        self.np_rng = np.random.default_rng(seed)
        self._identity: str | None = None

    @property
    def iteration(self) -> int | None:
        """The training iteration of the checkpoint, when named like one."""
        try:
            return checkpoint_iteration(Path(self.checkpoint))
        except ValueError:
            return None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self.np_rng = np.random.default_rng(seed)

    def files(self) -> list[str]:
        return [str(self.checkpoint)]

    def identity(self) -> str:
        """``net:sha256=<first 16 hex of the weights file>,sims=N``: any path, one player.

        A time budget or a lower precision (when set) is part of it: they change the moves.
        """
        if self._identity is None:
            digest = hashlib.sha256(Path(self.checkpoint).read_bytes()).hexdigest()
            parts = [f"net:sha256={digest[:16]}", f"sims={self.sims}"]
            time_budget = getattr(self, "time_budget", 0.0)
            if time_budget:
                parts.append(f"time={time_budget:g}")
            precision = getattr(self, "precision", "fp32")
            if precision != "fp32":
                parts.append(f"precision={precision}")
            self._identity = ",".join(parts)
        return self._identity

    def act(self, state: State) -> int:
        return self._choose(state, self.sims)

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """:meth:`act` with ``sims`` simulations instead of the spec's (``go sims=N``).

        A time budget is not honoured: a search's cost is its simulations.
        """
        return self._choose(state, self.sims if sims is None else max(0, sims))

    def _choose(self, state: State, sims: int) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if sims == 0:
            logits, _ = self.evaluator([network_leaf(state)])
            return legal[int(np.argmax(logits[0]))]
        return self._search(state, sims).best_action()

    def _search(self, state: State, sims: int) -> Search:
        search = network_search(state.copy(), self.search_config, sims, self.np_rng)
        run_searches([search], self.evaluator)
        return search

    def analyse(self, state: State) -> Analysis:
        """The raw policy and value (``sims=0``), or the search's visits and Q per action."""
        if self.sims > 0:
            return self._search(state, self.sims).analysis()
        leaf = network_leaf(state)
        logits, values = self.evaluator([leaf])
        probs = torch.softmax(torch.from_numpy(logits[0]), 0).numpy()
        lines = tuple(ActionStats(int(a), float(p), 0, None) for a, p in zip(leaf.actions, probs))
        best = int(leaf.actions[int(np.argmax(logits[0]))])
        return Analysis(best, state.to_act, float(values[0]), 0, lines, (best,))

    def policy(self, state: State) -> dict[int, float]:
        """The raw network policy over the legal actions (for analysis and notebooks)."""
        logits, _ = self.evaluator([network_leaf(state)])
        probs = torch.softmax(torch.from_numpy(logits[0]), 0).numpy()
        return dict(zip(state.legal_actions(), probs.tolist()))

    def value(self, state: State) -> float:
        """The network's value of ``state`` for the player to act."""
        _, values = self.evaluator([network_leaf(state)])
        return float(values[0])
