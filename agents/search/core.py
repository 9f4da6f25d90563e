"""The search driver: one tree, one game, advanced a simulation at a time.

A :class:`Search` never calls an evaluator itself: :meth:`Search.next_leaf`
returns the position it needs evaluated and :meth:`Search.expand` takes the
answer, so a caller can advance many searches (many self-play games) and
evaluate all their leaves in one batch (:func:`run_searches`).  What the
search selects is its :class:`~agents.search.rules.Rules` (UCT, PUCT,
Gumbel); what a leaf is worth is the evaluator's business: a network
(:mod:`agents.network.inference`), rollouts scored by the heuristic
(:mod:`agents.search.rollout`), or any function with the
:data:`BatchEvaluator` signature.  Values follow the convention of
:mod:`agents.search.tree`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from agents.search.analysis import Analysis, analysis_of
from agents.search.rules import RootPlan, Rules
from agents.search.stopping import StopCondition, current_stop
from agents.search.tree import UNPROVEN, Leaf, Node, Path, backup, backup_proofs, white_value
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode

#: Builds the :class:`Leaf` of the position the search stands on (``root``: the
#: search's root); must not keep ``state``, which the search goes on to change.
LeafMaker = Callable[[State, bool], Leaf]

#: Evaluates leaves in one batch: returns, per leaf, logits over its actions
#: and the value for its player to act.
BatchEvaluator = Callable[[Sequence[Leaf]], tuple[list[np.ndarray], np.ndarray]]


def network_leaf(state: State, root: bool = False) -> Leaf:
    """A network's leaf: the observation planes of the player to act, sorted legal actions."""
    return Leaf(
        np.asarray(state.legal_actions(), dtype=np.int64),
        state.to_act,
        planes=encode(state),
        root=root,
        key=state.key(),
    )


