"""YINSH for reinforcement learning: the rules engine and its environments.

The engine (:class:`State`) knows the complete standard rules; the PettingZoo
environment (``env``/``raw_env``) and the Gymnasium wrapper sit on top of it.
"""

from __future__ import annotations

from typing import Any

from .actions import (
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
from .bga import read_bga_json
from .errors import IllegalActionError, NotationError, PositionError, RecordError, YinshError
from .game_record import GameRecord
from .geometry import N_POINTS, N_SYMMETRIES, POINT_NAMES, SYMMETRIES
from .record_text import read_record, write_record
from .records import RecordFormat, load_record, register_format, save_record
from .sgf import read_sgf, write_sgf
from .state import BLACK, MOVE, OVER, PHASE_NAMES, PLACE, RING, ROW, WHITE, State
from .vocabulary import DEFAULT_RINGS_TO_WIN, Outcome, Phase, Player, Result, Termination

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES",
    "ACTION_SYMMETRIES",
    "BLACK",
    "DEFAULT_RINGS_TO_WIN",
    "GameRecord",
    "IllegalActionError",
    "MOVE",
    "MOVE_OFFSET",
    "N_ACTIONS",
    "N_POINTS",
    "N_SYMMETRIES",
    "NotationError",
    "OVER",
    "Outcome",
    "PASS_ACTION",
    "PHASE_NAMES",
    "PLACE",
    "PLACE_OFFSET",
    "Phase",
    "Player",
    "POINT_NAMES",
    "PositionError",
    "RING",
    "RING_OFFSET",
    "ROW",
    "ROW_OFFSET",
    "RecordError",
    "RecordFormat",
    "Result",
    "SYMMETRIES",
    "State",
    "Termination",
    "WHITE",
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
    """A new game at the start of ring placement (``rings_to_win=1`` is Blitz)."""
    return State(rings_to_win=rings_to_win)


def __getattr__(name: str) -> Any:
    # The environments import PettingZoo and Gymnasium; load them only when asked
    # so that engine-only users (search, protocol engines) start fast.
    if name in ("env", "raw_env"):
        from . import aec_env

        return getattr(aec_env, name)
    if name == "YinshGymEnv":
        from .gym_env import YinshGymEnv

        return YinshGymEnv
    raise AttributeError(f"module 'yinsh_env' has no attribute {name!r}")
