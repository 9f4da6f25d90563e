"""The rules of YINSH on a compact, mutable game state.

A :class:`State` is a handful of integers: one bitboard each for white rings,
black rings, white markers and black markers (see :mod:`yinsh_env.engine.geometry`),
the rings each side has removed, the markers left in the pool, whose decision it
is and in which phase.  Legal actions, apply, undo and copy work on those
integers with tables built once at import, which keeps the engine fast in pure
Python.

Turn structure (``yinsh-standard-v1``; the rule decisions: docs/guide/rules.md):

* ``place``: White, then Black, alternately place a ring until ten are down;
  Black places the tenth so White moves first.
* ``move``: the player to act moves a ring, or passes if no ring can move.
* ``row``: the player to act removes one of their five-marker rows;
  ``ring``: they then remove one of their own rings.  The mover resolves all of
  their rows first, then the opponent resolves theirs (``mover`` remembers whose
  move is being resolved), then the opponent moves.
* ``over``: the game has ended (third ring, empty pool, or two passes).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import numpy as np

from yinsh_env.engine.actions import (
    ACTION_NAMES,
    MOVE_OFFSET,
    N_ACTIONS,
    PASS_ACTION,
    PLACE_OFFSET,
    RING_OFFSET,
    ROW_OFFSET,
    action_to_str,
    str_to_action,
)
from yinsh_env.engine.errors import IllegalActionError
from yinsh_env.engine.game_end import GameEnd
from yinsh_env.engine.geometry import (
    MOVE_BETWEEN,
    MOVE_PAIRS,
    POINT_BIT,
    SEGMENT_MASK,
    bits_to_points,
    iter_points,
    points_to_bits,
)
from yinsh_env.engine.movegen import LegalMoves
from yinsh_env.engine.position_text import format_position, parse_position
from yinsh_env.engine.rows import has_row, row_actions
from yinsh_env.engine.vocabulary import (
    DEFAULT_RINGS_TO_WIN,
    RINGS_PER_PLAYER,
    TOTAL_MARKERS,
    Phase,
    Player,
)
from yinsh_env.engine.zobrist import BOARD_BYTES, EXTRA_KEYS, PIECE_KEYS
from yinsh_env.render.ansi import ansi_board
from yinsh_env.render.svg import svg_board

__all__ = [
    "DEFAULT_RINGS_TO_WIN",
    "RINGS_PER_PLAYER",
    "TOTAL_MARKERS",
    "State",
    "iter_points",
]

# Module-level names for the hot paths (an enum member's attribute lookup costs
# several times a global's); the public names are Player.WHITE, Phase.MOVE, ...
_WHITE: Final = Player.WHITE
_BLACK: Final = Player.BLACK
_PLACE: Final = Phase.PLACE
_MOVE: Final = Phase.MOVE
_ROW: Final = Phase.ROW
_RING: Final = Phase.RING
_OVER: Final = Phase.OVER
#: What apply_unchecked saves for pop: rings, markers and removed (White's,
#: Black's), pool, to_act, phase, mover, passes.
_Snapshot = tuple[int, int, int, int, int, int, int, Player, Phase, int, int]
#: The opponent of each player, by index (a tuple lookup keeps ``to_act`` a Player).
_OTHER: Final = (_BLACK, _WHITE)

# --- tables for the hot paths ------------------------------------------------

#: Per move action (minus MOVE_OFFSET): (origin bit, destination bit, between mask).
_MOVE_BITS: Final = tuple(
    (POINT_BIT[a], POINT_BIT[b], points_to_bits(between))
    for (a, b), between in zip(MOVE_PAIRS, MOVE_BETWEEN)
)


class State(GameEnd, LegalMoves):
    """A YINSH position with its rules: legal actions, apply/undo, copy, hash.

    ``State()`` is the start of a standard game; ``State(rings_to_win=1)`` is
    Blitz.  ``State.from_text(...)`` sets up any position (research use).

    >>> from yinsh_env import State
    >>> state = State()
    >>> state
    State('4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0 3')
    >>> state.to_act, state.phase
    (<Player.WHITE: 0>, <Phase.PLACE: 0>)
    >>> state.push("E5")
    >>> state.to_act
    <Player.BLACK: 1>
    >>> len(state.legal_actions())
    84
    """

    __slots__ = (
        "rings",
        "markers",
        "removed",
        "pool",
        "to_act",
        "phase",
        "mover",
        "passes",
        "rings_to_win",
        "ply",
        "_history",
    )

    def __init__(self, rings_to_win: int = DEFAULT_RINGS_TO_WIN) -> None:
        if isinstance(rings_to_win, bool) or not isinstance(rings_to_win, int):
            raise ValueError(f"rings_to_win must be an integer, got {rings_to_win!r}")
        if not 1 <= rings_to_win <= RINGS_PER_PLAYER:
            raise ValueError(f"rings_to_win must be in 1..{RINGS_PER_PLAYER}, got {rings_to_win}")
        #: Each player's rings on the board, one bitboard (a Python int) per player,
        #: indexed by :class:`Player` (``rings[Player.WHITE]``, ``rings[Player.BLACK]``); read the
        #: point indices with :meth:`ring_points` (names: ``POINT_NAMES`` in
        #: :mod:`yinsh_env.engine.geometry`).  Modify only through :meth:`apply`/:meth:`pop`.
        self.rings = [0, 0]
        #: Each player's markers on the board (markers showing that player's
        #: colour), one bitboard per player like :attr:`rings`; read them with
        #: :meth:`marker_points`.
        self.markers = [0, 0]
        #: Rings each player has removed from the board (scored), by :class:`Player`:
        #: the first to :attr:`rings_to_win` wins.
        self.removed = [0, 0]
        #: Markers left in the common pool (51 at the start; a removed row returns
        #: its five); the game ends when it is still empty once a move is resolved.
        self.pool = TOTAL_MARKERS
        #: The :class:`Player` who makes the next decision (the same player may
        #: act several times in a row while removing rows and rings).
        self.to_act: Player = _WHITE
        #: What kind of decision :attr:`to_act` makes: a :class:`Phase` (place, move,
        #: row, ring, over); the module docstring gives the turn structure.
        self.phase: Phase = _PLACE
        #: Whose move is being resolved during ``row``/``ring`` phases (a Player); -1 otherwise.
        self.mover: int = -1
        #: Consecutive passes just played (two end the game).
        self.passes = 0
        #: Rings a player must remove to win: 3 in the standard game, 1 in Blitz.
        self.rings_to_win = rings_to_win
        #: Decisions applied since the start (placements included).
        self.ply = 0
        #: Caches of the legal actions (never changed once made; copies share them):
        #: the sorted list, and one byte per action (``legal_mask``), each made
        #: only when asked for, so a mask costs no list and a list no mask.
        self._legal = None
        self._marks = None
        self._history: list[tuple[int, _Snapshot]] = []

    # --- queries ---------------------------------------------------------------

    @property
    def phase_name(self) -> str:
        """The phase as in position text (``'move'``); ``phase.text`` says the same."""
        return self.phase.text

    def pending_rows(self) -> list[int]:
        """Row actions open to the player to act (empty outside ``row``).

        >>> from yinsh_env import State, action_to_str
        >>> state = State.from_text("r2r/6r/5m2/5m3/MMMMRM4/4m4/4m5/9/8/6R/3R w move - 0-0 42 0 3")
        >>> state.push("E5-E7")  # rows for both sides: the mover removes theirs first
        >>> state.phase, [action_to_str(a) for a in state.pending_rows()]
        (<Phase.ROW: 2>, ['xE1-E5'])
        """
        return row_actions(self.markers[self.to_act]) if self.phase == _ROW else []

    def rows_of(self, player: int) -> list[int]:
        """Row actions for every five-marker segment of ``player``'s colour."""
        return row_actions(self.markers[player])

    def ring_points(self, player: int) -> list[int]:
        """Point indices of ``player``'s rings, in point order."""
        return bits_to_points(self.rings[player])

    def marker_points(self, player: int) -> list[int]:
        """Point indices of the markers showing ``player``'s colour, in point order."""
        return bits_to_points(self.markers[player])

    def piece_at(self, point: int) -> str | None:
        """``'R'``/``'r'`` white/black ring, ``'M'``/``'m'`` marker, or None.

        >>> from yinsh_env import State, parse_point
        >>> State().apply_all(["E5"]).piece_at(parse_point("E5"))
        'R'
        """
        bit = POINT_BIT[point]
        for char, board in zip("RrMm", (*self.rings, *self.markers)):
            if board & bit:
                return char
        return None

    # --- applying actions ------------------------------------------------------

    def apply(self, action: int) -> None:
        """Apply a legal action; raises :class:`IllegalActionError` otherwise.

        On error the state is unchanged and the message names the action and
        the position.

        >>> from yinsh_env import State, str_to_action
        >>> state = State()
        >>> state.apply(str_to_action("E5"))
        >>> state.apply(str_to_action("E5"))
        Traceback (most recent call last):
        ...
        yinsh_env.engine.errors.IllegalActionError: illegal action E5 (32): Black is to act ...
        >>> state.ply
        1
        """
        index = action if type(action) is int else _index_or_none(action)
        if index is None or not self.is_legal(index):
            raise IllegalActionError(self._illegal_message(action))
        self.apply_unchecked(index)

    def push(self, action: int | str) -> None:
        """Apply an action given as an index or in notation (checked).

        >>> from yinsh_env import State
        >>> state = State()
        >>> state.push("E5")
        >>> state.push(42)
        >>> state.to_text()
        '4/7/8/9/4R5/4r4/10/9/8/7/4 w place - 0-0 51 0 3'
        """
        self.apply(str_to_action(action) if isinstance(action, str) else action)

    def _illegal_message(self, action: object) -> str:
        if not _is_index(action):  # True == 1 and 3.0 == 3 would name an action
            return f"action {action!r} is not an action index (an integer 0..{N_ACTIONS - 1})"
        try:
            name = action_to_str(action)  # type: ignore[arg-type]
        except ValueError:
            return f"action {action!r} is not an action index (0..{N_ACTIONS - 1})"
        if self.phase == _OVER:
            why = "the game is over"
        else:
            why = f"{self.to_act.label} is to act in phase {self.phase.text}"
        return f"illegal action {name} ({action}): {why}; position {self.to_text()}"

    def apply_unchecked(self, action: int) -> None:
        """Apply an action known to be legal (search code); no check is made."""
        self._history.append(
            (
                action,
                (
                    self.rings[0],
                    self.rings[1],
                    self.markers[0],
                    self.markers[1],
                    self.removed[0],
                    self.removed[1],
                    self.pool,
                    self.to_act,
                    self.phase,
                    self.mover,
                    self.passes,
                ),
            )
        )
        placements, marks = self._legal, self._marks
        self._legal = self._marks = None
        self.ply += 1
        me = self.to_act
        if action < ROW_OFFSET:
            if action >= MOVE_OFFSET:
                self._move(me, action - MOVE_OFFSET)
            else:
                self._place(me, action, placements, marks)
        elif action < RING_OFFSET:
            self.markers[me] ^= SEGMENT_MASK[action - ROW_OFFSET]
            self.pool += 5
            self.phase = _RING
        elif action < PASS_ACTION:
            self._remove_ring(me, action - RING_OFFSET)
        else:
            self.passes += 1
            self.to_act = _OTHER[me]
            if self.passes >= 2:
                self.phase = _OVER

    def _place(
        self, me: int, point: int, placements: list[int] | None, marks: bytearray | None
    ) -> None:
        """Place a ring.  The legal actions before (list or marks, where known) less
        this one are the next placements: cheaper than scanning the board again."""
        self.rings[me] |= POINT_BIT[point]
        self.to_act = _OTHER[me]
        if (self.rings[0] | self.rings[1]).bit_count() + sum(self.removed) >= 2 * RINGS_PER_PLAYER:
            self.phase = _MOVE
            return
        action = PLACE_OFFSET + point
        if marks is not None and marks[action] == 1:
            rest_marks = bytearray(marks)  # the old ones may be shared: never change them
            rest_marks[action] = 0
            self._marks = rest_marks
        if placements is not None and action in placements:
            rest = placements.copy()
            rest.remove(action)
            self._legal = rest

    def _move(self, me: int, index: int) -> None:
        origin, dest, between = _MOVE_BITS[index]
        markers = self.markers
        self.rings[me] ^= origin | dest
        markers[me] |= origin
        self.pool -= 1
        self.passes = 0
        self.mover = me
        flips = between & (markers[0] | markers[1])
        opp = _OTHER[me]
        if flips:
            markers[0] ^= flips
            markers[1] ^= flips
        if has_row(markers[me]):
            self.phase = _ROW
        elif flips & markers[opp] and has_row(markers[opp]):
            self.to_act = opp
            self.phase = _ROW
        elif self.pool <= 0:
            self.to_act = opp
            self.phase = _OVER
        else:
            self.to_act = opp
            self.mover = -1

    def _remove_ring(self, me: int, point: int) -> None:
        self.rings[me] ^= POINT_BIT[point]
        self.removed[me] += 1
        if self.removed[me] >= self.rings_to_win:
            self.phase = _OVER
        elif has_row(self.markers[me]):
            self.phase = _ROW
        else:
            self._after_rows(me)

    def _after_rows(self, player: int) -> None:
        """``player`` has no rows left: hand over resolution or the move."""
        mover = self.mover
        opp = _OTHER[mover]
        if player == mover and has_row(self.markers[opp]):
            self.to_act = opp
            self.phase = _ROW
            return
        self.to_act = opp
        self.phase = _OVER if self.pool <= 0 else _MOVE
        if self.phase == _MOVE:
            self.mover = -1

    def pop(self) -> int:
        """Undo the last action applied to this object and return it.

        >>> from yinsh_env import State
        >>> state = State().apply_all(["E5", "F6"])
        >>> state.pop()
        42
        >>> state.ply
        1
        """
        if not self._history:
            raise IndexError("pop from a state with no actions to undo")
        action, snap = self._history.pop()
        (
            self.rings[0],
            self.rings[1],
            self.markers[0],
            self.markers[1],
            self.removed[0],
            self.removed[1],
            self.pool,
            self.to_act,
            self.phase,
            self.mover,
            self.passes,
        ) = snap
        self.ply -= 1
        self._legal = self._marks = None
        return action

    @property
    def actions(self) -> list[int]:
        """Actions applied to this object (since creation or copy), in order."""
        return [a for a, _ in self._history]

    def copy(self, history: bool = False) -> State:
        """An independent copy; ``history=True`` also copies the undo stack.

        >>> from yinsh_env import State
        >>> state = State()
        >>> trial = state.copy()
        >>> trial.push("E5")
        >>> state.ply, trial.ply
        (0, 1)
        """
        new = State.__new__(State)
        new.rings = self.rings[:]
        new.markers = self.markers[:]
        new.removed = self.removed[:]
        new.pool = self.pool
        new.to_act = self.to_act
        new.phase = self.phase
        new.mover = self.mover
        new.passes = self.passes
        new.rings_to_win = self.rings_to_win
        new.ply = self.ply
        new._legal = self._legal
        new._marks = self._marks
        new._history = self._history[:] if history else []
        return new

    __copy__ = copy

    def with_pieces(self, rings: list[int], markers: list[int]) -> State:
        """A copy (no history) with other ring and marker bitboards, everything
        else unchanged: for board symmetries, which move pieces but keep counts."""
        new = self.copy()
        new.rings = list(rings)
        new.markers = list(markers)
        new._legal = new._marks = None
        return new

    def __deepcopy__(self, memo: dict[int, object]) -> State:
        return self.copy(history=True)

    def __getstate__(self) -> dict[str, object]:
        return {"text": self.to_text(), "ply": self.ply, "history": self._history}

    def __setstate__(self, data: dict[str, object]) -> None:
        other = State.from_text(str(data["text"]))
        for name in (*LegalMoves.__slots__, *State.__slots__):
            setattr(self, name, getattr(other, name))
        self.ply = int(data["ply"])  # type: ignore[call-overload]
        self._history = list(data["history"])  # type: ignore[call-overload]

    # --- hashing and equality --------------------------------------------------

    def zobrist(self) -> int:
        """64-bit Zobrist hash of the position (pieces, player, phase, counts, pool).

        Transpositions share it:

        >>> from yinsh_env import State
        >>> a = State().apply_all(["E5", "F6", "G7"])
        >>> b = State().apply_all(["G7", "F6", "E5"])
        >>> a.zobrist() == b.zobrist(), a == b
        (True, True)
        """
        h = 0
        for kind, board in enumerate((*self.rings, *self.markers)):
            if board:
                tables = PIECE_KEYS[kind]
                for i, byte in enumerate(board.to_bytes(BOARD_BYTES, "little")):
                    if byte:
                        h ^= tables[i][byte]
        extra = EXTRA_KEYS
        h ^= extra[self.to_act] ^ extra[2 + self.phase] ^ extra[8 + self.mover + 1]
        h ^= extra[12 + self.passes] ^ extra[16 + self.removed[0]] ^ extra[24 + self.removed[1]]
        return h ^ extra[32 + self.rings_to_win] ^ extra[64 + self.pool]

    def key(self) -> tuple[int, ...]:
        """Everything the rules depend on, as a tuple (exact equality)."""
        return (
            self.rings[0],
            self.rings[1],
            self.markers[0],
            self.markers[1],
            self.removed[0],
            self.removed[1],
            self.pool,
            self.to_act,
            self.phase,
            self.mover,
            self.passes,
            self.rings_to_win,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    # --- text form -------------------------------------------------------------

    def to_text(self) -> str:
        """Exact text form of the position, read back by :meth:`from_text`.

        Eight space-separated fields, e.g. the start position
        ``4/7/8/9/10/9/10/9/8/7/4 w place - 0-0 51 0 3``:

        1. the board, columns A..K separated by ``/``, each from its lowest
           number up: ``R``/``r`` white/black ring, ``M``/``m`` white/black
           marker, a digit run for consecutive empty points;
        2. the player to act, ``w`` or ``b``;
        3. the phase: ``place``, ``move``, ``row``, ``ring`` or ``over``;
        4. whose move is being resolved (``w``/``b``) in ``row``/``ring``, else ``-``;
        5. rings removed, white-black (``1-0``);
        6. markers left in the pool;
        7. consecutive passes just played;
        8. rings to remove for a win (3 standard, 1 Blitz).

        >>> from yinsh_env import State
        >>> State().apply_all(["E5", "F6"]).to_text()
        '4/7/8/9/4R5/4r4/10/9/8/7/4 w place - 0-0 51 0 3'
        """
        return format_position(self)

    @classmethod
    def from_text(cls, text: str) -> State:
        """Set up a position from :meth:`to_text`'s form (research use).

        Raises :class:`PositionError` naming the problem when the text is
        malformed or describes a position the rules cannot reach a decision in.

        >>> from yinsh_env import State
        >>> state = State.from_text("r2r/6r/5m2/5m3/MMMMRM4/4m4/4m5/9/8/6R/3R w move - 0-0 42 0 3")
        >>> print(state)
        11                    .  .  .  R
        10              .  .  .  .  .  .  R
         9           .  .  .  .  .  .  .  .
         8        .  .  .  .  .  .  .  .  .
         7     r  .  .  .  .  .  .  .  .  .
         6     .  m  m  M  m  m  .  .  .
         5  r  .  .  .  R  .  .  .  .  .
         4  .  .  .  .  M  .  .  .  .
         3  .  .  .  .  M  .  .  .
         2  r  .  .  .  M  .  .
         1     .  .  .  M
            A  B  C  D  E  F  G  H  I  J  K
        White to move | rings removed W0-B0 of 3 | pool 42
        """
        return parse_position(text, cls)

    def __repr__(self) -> str:
        return f"State({self.to_text()!r})"

    def __str__(self) -> str:
        return ansi_board(self, color=False)

    def _repr_svg_(self) -> str:
        return svg_board(self)

    def legal_action_names(self) -> list[str]:
        """The legal actions in notation (``'E5-E8'``), in the order of :meth:`legal_actions`.

        >>> from yinsh_env import State
        >>> State().legal_action_names()[:3]
        ['A2', 'A3', 'A4']
        """
        return [ACTION_NAMES[a] for a in self.legal_actions()]

    def apply_all(self, actions: Iterable[int | str]) -> State:
        """Apply a sequence of actions (indices or notation); returns self.

        >>> from yinsh_env import State
        >>> State().apply_all(["E5", "F6"]).ply
        2
        """
        for action in actions:
            self.push(action)
        return self


def _is_index(action: object) -> bool:
    """Whether ``action`` has an integer type (numpy's included) other than bool."""
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


def _index_or_none(action: object) -> int | None:
    """``action`` as a plain int if it has an integer type other than bool, else None."""
    return int(action) if _is_index(action) else None  # type: ignore[call-overload]
