"""Players of YINSH: one small interface, baselines and the network agent.

Every agent is named by a spec string, ``name`` or ``name:key=value,...``
(``random``, ``greedy``, ``alphabeta:depth=3``, ``mcts:sims=800``,
``net:path=runs/quick``); :func:`make_agent` builds one from its spec.
:func:`agents.evaluation.arena.run_arena` (console script ``yinsh-eval``)
plays them against each other and rates them on the fixed scale
(:mod:`agents.evaluation`).

Your own player (:mod:`agents.byo`): an :class:`Agent` subclass, anything
with ``act(state)`` (:class:`StatePlayer`), or an observation callable
(:class:`ObservationPolicy`, fed :func:`observation`, built from
:func:`encode` and :func:`legal_mask`), named by ``py:MODULE:CALLABLE`` specs
or a ``yinsh.agents`` entry point.

Modules (sub-packages: :mod:`agents.evaluation` matches and ratings,
:mod:`agents.search` the tree search, :mod:`agents.network` the network
players, :mod:`agents.libraries` the SB3/RLlib players, :mod:`agents.review`
game review, :mod:`agents.web` the browser app):

* :mod:`agents.base`: the :class:`Agent` interface, ``random``;
* :mod:`agents.spec`: spec strings and the registry of agent names;
* :mod:`agents.params`: agent parameters, each with its default and constraint;
* :mod:`agents.byo`: bring your own agent (``py:`` specs, entry points);
* :mod:`agents.greedy`, :mod:`agents.alphabeta`, :mod:`agents.mcts`: the baselines,
  on the hand-made evaluation of :mod:`agents.heuristics`; :mod:`agents.greedy_batch`:
  greedy for many games at once (its ``act_batch``), on the batched engine;
* :mod:`agents.openspiel_mcts`: OpenSpiel's MCTS as an agent;
* :mod:`agents.external`: any program speaking the engine protocol (``engine:cmd=``);
* :mod:`agents.protocol`: that line protocol; :mod:`agents.engine_cli` serves an agent
  over it (``yinsh-engine``);
* :mod:`agents.play`: ``yinsh-play``; :mod:`agents.terminal`: playing in a terminal;
* :mod:`agents.league`: opponent pools and curricula from specs;
* :mod:`agents.cli_args`: the command lines' argument types, checked when parsed;
* :mod:`agents.worker_pool`: worker processes that die with their parent, and end what
  they start;
* :mod:`agents.ray_address`: which Ray to connect to, decided before ``ray.init`` can hang.
"""

from yinsh_env.observation import encode

from .alphabeta import AlphaBetaAgent
from .base import Agent, AgentFailure, RandomAgent
from .byo import ObservationPolicy, StatePlayer, as_agent, legal_mask, observation
from .greedy import GreedyAgent
from .mcts import MCTSAgent
from .spec import AgentSpecError, available_agents, make_agent, parse_spec, register_agent

__all__ = [
    "Agent",
    "AgentFailure",
    "AgentSpecError",
    "AlphaBetaAgent",
    "GreedyAgent",
    "MCTSAgent",
    "ObservationPolicy",
    "RandomAgent",
    "StatePlayer",
    "as_agent",
    "available_agents",
    "encode",
    "legal_mask",
    "make_agent",
    "observation",
    "parse_spec",
    "register_agent",
]
