"""Players of YINSH: one small interface, baselines and the network agent.

Every agent is named by a spec string, ``name`` or ``name:key=value,...``
(``random``, ``greedy``, ``alphabeta:depth=3``, ``mcts:sims=800``,
``net:path=runs/quick``); :func:`make_agent` builds one from its spec.
:func:`agents.evaluation.arena.run_arena` (console script ``yinsh-eval``) plays them
against each other and rates them.
"""

from .alphabeta import AlphaBetaAgent
from .base import Agent, AgentFailure, RandomAgent
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
    "RandomAgent",
    "available_agents",
    "make_agent",
    "parse_spec",
    "register_agent",
]
