"""Actions as libraries hand them over, read as one plain ``int`` or refused.

A learner's action reaches the environments in many forms: a Python ``int``,
a numpy integer scalar, the 0-d array that sb3-contrib's
``MaskablePPO.predict`` returns for one observation, the one-element array or
tensor that a batched policy (RLlib's module, a torch network) returns for a
batch of one.  :func:`as_action` reads all of them by *value*, so the same
index is the same action whatever its wrapper, and refuses everything else
with :class:`~yinsh_env.engine.errors.NotAnActionError` (both a ``ValueError`` and
a ``TypeError``) naming the value: floats (``40.0`` could be a
mis-scaled output), bools (``True == 1`` by accident), ``None``, arrays of
several values or of more than one dimension, indices outside
``0..N_ACTIONS - 1``.  The environments call it before touching the game, so
a refused value changes nothing and never counts as an illegal move.

Arrays are recognised by duck typing (a ``shape`` and an ``item()``), so
torch tensors, on any device, are read without this package importing torch.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from yinsh_env.engine.actions import N_ACTIONS, str_to_action
from yinsh_env.engine.errors import NotAnActionError, bounded_repr


def as_action(action: Any, notation: bool = True) -> int:
    """``action`` as an index in ``0..N_ACTIONS - 1``, or :class:`NotAnActionError`.

    Takes Python and numpy integers, 0-d and one-element integer arrays
    (numpy, torch, anything with ``shape`` and ``item()``), and, with
    ``notation``, actions in notation (``"E5-E8"``, raising
    :class:`~yinsh_env.engine.errors.NotationError` when malformed).  Legality is
    not checked here: that is the game's business.
    """
    if type(action) is int:  # the common case, first
        index = action
    elif isinstance(action, (bool, np.bool_)):
        raise NotAnActionError(f"action {action!r} is a bool, not an action index")
    elif isinstance(action, str):
        if not notation:
            raise NotAnActionError(f"action {bounded_repr(action)} is a string, not an index")
        return str_to_action(action)
    elif action is None:
        raise NotAnActionError("action None is not an action (only a finished agent steps None)")
    elif hasattr(action, "shape") and callable(getattr(action, "item", None)):
        index = _array_item(action)
    else:
        try:
            index = operator.index(action)
        except TypeError:
            raise NotAnActionError(
                f"action {bounded_repr(action)} of type {type(action).__name__} is not an "
                "action index (an integer, or a 0-d or one-element integer array)"
            ) from None
    if not 0 <= index < N_ACTIONS:
        raise NotAnActionError(f"action index {index} is outside 0..{N_ACTIONS - 1}")
    return index


def _array_item(array: Any) -> int:
    """The integer held by a 0-d or one-element 1-d array (numpy, torch, ...)."""
    try:
        shape = tuple(int(n) for n in array.shape)
    except (TypeError, ValueError):
        shape = (-1,)
    if len(shape) > 1 or math.prod(shape) != 1:
        raise NotAnActionError(
            f"action {bounded_repr(array)} has shape {shape}: an action is one integer "
            "(a 0-d or one-element array)"
        )
    try:
        value = array.item()
    except Exception as exc:  # a foreign array type failing its own conversion
        raise NotAnActionError(f"action {bounded_repr(array)} cannot be read: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        dtype = getattr(array, "dtype", type(value).__name__)
        raise NotAnActionError(
            f"action {bounded_repr(array)} holds a {dtype} value, not an integer index"
        )
    return value
