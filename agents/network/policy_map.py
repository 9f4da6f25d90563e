"""Where each action's logit sits in the network's policy planes: numpy only, no torch.

The policy head is fully convolutional (:mod:`agents.network.network`); its
planes and the gather indices below say which plane and point give each of the
2,142 actions its logit.  They are defined here, without torch, because the
shipped ONNX graphs (:mod:`agents.network.graphs`) output the planes before the
gather and are played where torch is not installed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import numpy as np

from yinsh_env.engine.actions import MOVE_OFFSET, PASS_ACTION, RING_OFFSET, ROW_OFFSET
from yinsh_env.engine.geometry import (
    MOVE_PAIRS,
    N_POINTS,
    POINTS,
    RAY_DIRECTIONS,
    SEGMENT_DIRECTION,
    SEGMENTS,
)
from yinsh_env.envs.observation import GRID

_CELLS: Final = GRID * GRID
_MAX_DISTANCE: Final = max(
    max(abs(POINTS[b][0] - POINTS[a][0]), abs(POINTS[b][1] - POINTS[a][1])) for a, b in MOVE_PAIRS
)
# Policy plane layout.
_PLACE: Final = 0
_RING: Final = 1
_ROW: Final = 2  # three line directions
_MOVE_TO: Final = _ROW + 3  # six ray directions
_MOVE_FROM: Final = _MOVE_TO + len(RAY_DIRECTIONS)  # six directions x distance
POLICY_PLANES: Final = _MOVE_FROM + len(RAY_DIRECTIONS) * _MAX_DISTANCE


def _cell(point: int) -> int:
    """Flat (number - 1, column) cell of a point, as in the observation planes."""
    column, number = POINTS[point]
    return (number - 1) * GRID + column


def policy_gather() -> tuple[np.ndarray, np.ndarray]:
    """Indices into the flattened policy planes for every action but pass.

    ``logits[a] = flat[primary[a]] + flat[secondary[a]]``, where
    ``secondary`` points at a cell that is always zero for non-move actions.
    """
    n = PASS_ACTION
    zero = POLICY_PLANES * _CELLS  # one past the planes: a padding zero
    primary = np.empty(n, dtype=np.int64)
    secondary = np.full(n, zero, dtype=np.int64)
    for p in range(N_POINTS):
        primary[p] = _PLACE * _CELLS + _cell(p)
        primary[RING_OFFSET + p] = _RING * _CELLS + _cell(p)
    for i, (segment, direction) in enumerate(zip(SEGMENTS, SEGMENT_DIRECTION)):
        primary[ROW_OFFSET + i] = (_ROW + direction) * _CELLS + _cell(segment[0])
    for i, (a, b) in enumerate(MOVE_PAIRS):
        dc, dn = POINTS[b][0] - POINTS[a][0], POINTS[b][1] - POINTS[a][1]
        distance = max(abs(dc), abs(dn))
        direction = RAY_DIRECTIONS.index((dc // distance, dn // distance))
        plane = _MOVE_FROM + direction * _MAX_DISTANCE + distance - 1
        primary[MOVE_OFFSET + i] = plane * _CELLS + _cell(a)
        secondary[MOVE_OFFSET + i] = (_MOVE_TO + direction) * _CELLS + _cell(b)
    return primary, secondary


@lru_cache(maxsize=1)
def raw_gather() -> tuple[np.ndarray, np.ndarray]:
    """:func:`policy_gather` over all 2,142 actions, into the network's raw policy
    (:meth:`~agents.network.network.PolicyValueNet.raw_policy_value`;
    the pass logit follows the padding zero)."""
    primary, secondary = policy_gather()
    zero = POLICY_PLANES * _CELLS
    primary = np.append(primary, zero + 1)
    secondary = np.append(secondary, zero)
    primary.flags.writeable = secondary.flags.writeable = False
    return primary, secondary
