"""Many YINSH games stepped at once: a batched engine and vector environments.

* :mod:`yinsh_env.vector.tables`: geometric tables (rays, segments, move paths), built at import;
* :mod:`yinsh_env.vector.batch_state`: :class:`BatchState`, N games as arrays with a batch axis;
* :mod:`yinsh_env.vector.legal`, :mod:`yinsh_env.vector.step`: the rules over a batch
  (legal masks, one decision);
* :mod:`yinsh_env.vector.observe`: the scalar environment's observation planes, for a batch;
* :mod:`yinsh_env.vector.batch_agents`: the batched agent interface (``act_batch``) and adapters;
* :mod:`yinsh_env.vector.env`: :class:`YinshVectorEnv`, Gymnasium's ``VectorEnv`` (``Yinsh-v0``'s
  ``vector_entry_point``), its dense rewards those of :mod:`yinsh_env.envs.env_base`;
* :mod:`yinsh_env.vector.sb3`: a Stable-Baselines3 ``VecEnv`` over it (imports SB3).

The encodings (actions, observation planes, masks) are the scalar engine's
and environment's; the differential tests hold the two to the same games ply
by ply.

>>> import numpy as np
>>> from yinsh_env import State, str_to_action
>>> from yinsh_env.vector import apply, from_states, to_state
>>> batch = from_states([State(), State().apply_all(["E5"])])
>>> apply(batch, np.array([0, 1]), np.array([str_to_action("E5"), str_to_action("F6")]))
>>> [to_state(batch, game).to_text() for game in (0, 1)]
['4/7/8/9/4R5/9/10/9/8/7/4 b place - 0-0 51 0 3', '4/7/8/9/4R5/4r4/10/9/8/7/4 w place - 0-0 51 0 3']
"""

from __future__ import annotations

from typing import Any

from yinsh_env.vector.batch_state import BatchState, from_states, new_batch, reset_games, to_state
from yinsh_env.vector.legal import move_destinations
from yinsh_env.vector.observe import decode
from yinsh_env.vector.step import apply, outcome
from yinsh_env.vector.tables import (
    MARKER_CODE,
    OVER,
    RING,
    RING_CODE,
    SEGMENT_POINTS_T,
)

#: The batched engine's public API: what a batched player (``agents.baselines.greedy_batch``)
#: or a user's own evaluator may rely on; the other names of the modules below are internal.
__all__ = [
    "MARKER_CODE",
    "OVER",
    "RING",
    "RING_CODE",
    "SEGMENT_POINTS_T",
    "BatchState",
    "YinshVectorEnv",
    "apply",
    "decode",
    "from_states",
    "move_destinations",
    "new_batch",
    "outcome",
    "reset_games",
    "to_state",
]


def __getattr__(name: str) -> Any:
    # The environment imports Gymnasium and PettingZoo: loaded only when asked for.
    if name == "YinshVectorEnv":
        from yinsh_env.vector.env import YinshVectorEnv

        return YinshVectorEnv
    raise AttributeError(f"module 'yinsh_env.vector' has no attribute {name!r}")
