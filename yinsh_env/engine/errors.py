"""Exceptions raised on bad input.  All are ``ValueError`` subclasses."""

from __future__ import annotations

import reprlib

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def bounded_repr(value: object) -> str:
    """``repr(value)`` cut to about 60 characters: errors name their input, never echo all of it."""
    return _REPR.repr(value)


class YinshError(ValueError):
    """Base class of every error the engine raises for bad input."""


class NotationError(YinshError):
    """A malformed or unknown action or point string."""


class NotAnActionError(YinshError, TypeError):
    """A value that is no action at all: refused before the game is touched, never an illegal move.

    A float, a bool, None, several values, an index out of range
    (:func:`yinsh_env.engine.action_input.as_action`).  Both a ``ValueError`` and a
    ``TypeError``, so either ``except`` catches it.
    """


class IllegalActionError(YinshError):
    """An action that is not legal in the position it was applied to."""


class PositionError(YinshError):
    """A malformed or inconsistent position text."""


class RecordError(YinshError):
    """A malformed game record; the message names the line."""


def line_error(number: int, line: str, problem: object) -> RecordError:
    """``line N: problem: 'the line'``, the line quoted through :func:`bounded_repr`.

    A record's line can be megabytes long (a pasted file, a binary one): the
    error names it without echoing it.
    """
    return RecordError(f"line {number}: {problem}: {bounded_repr(line.strip())}")
