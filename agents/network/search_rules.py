"""The trainer's search: the search core (:mod:`agents.search`) configured from ``search.*``.

:func:`search_rules` is the one place where ``search.algorithm`` is read:
``gumbel`` gives :class:`~agents.search.rules.Gumbel` (Gumbel-top-k with
sequential halving at the root, the improved policy as the target), ``puct``
gives :class:`~agents.search.rules.PUCT` (Dirichlet root noise, visit counts
as the target).  Leaves are evaluated by the network in batches
(:class:`agents.network.inference.NetworkEvaluator`); values follow the core's
convention (:mod:`agents.search.tree`).
"""

from __future__ import annotations

import numpy as np

from agents.network.play_config import SearchConfig
from agents.search import PUCT, Gumbel, Node, Rules, Search
from yinsh_env.engine.state import State


def search_rules(config: SearchConfig) -> Rules:
    """The selection rules of a search config."""
    if config.algorithm == "gumbel":
        return Gumbel(
            considered=config.gumbel_considered,
            c_visit=config.gumbel_c_visit,
            c_scale=config.gumbel_c_scale,
            rescale_q=config.gumbel_rescale_q,
        )
    return PUCT(
        c_puct=config.c_puct,
        fpu_reduction=config.fpu_reduction,
        dirichlet_alpha=config.dirichlet_alpha,
        dirichlet_fraction=config.dirichlet_fraction,
        forced_playouts=config.forced_playouts,
    )


def network_search(
    state: State,
    config: SearchConfig,
    simulations: int,
    rng: np.random.Generator,
    noise: bool = False,
    root: Node | None = None,
) -> Search:
    """A search over ``state`` with the config's rules, its leaves for a network."""
    return Search(state, search_rules(config), simulations, rng, noise, root)
