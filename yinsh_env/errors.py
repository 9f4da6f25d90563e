"""Exceptions raised on bad input.  All are ``ValueError`` subclasses."""

from __future__ import annotations


class YinshError(ValueError):
    """Base class of every error the engine raises for bad input."""


class NotationError(YinshError):
    """A malformed or unknown action or point string."""


class IllegalActionError(YinshError):
    """An action that is not legal in the position it was applied to."""


class PositionError(YinshError):
    """A malformed or inconsistent position text."""


class RecordError(YinshError):
    """A malformed game record; the message names the line."""
