"""One tree search for every agent that searches: the ``mcts`` baseline and the trainer.

* :mod:`~agents.search.tree`: the node class, the value convention (stated
  there once), per-player backup and MCTS-Solver proofs;
* :mod:`~agents.search.rules`: root and interior selection (UCT, PUCT, Gumbel
  with sequential halving), the move choice and the policy target;
* :mod:`~agents.search.core`: :class:`Search`, driven one leaf at a time so
  that many searches batch their leaves (:func:`run_searches`);
* :mod:`~agents.search.rollout`: the heuristic-scored rollout evaluator; the
  network evaluator lives in :mod:`agents.network.inference`;
* :mod:`~agents.search.visited`: Gumbel's selections over the visited edges only;
* :mod:`~agents.search.cache`: network evaluations remembered by position;
* :mod:`~agents.search.budget`: a search on a clock (simulations planned from the rate);
* :mod:`~agents.search.analysis`: :class:`Analysis`, what a search found;
* :mod:`~agents.search.stopping`: :func:`stop_when`, cancelling a running
  search from another thread (it returns its best so far).
"""

from agents.search.analysis import ActionStats, Analysis, analysis_of
from agents.search.core import BatchEvaluator, LeafMaker, Search, network_leaf, run_searches
from agents.search.rollout import RolloutEvaluator
from agents.search.rules import (
    PUCT,
    UCT,
    Gumbel,
    RootPlan,
    Rules,
    considered_visits,
    dirichlet_prior,
)
from agents.search.stopping import StopCondition, current_stop, stop_when
from agents.search.tree import UNPROVEN, Leaf, Node, advance, backup

__all__ = [
    "PUCT",
    "UCT",
    "UNPROVEN",
    "ActionStats",
    "Analysis",
    "BatchEvaluator",
    "Gumbel",
    "Leaf",
    "LeafMaker",
    "Node",
    "RolloutEvaluator",
    "RootPlan",
    "Rules",
    "Search",
    "StopCondition",
    "advance",
    "analysis_of",
    "backup",
    "considered_visits",
    "current_stop",
    "dirichlet_prior",
    "network_leaf",
    "run_searches",
    "stop_when",
]
