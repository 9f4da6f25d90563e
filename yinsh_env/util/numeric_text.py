"""Numbers read from what a user typed, strictly: ASCII digits, as written.

Python's ``int()`` and ``float()`` are lenient in ways no setting wants:
``int("3_0")`` is 30, ``int("٣")`` is 3, ``int(" 3\\n")`` is 3 and
``float("1_0.5")`` is 10.5.  Every parser of user text (agent specs, command
line numbers, protocol commands, query strings) reads numbers through these,
so ``mcts:sims=3_0`` and ``undo ٢`` are refused rather than read as something
the user did not write.
"""

from __future__ import annotations

import re

#: Longer texts are refused before conversion (``int()`` of many digits is slow).
MAX_LENGTH = 400

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
    re.IGNORECASE,
)


def is_int_text(text: str, *, signed: bool = True) -> bool:
    """Whether ``text`` is an integer in ASCII digits (a sign first if ``signed``)."""
    if len(text) > MAX_LENGTH or _INT.fullmatch(text) is None:
        return False
    return signed or text[0] not in "+-"


def parse_int(text: str, *, signed: bool = True) -> int:
    """``text`` as an integer; ``ValueError`` unless :func:`is_int_text`."""
    if not is_int_text(text, signed=signed):
        raise ValueError(f"not an integer in ASCII digits: {text[:60]!r}")
    return int(text)


def parse_float(text: str) -> float:
    """``text`` as a float written as Python writes one (``1.5``, ``-2e3``, ``.5``).

    ``nan`` and ``inf`` are read, for callers to refuse by name; underscores,
    spaces and non-ASCII digits raise ``ValueError``.
    """
    if len(text) > MAX_LENGTH or _FLOAT.fullmatch(text) is None:
        raise ValueError(f"not a number: {text[:60]!r}")
    return float(text)
