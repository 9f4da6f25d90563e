"""The flat action space and the action notation.

Every decision of the game is one integer in ``range(N_ACTIONS)`` (2,142), in
this fixed order:

==========  =====  ==========================================================
offset      count  meaning
==========  =====  ==========================================================
0           85     place a ring on point p (``E5``)
85          1848   move a ring along ``MOVE_PAIRS[i]`` (``E5-E8``)
1933        123    remove the row ``SEGMENTS[i]`` (``xE5-E9``)
2056        85     remove the ring on point p (``xE5``)
2141        1      pass (``pass``)
==========  =====  ==========================================================

Points are ordered by column letter, then number (A2, A3, ... K10); move pairs
by origin, then destination; segments by lower end point, then direction
(column, row number, rising diagonal).

>>> from yinsh_env import N_ACTIONS, action_to_str, str_to_action
>>> N_ACTIONS
2142
>>> [str_to_action(name) for name in ("E5", "E5-E8", "xE5-E9", "xE5", "pass")]
[32, 776, 2002, 2088, 2141]
>>> action_to_str(776)
'E5-E8'
"""

from __future__ import annotations

import operator
from typing import Final

from yinsh_env.engine.errors import NotationError, bounded_repr
from yinsh_env.engine.geometry import (
    MOVE_PAIRS,
    N_MOVE_PAIRS,
    N_POINTS,
    N_SEGMENTS,
    N_SYMMETRIES,
    NAME_TO_POINT,
    POINT_NAMES,
    SEGMENTS,
    SYMMETRIES,
)

PLACE_OFFSET: Final = 0
MOVE_OFFSET: Final = PLACE_OFFSET + N_POINTS
ROW_OFFSET: Final = MOVE_OFFSET + N_MOVE_PAIRS
RING_OFFSET: Final = ROW_OFFSET + N_SEGMENTS
PASS_ACTION: Final = RING_OFFSET + N_POINTS
#: The number of actions (2,142): the size of every action space and mask.
N_ACTIONS: Final = PASS_ACTION + 1

#: (from, to) -> move action.
MOVE_ACTION: Final[dict[tuple[int, int], int]] = {
    pair: MOVE_OFFSET + i for i, pair in enumerate(MOVE_PAIRS)
}
#: frozenset of the five points -> row action.
ROW_ACTION: Final[dict[frozenset[int], int]] = {
    frozenset(seg): ROW_OFFSET + i for i, seg in enumerate(SEGMENTS)
}


def action_kind(action: int) -> str:
    """``'place'``, ``'move'``, ``'row'``, ``'ring'`` or ``'pass'``.

    >>> action_kind(str_to_action("xE5-E9"))
    'row'
    """
    if not 0 <= action < N_ACTIONS:
        raise NotationError(f"action index {action!r} is outside 0..{N_ACTIONS - 1}")
    if action < MOVE_OFFSET:
        return "place"
    if action < ROW_OFFSET:
        return "move"
    if action < RING_OFFSET:
        return "row"
    if action < PASS_ACTION:
        return "ring"
    return "pass"


def _names() -> tuple[str, ...]:
    names = list(POINT_NAMES)
    names += [f"{POINT_NAMES[a]}-{POINT_NAMES[b]}" for a, b in MOVE_PAIRS]
    names += [f"x{POINT_NAMES[s[0]]}-{POINT_NAMES[s[-1]]}" for s in SEGMENTS]
    names += [f"x{name}" for name in POINT_NAMES]
    names.append("pass")
    return tuple(names)


ACTION_NAMES: Final = _names()
_NAME_TO_ACTION: Final = {name.upper(): i for i, name in enumerate(ACTION_NAMES)}
# Row removals are also accepted with their end points in the other order.
for _seg_i, _seg in enumerate(SEGMENTS):
    _NAME_TO_ACTION.setdefault(
        f"X{POINT_NAMES[_seg[-1]]}-{POINT_NAMES[_seg[0]]}", ROW_OFFSET + _seg_i
    )


def action_to_str(action: int) -> str:
    """The notation of a flat action index.

    >>> action_to_str(0)
    'A2'
    >>> action_to_str(2141)
    'pass'
    """
    # Integers only (numpy's too, through __index__): no bool, float or string.
    if isinstance(action, bool):
        raise NotationError(f"action {action!r} is not an integer index")
    try:
        action = operator.index(action)
    except TypeError:
        raise NotationError(f"action {action!r} is not an integer index") from None
    if not 0 <= action < N_ACTIONS:
        raise NotationError(f"action index {action!r} is outside 0..{N_ACTIONS - 1}")
    return ACTION_NAMES[action]


def str_to_action(text: str) -> int:
    """The flat action index of an action in notation (any case).

    Raises :class:`NotationError` naming the input if it is malformed or names
    no action (two points not on a line, a row that is not five points long).

    >>> str_to_action("e5-e8")
    776
    >>> str_to_action("xE9-E5") == str_to_action("xE5-E9")  # a row from either end
    True
    >>> str_to_action("E5-F7")
    Traceback (most recent call last):
    ...
    yinsh_env.engine.errors.NotationError: unknown action 'E5-F7': the two points are ...
    """
    if not isinstance(text, str):
        raise NotationError(f"action {bounded_repr(text)} is not a string")
    key = text.strip().upper()
    action = _NAME_TO_ACTION.get(key)
    if action is not None:
        return action
    raise NotationError(f"unknown action {bounded_repr(text)}: {_diagnose(key)}")


def _diagnose(key: str) -> str:
    """Why a normalised action string names no action."""
    body = key[1:] if key.startswith("X") else key
    parts = body.split("-")
    if not body or len(parts) > 2 or any(p not in NAME_TO_POINT for p in parts):
        bad = [p for p in parts if p not in NAME_TO_POINT]
        what = f"{bounded_repr(bad[0])} is not a board point" if bad and bad[0] else "malformed"
        return f"{what} (expected E5, E5-E8, xE5-E9, xE5 or pass)"
    if key.startswith("X"):
        return "the two points do not bound a five-point row"
    return "the two points are not on a common line"


def parse_point(text: str) -> int:
    """Point index of a point name such as ``'e5'``; raises on unknown names.

    >>> parse_point("e5")
    32
    """
    point = NAME_TO_POINT.get(text.strip().upper()) if isinstance(text, str) else None
    if point is None:
        raise NotationError(f"unknown point {text!r} (expected A2..K10 on the board)")
    return point


def _action_symmetries() -> tuple[tuple[int, ...], ...]:
    perms = []
    for sym in SYMMETRIES:
        perm = [PLACE_OFFSET + sym[p] for p in range(N_POINTS)]
        perm += [MOVE_ACTION[(sym[a], sym[b])] for a, b in MOVE_PAIRS]
        perm += [ROW_ACTION[frozenset(sym[p] for p in seg)] for seg in SEGMENTS]
        perm += [RING_OFFSET + sym[p] for p in range(N_POINTS)]
        perm.append(PASS_ACTION)
        perms.append(tuple(perm))
    return tuple(perms)


#: ``ACTION_SYMMETRIES[k][a]``: the image of action a under board symmetry k.
ACTION_SYMMETRIES: Final = _action_symmetries()
assert len(ACTION_SYMMETRIES) == N_SYMMETRIES
