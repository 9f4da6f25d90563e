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
