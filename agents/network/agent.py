"""The network agent: a trained checkpoint playing through the common Agent interface.

Spec ``net:path=P[,sims=N][,time=SECONDS]``: ``P`` is a checkpoint file or a
run directory (its newest complete checkpoint).  ``sims=0`` plays the raw
policy's most likely legal action; ``sims > 0`` runs the checkpoint's search
(without exploration noise) for that many simulations; ``time > 0`` searches
for that many seconds of wall clock instead, whatever the machine's load
(simulations planned from the measured rate: :mod:`agents.search.budget`).
Simulations are the default, so seeded games reproduce.

``precision``: ``auto`` (the default of every network agent, ``net`` and
``pretrained`` alike) runs the network's convolutions in int8 where ONNX
Runtime runs it (:mod:`agents.network.quantize`), float in PyTorch; int8 is
the stronger of the two at equal time (docs/studies/speed.md).
``precision=fp32`` keeps the float network, ``precision=int8`` asks for int8.

A checkpoint file needs PyTorch to be read (``pip install 'yinsh[train]'``;
without it the agent fails when it is built, saying so); the shipped networks
(``pretrained``) play without it.  A missing or corrupt checkpoint, or one
with NaN or infinite weights, fails when the agent is built
(:mod:`agents.network.checkpoint`), so the arena stops before any game.

Building the agent from a checkpoint sets torch's thread count for the process
(``threads``, default 1): evaluating one position at a time gains nothing from
more threads, and idle threads spinning on a busy machine slow it down many times.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from time import perf_counter
from typing import Final

import numpy as np

from agents.base import Agent, batch_arrays
from agents.network.checkpoint import checkpoint_iteration, import_torch, resolve_checkpoint
from agents.network.graphs import Precision
from agents.network.play_config import PlayConfig
from agents.network.search_rules import network_search, search_rules
from agents.params import Backend, Device, OptionalSims, PathText, Seconds, Threads, checked
from agents.search import (
    ActionStats,
    Analysis,
    BatchEvaluator,
    Leaf,
    Search,
    network_leaf,
    run_searches,
)
from agents.search.budget import SimulationRate
from agents.search.cache import EvaluationCache
from agents.search.tree import softmax
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import decode
from yinsh_env.util.file_hash import file_sha256

#: The share of a time budget the search plans for: the rest covers choosing
#: the move and the simulation under way when the deadline passes.
TIME_SHARE: Final = 0.95


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
        precision: Precision = "auto",
        time: Seconds = 0.0,
    ) -> None:
        super().__init__(seed)
        self.checkpoint = resolve_checkpoint(path)
        self.evaluator, config = self._load_network(device, threads, backend, precision)
        self.search_config = config.search
        #: The variant it was trained for: the arena refuses to pair it with another.
        self.rings_to_win = config.rings_to_win
        self.sims = sims
        #: Seconds a decision searches (0: ``sims`` simulations instead).
        self.time_budget = time
        #: The clock a time budget is measured on (a test may give a fake one).
        self.clock: Callable[[], float] = perf_counter
        self.rate = SimulationRate()
        #: Simulations of the last search.
        self.last_sims = 0
        #: The precision the network runs in (``auto`` resolved: int8 in ONNX Runtime).
        self.precision: str = getattr(self.evaluator, "precision", "fp32")
        #: What the search asks: the network, each position once while remembered
        #: (a position the previous decision's search reached is not evaluated again).
        self.cache = EvaluationCache(self.evaluator)
        self.np_rng = np.random.default_rng(seed)
        self._identity: str | None = None

    def _load_network(
        self, device: str, threads: int, backend: str, precision: str
    ) -> tuple[BatchEvaluator, PlayConfig]:
        """The checkpoint's network as a leaf evaluator, and its config: read with torch,
        run by ONNX Runtime on the CPU where installed (the graph exported at load), else
        by PyTorch (:func:`agents.network.onnx_inference.make_evaluator`)."""
        torch = import_torch(f"a checkpoint file ({self.checkpoint})")
        from agents.network.checkpoint import load_network
        from agents.network.inference import check_device, resolve_device
        from agents.network.onnx_inference import backend_name, make_evaluator, precision_name

        check_device(device)
        model, config, _ = load_network(self.checkpoint)
        torch.set_num_threads(threads)
        evaluator = make_evaluator(
            model,
            resolve_device(device),
            backend_name(backend),
            threads=threads,
            precision=precision_name(precision),
        )
        return evaluator, config

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
            digest = file_sha256(self.checkpoint)  # in chunks, a regular file only
            parts = [f"net:sha256={digest[:16]}", f"sims={self.sims}"]
            if self.time_budget:
                parts.append(f"time={self.time_budget:g}")
            if self.precision != "fp32":
                parts.append(f"precision={self.precision}")
            self._identity = ",".join(parts)
        return self._identity

    def act(self, state: State) -> int:
        return self._choose(state, self.sims, self.time_budget)

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """:meth:`act` with ``sims`` simulations or ``time`` seconds instead of the spec's.

        The engine protocol's ``go sims=N`` and ``go time=SECONDS``; a time wins
        over simulations, as for ``mcts``.
        """
        if time is not None:
            return self._choose(state, self.sims, max(time, 1e-3))
        if sims is not None:
            return self._choose(state, max(0, sims), 0.0)
        return self.act(state)

    def act_batch(
        self,
        observations: np.ndarray,
        masks: np.ndarray,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """(n,) the actions :meth:`act` chooses in n games, from their observations.

        ``observations`` (n, 11, 11, 17) planes and ``masks`` (n, 2142), each game
        from its player's side, as the environments give them (the batched
        opponent interface, :mod:`yinsh_env.vector.batch_agents`).  The raw policy
        (``sims=0``) evaluates all n positions in one network call; with a
        search, each game is searched in turn from its decoded position.  ``rng``
        is unused: the choice is the agent's own, as in :meth:`act`.
        """
        planes, legal = batch_arrays(observations, masks)
        if not len(planes):
            return np.zeros(0, dtype=np.int64)
        if self.sims or self.time_budget:
            return np.array([self.act(decode(p)) for p in planes], dtype=np.int64)
        leaves = [Leaf(np.flatnonzero(m), 0, planes=p) for p, m in zip(planes, legal)]
        logits, _ = self.evaluator(leaves)
        return np.array(
            [leaf.actions[int(np.argmax(row))] for leaf, row in zip(leaves, logits)],
            dtype=np.int64,
        )

    def _choose(self, state: State, sims: int, seconds: float) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if sims == 0 and seconds == 0:
            logits, _ = self.cache([network_leaf(state)])
            return legal[int(np.argmax(logits[0]))]
        return self._search(state, sims, seconds).best_action()

    def _search(self, state: State, sims: int, seconds: float = 0.0) -> Search:
        """``sims`` simulations, or as many as ``seconds`` of wall clock allow."""
        if not seconds:
            search = network_search(state.copy(), self.search_config, sims, self.np_rng)
            run_searches([search], self.cache)
            self.last_sims = search.done_simulations
            return search
        start = self.clock()
        budget = seconds * TIME_SHARE
        search = Search(
            state.copy(),
            search_rules(self.search_config),
            self.rate.plan(budget),
            self.np_rng,
            deadline=start + budget,
            clock=self.clock,
        )
        run_searches([search], self.cache)
        self.last_sims = search.done_simulations
        self.rate.record(search.done_simulations, self.clock() - start)
        return search

    def analyse(self, state: State) -> Analysis:
        """The raw policy and value (``sims=0``), or the search's visits and Q per action."""
        if self.sims > 0 or self.time_budget > 0:
            return self._search(state, self.sims, self.time_budget).analysis()
        leaf = network_leaf(state)
        logits, values = self.cache([leaf])
        probs = softmax(logits[0])
        lines = tuple(ActionStats(int(a), float(p), 0, None) for a, p in zip(leaf.actions, probs))
        best = int(leaf.actions[int(np.argmax(logits[0]))])
        return Analysis(best, state.to_act, float(values[0]), 0, lines, (best,))

    def policy(self, state: State) -> dict[int, float]:
        """The raw network policy over the legal actions (for analysis and notebooks)."""
        logits, _ = self.evaluator([network_leaf(state)])
        probs = softmax(logits[0])
        return dict(zip(state.legal_actions(), probs.tolist()))

    def value(self, state: State) -> float:
        """The network's value of ``state`` for the player to act."""
        _, values = self.evaluator([network_leaf(state)])
        return float(values[0])
