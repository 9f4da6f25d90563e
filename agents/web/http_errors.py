"""The web app's refusals: an HTTP status, and a short message that echoes a bounded slice.

Every refusal is a :class:`SessionError` (a ``ValueError``) carrying the status
to answer with; the server turns it into ``{"error": message}``.  A message
names what was wrong, never the whole of what a client sent: values are shown
through :func:`clip` (at most :data:`ECHO_LIMIT` characters each) and a whole
message is cut at :data:`MESSAGE_LIMIT` characters.
"""

from __future__ import annotations

import reprlib

#: Characters of a client's value an error message may quote.
ECHO_LIMIT = 80
#: Characters of an error message at most (several clipped values and the words around them).
MESSAGE_LIMIT = 400

_REPR = reprlib.Repr()
_REPR.maxstring = ECHO_LIMIT
_REPR.maxother = ECHO_LIMIT
_REPR.maxlong = ECHO_LIMIT // 2
_REPR.maxlevel = 2
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = 4


class SessionError(ValueError):
    """A request the app cannot follow; ``status`` is the HTTP status to answer with.

    ``headers`` go with the answer (a 405's ``Allow``).
    """

    def __init__(
        self, message: str, status: int = 400, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(short(message))
        self.status = status
        self.headers = dict(headers or {})


class Refused(SessionError):
    """A well-formed request for something no web client may have (HTTP 403)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 403)


def clip(value: object) -> str:
    """``repr(value)`` cut to about :data:`ECHO_LIMIT` characters, for quoting input."""
    try:
        text = _REPR.repr(value)
    except Exception:  # a value whose repr fails (an int past the digit limit, ...)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= ECHO_LIMIT else text[: ECHO_LIMIT - 3] + "..."


def short(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` cut to ``limit`` characters."""
    return message if len(message) <= limit else message[: limit - 3] + "..."
