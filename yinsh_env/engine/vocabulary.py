"""The engine's names for players, phases and how a game ends, and its counts.

In the spirit of python-chess's ``Color``, ``Termination`` and ``Outcome``:
code says ``Player.WHITE``, ``Phase.ROW``, ``Termination.POOL``; notation
strings (``'W'``, ``'w'``, ``'draw'``, ``'rings'``) appear only where text
meets the outside world (position text, records, the protocol), through
``.letter``, ``.text``, ``str()`` and the ``from_*`` constructors here.

``Player`` and ``Phase`` are ``IntEnum``\\ s, so they index the engine's
per-player lists and compare equal to the plain ints the hot paths keep
(``state.to_act == Player.WHITE``).  ``Result`` and ``Termination`` are
string enums equal to their notation (``state.result == 'W'``), so records and
older code that compare strings keep working.

>>> from yinsh_env import Phase, Player, Result
>>> Player.WHITE.other, Player.BLACK.letter, Player.BLACK.label
(<Player.BLACK: 1>, 'B', 'Black')
>>> Phase.from_text("row"), Phase.RING.text
(<Phase.ROW: 2>, 'ring')
>>> Result.win_for(Player.BLACK) == "B", str(Result.DRAW)
(True, 'draw')
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Final

__all__ = [
    "DEFAULT_RINGS_TO_WIN",
    "RINGS_PER_PLAYER",
    "TOTAL_MARKERS",
    "Outcome",
    "Phase",
    "Player",
    "Result",
    "Termination",
]

#: The game's equipment: five rings each and a common pool of 51 markers.
RINGS_PER_PLAYER: Final = 5
TOTAL_MARKERS: Final = 51
#: Rings to remove for a win in a standard game (1 in Blitz).
DEFAULT_RINGS_TO_WIN: Final = 3


class Player(IntEnum):
    """A side: White (``player_0``, places first) or Black."""

    WHITE = 0
    BLACK = 1

    @property
    def other(self) -> Player:
        """The opponent."""
        return Player.BLACK if self is Player.WHITE else Player.WHITE

    @property
    def letter(self) -> str:
        """``'W'`` or ``'B'`` (records, results, the protocol; lower case in position text)."""
        return "WB"[self]

    @property
    def label(self) -> str:
        """``'White'`` or ``'Black'``, for messages."""
        return "White" if self is Player.WHITE else "Black"

    @classmethod
    def from_letter(cls, letter: str) -> Player:
        """The player named by ``'W'``/``'B'`` (either case); ValueError otherwise."""
        key = letter.upper() if isinstance(letter, str) else letter
        if key == "W":
            return cls.WHITE
        if key == "B":
            return cls.BLACK
        raise ValueError(f"not a player letter: {letter!r} (expected W or B)")


class Phase(IntEnum):
    """What the player to act decides: see :mod:`yinsh_env.engine.state` for the turn structure."""

    PLACE = 0
    MOVE = 1
    ROW = 2
    RING = 3
    OVER = 4

    @property
    def text(self) -> str:
        """The phase in position text: ``place``, ``move``, ``row``, ``ring`` or ``over``."""
        return self.name.lower()

    @classmethod
    def from_text(cls, text: str) -> Phase:
        """The phase named ``text`` (``'move'``); ValueError otherwise."""
        for phase in cls:
            if phase.text == text:
                return phase
        raise ValueError(f"unknown phase {text!r} (one of {', '.join(p.text for p in cls)})")


class _TextEnum(str, Enum):
    """A string enum whose ``str()`` and format are its notation (like 3.11's StrEnum)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Termination(_TextEnum):
    """Why a game ended; the first three are endings by the rules."""

    RINGS = "rings"  # a player removed the winning ring
    POOL = "pool"  # the marker pool ran out
    PASSES = "passes"  # two passes in succession
    RESIGN = "resign"
    TIMEOUT = "timeout"
    FORFEIT = "forfeit"  # an illegal action, a crash, an engine failure
    AGREEMENT = "agreement"  # a draw agreed
    ADJUDICATION = "adjudication"
    UNFINISHED = "unfinished"

    @property
    def by_rules(self) -> bool:
        """Whether the rules ended the game (the final position shows it)."""
        return self in _RULE_ENDINGS

    @property
    def results(self) -> tuple[Result, ...]:
        """The results a game ended this way may have."""
        return _RESULTS_BY_TERMINATION[self]


class Result(_TextEnum):
    """A game's result in record notation: ``W``, ``B``, ``draw`` or ``*``."""

    WHITE_WINS = "W"
    BLACK_WINS = "B"
    DRAW = "draw"
    UNFINISHED = "*"

    @property
    def winner(self) -> Player | None:
        """The winning player, or None for a draw or an unfinished game."""
        if self is Result.WHITE_WINS:
            return Player.WHITE
        if self is Result.BLACK_WINS:
            return Player.BLACK
        return None

    @property
    def white_value(self) -> float | None:
        """The result from White's side: +1, -1, 0 for a draw, None while unfinished."""
        if self is Result.UNFINISHED:
            return None
        winner = self.winner
        return 0.0 if winner is None else (1.0 if winner == Player.WHITE else -1.0)

    @classmethod
    def win_for(cls, winner: Player | int | None) -> Result:
        """The result of a game won by ``winner`` (None: a draw)."""
        if winner is None:
            return cls.DRAW
        return cls.WHITE_WINS if winner == Player.WHITE else cls.BLACK_WINS


_RULE_ENDINGS = frozenset({Termination.RINGS, Termination.POOL, Termination.PASSES})
_DECISIVE = (Result.WHITE_WINS, Result.BLACK_WINS)
_RESULTS_BY_TERMINATION: dict[Termination, tuple[Result, ...]] = {
    Termination.RINGS: _DECISIVE,
    Termination.POOL: (*_DECISIVE, Result.DRAW),
    Termination.PASSES: (*_DECISIVE, Result.DRAW),
    Termination.RESIGN: _DECISIVE,
    Termination.TIMEOUT: _DECISIVE,
    Termination.FORFEIT: _DECISIVE,
    Termination.AGREEMENT: (Result.DRAW,),
    Termination.ADJUDICATION: (*_DECISIVE, Result.DRAW),
    Termination.UNFINISHED: (Result.UNFINISHED,),
}


@dataclass(frozen=True)
class Outcome:
    """How a game ended: why, and who won (None: a draw), as in python-chess."""

    termination: Termination
    winner: Player | None

    @property
    def result(self) -> Result:
        if self.termination is Termination.UNFINISHED:
            return Result.UNFINISHED
        return Result.win_for(self.winner)

    def returns(self) -> tuple[float, float]:
        """(White's, Black's) reward: +1 win, -1 loss, 0 draw."""
        if self.winner is None:
            return (0.0, 0.0)
        return (1.0, -1.0) if self.winner == Player.WHITE else (-1.0, 1.0)