class Search:
    """The search for one decision of one game.

    ``state`` is the game's position; the search applies actions to it while
    descending and undoes them before returning, so it is unchanged between
    calls.  ``root`` may be a subtree kept from the previous decision.  With
    ``solver`` the tree keeps MCTS-Solver proofs and stops once the root is
    proven; with ``deadline`` (a time on ``clock``, :func:`time.perf_counter` by
    default) it stops then if ``simulations`` are not done yet (a search on a
    clock plans them: :class:`~agents.search.budget.SimulationRate`).
    ``should_stop`` (by default the condition of the enclosing
    :func:`~agents.search.stopping.stop_when`) ends it early, after at least
    one simulation, with its best so far; a deadline is one more such condition.
    """

    def __init__(
        self,
        state: State,
        rules: Rules,
        simulations: int,
        rng: np.random.Generator,
        noise: bool = False,
        root: Node | None = None,
        make_leaf: LeafMaker = network_leaf,
        solver: bool = False,
        deadline: float = 0.0,
        should_stop: StopCondition | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.state = state
        self.rules = rules
        self.simulations = simulations
        self.rng = rng
        self.noise = noise
        self.root = root
        self.make_leaf = make_leaf
        self.solver = solver
        self.deadline = deadline
        self.should_stop = should_stop if should_stop is not None else current_stop()
        self.clock = clock
        self.done_simulations = 0
        self._pending: tuple[Path, Leaf] | None = None
        self._plan = RootPlan(np.zeros(0))
        if root is not None:
            self._prepare_root()

    @property
    def finished(self) -> bool:
        root = self.root
        if root is None:
            return False
        done = self.done_simulations
        if self.solver and root.proven != UNPROVEN:
            return True  # the result is known: more simulations cannot change the choice
        if done >= self.simulations:
            return True
        if done > 0 and self.should_stop is not None and self.should_stop():
            return True  # cancelled (the protocol's stop): the best so far stands
        return bool(self.deadline) and done > 0 and self.clock() >= self.deadline

    def next_leaf(self) -> Leaf | None:
        """Run simulations until one needs an evaluation; None once the search is finished.

        Simulations ending in a finished game (or, solving, a proven node) are
        backed up on the spot.
        """
        if self._pending is not None:
            raise RuntimeError("the previous leaf has not been expanded yet")
        state = self.state
        if self.root is None:
            if state.is_terminal:
                raise ValueError(f"cannot search a finished game: {state.to_text()}")
            leaf = self.make_leaf(state, True)
            self._pending = ([], leaf)
            return leaf
        while not self.finished:
            path = self._descend()
            node, i = path[-1]
            child = node.children[i]
            if child is None and state.is_terminal:
                child = node.children[i] = Node.final(state)
            if child is not None:  # finished or proven: its value is known
                backup(path, child.known_white_value())
                if self.solver:
                    backup_proofs(path)
                self._undo(len(path))
                self.done_simulations += 1
                continue
            leaf = self.make_leaf(state, False)
            self._undo(len(path))
            self._pending = (path, leaf)
            return leaf
        return None

    def expand(self, logits: np.ndarray, value: float) -> None:
        """Attach the last leaf's evaluation (logits over its actions, value for its player)."""
        if self._pending is None:
            raise RuntimeError("no leaf is waiting for an evaluation")
        path, leaf = self._pending
        self._pending = None
        child = Node.evaluated(leaf, logits, value)
        if not path:
            self.root = child
            self._prepare_root()
            return
        node, i = path[-1]
        node.children[i] = child
        backup(path, white_value(child))
        self.done_simulations += 1

    def _prepare_root(self) -> None:
        root = self.root
        assert root is not None
        if self.rules.restarts_root:
            # Sequential halving counts root visits from zero: a kept subtree keeps
            # its children (and their evaluations) but restarts the root's tallies.
            root.visits[:] = 0.0
            root.value_sum[:] = 0.0
        self._plan = self.rules.plan_root(root, self.rng, self.noise, self.simulations)

    def _descend(self) -> Path:
        """Select and apply edges from the root down to an unexpanded, final or proven child."""
        rules = self.rules
        state = self.state
        node = self.root
        assert node is not None
        path: Path = []
        i = rules.select_root(node, self._plan, self.done_simulations)
        while True:
            path.append((node, i))
            state.apply_unchecked(int(node.actions[i]))
            child = node.children[i]
            if child is None or child.terminal or child.proven != UNPROVEN:
                return path
            visits_here = float(node.visits[i])
            node = child
            i = rules.select(node, visits_here)

    def _undo(self, n: int) -> None:
        for _ in range(n):
            self.state.pop()

    # --- results -------------------------------------------------------------------

    def _root(self) -> Node:
        if self.root is None:
            raise RuntimeError("the search has not evaluated its root yet")
        return self.root

    def policy_target(self) -> np.ndarray:
        """Probabilities over ``root.actions`` to train the policy towards."""
        return self.rules.policy_target(self._root(), self._plan)

    def choose(self, temperature: float) -> int:
        """The index (into ``root.actions``) of the move to play."""
        return self.rules.choose(self._root(), self._plan, temperature, self.rng)

    def best_action(self) -> int:
        """The move to play without exploration (temperature 0)."""
        root = self._root()
        return int(root.actions[self.choose(0.0)])

    def root_value(self) -> float:
        """The searched value of the root for its player to act."""
        return self._root().mean_value()

    def analysis(self, action: int | None = None) -> Analysis:
        """What the search found: value, priors, visits and Q per action, and its move."""
        return analysis_of(
            self._root(),
            self.best_action() if action is None else action,
            self.done_simulations,
            self.root_value(),
        )


# --- batched driving -------------------------------------------------------------------


def run_searches(searches: Sequence[Search], evaluate: BatchEvaluator) -> None:
    """Run every search to completion, evaluating their leaves together each round."""
    if len(searches) == 1:  # one search (an agent's move): no batch bookkeeping
        search = searches[0]
        while (leaf := search.next_leaf()) is not None:
            logits, values = evaluate([leaf])
            search.expand(logits[0], float(values[0]))
        return
    active = list(searches)
    while active:
        leaves: list[Leaf] = []
        waiting: list[Search] = []
        for search in active:
            leaf = search.next_leaf()
            if leaf is not None:
                leaves.append(leaf)
                waiting.append(search)
        if not leaves:
            break
        logits, values = evaluate(leaves)
        for search, leaf_logits, value in zip(waiting, logits, values):
            search.expand(leaf_logits, float(value))
        active = [s for s in waiting if not s.finished]
