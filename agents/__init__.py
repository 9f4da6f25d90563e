"""Players of YINSH: one small interface, baselines and the network agent.

Every agent is named by a spec string, ``name`` or ``name:key=value,...``
(``random``, ``greedy``, ``alphabeta:depth=3``, ``mcts:sims=800``,
``net:path=runs/quick``); :func:`make_agent` builds one from its spec.
"""

from .base import Agent, AgentFailure, RandomAgent
from .spec import AgentSpecError, available_agents, make_agent, parse_spec, register_agent

__all__ = [
    "Agent",
    "AgentFailure",
    "AgentSpecError",
    "RandomAgent",
    "available_agents",
    "make_agent",
    "parse_spec",
    "register_agent",
]
