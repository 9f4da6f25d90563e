"""Players of YINSH and the applications that use them.

Every agent is named by a spec string, ``name`` or ``name:key=value,...``
(``random``, ``greedy``, ``alphabeta:depth=3``, ``mcts:sims=800``,
``net:path=runs/quick``); :func:`make_agent` builds one from its spec.

The core, here: :mod:`agents.base` (the :class:`Agent` interface, ``random``),
:mod:`agents.spec` (spec strings, the registry of names), :mod:`agents.params`
(each parameter with its default and bound, ``MAX_SEED``), :mod:`agents.byo`
(your own player: an :class:`Agent`, anything with ``act(state)``, or an
observation callable, named by ``py:MODULE:CALLABLE``) and :mod:`agents.league`
(opponent pools and curricula built from specs).

The players, a folder each:

* :mod:`agents.baselines`: ``greedy``, ``alphabeta``, ``mcts`` and OpenSpiel's MCTS;
* :mod:`agents.search`: the tree search core the searching players share;
* :mod:`agents.network`: the network players (``net``, the shipped ``pretrained``);
* :mod:`agents.learned`: policies learned with SB3, RLlib or the project's own PPO.

The applications, a folder each:

* :mod:`agents.evaluation`: matches, the arena (``yinsh-eval``), ratings, SPRT;
* :mod:`agents.play`: ``yinsh-play`` and the terminal; :mod:`agents.web`: the browser app;
* :mod:`agents.review`: a whole game reviewed by an agent (``yinsh-review``);
* :mod:`agents.protocol`: the engine protocol (``yinsh-engine``, ``engine:cmd=``);
* :mod:`agents.infra`: what the command lines share (argument types, workers, Ray).

>>> from agents import make_agent
>>> from yinsh_env import new_game
>>> agent = make_agent("greedy", seed=0)
>>> state = new_game()
>>> agent.act(state) in state.legal_actions()
True
"""

from agents.base import Agent, AgentFailure, RandomAgent
from agents.baselines.alphabeta import AlphaBetaAgent
from agents.baselines.greedy import GreedyAgent
from agents.baselines.mcts import MCTSAgent
from agents.byo import ObservationPolicy, StatePlayer, as_agent, legal_mask, observation
from agents.spec import AgentSpecError, available_agents, make_agent, parse_spec, register_agent
from yinsh_env.envs.observation import encode

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
