"""YINSH for reinforcement learning: the rules engine and its environments.

The engine (:class:`State`, :mod:`yinsh_env.engine.state`) knows the complete standard
rules; the PettingZoo environment (``env``/``raw_env``, :mod:`yinsh_env.envs.aec_env`)
and the Gymnasium wrapper (:mod:`yinsh_env.envs.gym_env`) sit on top of it.

:class:`State` at a glance:

* whose decision and what kind: ``to_act`` (a :class:`Player`), ``phase`` (a
  :class:`Phase`: place, move, row, ring, over), ``mover`` (whose move is being
  resolved), ``removed``, ``pool``, ``passes``;
* choices: ``legal_actions()`` (sorted, cached), ``legal_mask()`` (``int8``
  over the 2,142 actions of :mod:`yinsh_env.engine.actions`), ``legal_action_names()``
  (notation), ``ring_moves(player)`` (mobility, for evaluations);
* playing: ``apply(a)`` and ``push(a or "E5-E8")`` check the action (an illegal
  one raises :class:`IllegalActionError` naming the action and the position, and
  changes nothing); ``apply_unchecked``, ``pop`` (undo) and ``copy`` serve search;
* the end: ``is_terminal``, ``outcome()`` (``Outcome(termination, winner)``),
  ``winner``, ``result`` (``'W'``/``'B'``/``'draw'``/``'*'``), ``end_reason``,
  ``returns()`` (+1 / -1 per player);
* identity: ``zobrist()`` (64-bit hash), ``key()`` and ``==`` (exact),
  ``to_text()`` / ``State.from_text()`` (the position text,
  :mod:`yinsh_env.engine.position_text`).

Around it: notation (:mod:`yinsh_env.engine.actions`), names for players and results
(:mod:`yinsh_env.engine.vocabulary`), observation planes (:mod:`yinsh_env.envs.observation`),
game records (:mod:`yinsh_env.records.formats`), pictures (:mod:`yinsh_env.render`) and
the OpenSpiel game (:mod:`yinsh_env.envs.openspiel`, optional).

>>> import yinsh_env
>>> state = yinsh_env.new_game()
>>> state.push("E5")
>>> state.legal_action_names()[:3]
['A2', 'A3', 'A4']
>>> state.to_text()
'4/7/8/9/4R5/9/10/9/8/7/4 b place - 0-0 51 0 3'
"""

from __future__ import annotations

from typing import Any

from yinsh_env.engine.actions import (
    ACTION_NAMES,
    ACTION_SYMMETRIES,
    MOVE_OFFSET,
    N_ACTIONS,
    PASS_ACTION,
    PLACE_OFFSET,
    RING_OFFSET,
    ROW_OFFSET,
    action_kind,
    action_to_str,
    parse_point,
    str_to_action,
)
from yinsh_env.engine.errors import (
    IllegalActionError,
    NotAnActionError,
    NotationError,
    PositionError,
    RecordError,
    YinshError,
)
from yinsh_env.engine.geometry import N_POINTS, N_SYMMETRIES, POINT_NAMES, SYMMETRIES
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import (
    DEFAULT_RINGS_TO_WIN,
    Outcome,
    Phase,
    Player,
    Result,
    Termination,
)
from yinsh_env.records.bga import read_bga_json
from yinsh_env.records.formats import RecordFormat, load_record, register_format, save_record
from yinsh_env.records.game_record import GameRecord
from yinsh_env.records.record_text import read_record, write_record
from yinsh_env.records.sgf import read_sgf, write_sgf

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES",
    "ACTION_SYMMETRIES",
    "DEFAULT_RINGS_TO_WIN",
    "GameRecord",
    "IllegalActionError",
    "MOVE_OFFSET",
    "N_ACTIONS",
    "N_POINTS",
    "N_SYMMETRIES",
    "NotAnActionError",
    "NotationError",
    "Outcome",
    "PASS_ACTION",
    "PLACE_OFFSET",
    "Phase",
    "Player",
    "POINT_NAMES",
    "PositionError",
    "RING_OFFSET",
    "ROW_OFFSET",
    "RecordError",
    "RecordFormat",
    "Result",
    "SYMMETRIES",
    "State",
    "Termination",
    "YinshError",
    "YinshGymEnv",
    "action_kind",
    "action_to_str",
    "env",
    "load_record",
    "new_game",
    "parse_point",
    "raw_env",
    "read_bga_json",
    "read_record",
    "read_sgf",
    "register_format",
    "save_record",
    "str_to_action",
    "write_record",
    "write_sgf",
]


def new_game(rings_to_win: int = DEFAULT_RINGS_TO_WIN) -> State:
    """A new game at the start of ring placement (``rings_to_win=1`` is Blitz).

    >>> new_game(rings_to_win=1)
    State('4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0 1')
    """
    return State(rings_to_win=rings_to_win)


def __getattr__(name: str) -> Any:
    # The environments import PettingZoo and Gymnasium; load them only when asked
    # so that engine-only users (search, protocol engines) start fast.
    if name in ("env", "raw_env"):
        from yinsh_env.envs import aec_env

        return getattr(aec_env, name)
    if name == "YinshGymEnv":
        from yinsh_env.envs.gym_env import YinshGymEnv

        return YinshGymEnv
    raise AttributeError(f"module 'yinsh_env' has no attribute {name!r}")
