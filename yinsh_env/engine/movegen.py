"""Legal-move generation for :class:`~yinsh_env.engine.state.State`: the hot path of every step.

:class:`LegalMoves` is a mixin holding the queries that list or mark the legal
actions of a position (``legal_actions``, ``legal_mask``, ``is_legal``,
``ring_moves``) and the tables they walk, built once at import.  It lives apart
from the state's transitions so each module has one job; as a mixin (rather than
functions taking the bitboards) its methods cost no extra call on a path an
environment step takes several times.

Two outputs, two walks: the sorted list (search, notation, ``apply`` checks) and
one byte per action (``legal_mask``, what an environment step needs), each made
only when asked for and cached on the state.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from yinsh_env.engine.actions import MOVE_OFFSET, N_ACTIONS, PASS_ACTION, PLACE_OFFSET, RING_OFFSET
from yinsh_env.engine.geometry import (
    BIT_POS_TO_POINT,
    GRID_WIDTH,
    MOVE_PAIRS,
    N_POINTS,
    POINT_BIT,
    POINT_BIT_POS,
    RAYS,
    bits_to_points,
)
from yinsh_env.engine.rows import row_actions
from yinsh_env.engine.vocabulary import Phase, Player

__all__ = ["LegalMoves"]

_PLACE: Final = Phase.PLACE
_MOVE: Final = Phase.MOVE
_ROW: Final = Phase.ROW
_RING: Final = Phase.RING

#: For each bit position holding a ring: its non-empty rays as ((bit, move action), ...).
_RAY_MOVES: list[tuple[tuple[tuple[int, int], ...], ...]] = [()] * (11 * GRID_WIDTH)
_MOVE_INDEX = {pair: i for i, pair in enumerate(MOVE_PAIRS)}
for _p in range(N_POINTS):
    _RAY_MOVES[POINT_BIT_POS[_p]] = tuple(
        tuple((POINT_BIT[q], MOVE_OFFSET + _MOVE_INDEX[(_p, q)]) for q in ray)
        for ray in RAYS[_p]
        if ray  # edge points have rays of length zero: skip them in the hot loop
    )

_EMPTY_PLACEMENTS: Final = tuple((POINT_BIT[p], PLACE_OFFSET + p) for p in range(N_POINTS))
#: The marks of every placement (the empty board's legal actions).
_ALL_PLACEMENTS: Final = bytes(
    1 if PLACE_OFFSET <= a < PLACE_OFFSET + N_POINTS else 0 for a in range(N_ACTIONS)
)
# numpy names bound once: an attribute lookup per mask is measurable at this scale.
_frombuffer: Final = np.frombuffer
_zeros: Final = np.zeros
_array: Final = np.array
_INT8: Final = np.int8
_INTP: Final = np.intp


class LegalMoves:
    """The legal-move queries of a position; mixed into :class:`~yinsh_env.engine.state.State`.

    Reads the state's bitboards, phase and player to act, and keeps its two
    caches (``_legal``, ``_marks``), which ``State`` resets whenever it changes.
    """

    #: The caches live here, beside the code that fills them.
    __slots__ = ("_legal", "_marks")

    rings: list[int]
    markers: list[int]
    to_act: Player
    phase: Phase
    _legal: list[int] | None
    _marks: bytearray | None

    def legal_actions(self) -> list[int]:
        """The legal actions, sorted.  The list is cached: do not mutate it.

        >>> from yinsh_env import State
        >>> State().legal_actions()[:3]
        [0, 1, 2]
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = self._generate()
        return legal

    def legal_mask(self) -> np.ndarray:
        """Legal actions as an ``int8`` mask of length :data:`N_ACTIONS` (a new array).

        >>> from yinsh_env import State
        >>> mask = State().legal_mask()
        >>> mask.shape, mask.dtype, int(mask.sum())
        ((2142,), dtype('int8'), 85)
        """
        marks = self._marks
        if marks is None:
            legal = self._legal
            if legal is not None:  # the list is there already: scatter it
                mask = _zeros(N_ACTIONS, _INT8)
                mask[_array(legal, _INTP)] = 1
                return mask
            marks = self._marks = self._generate_marks()
        return _frombuffer(bytearray(marks), _INT8)

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal, read from whichever cache exists (list first)."""
        legal = self._legal
        if legal is not None:
            return action in legal
        marks = self._marks
        if marks is not None and type(action) is int:  # after a mask: one byte to read
            return 0 <= action < N_ACTIONS and marks[action] == 1
        return action in self.legal_actions()

    def _generate(self) -> list[int]:
        phase = self.phase
        if phase == _MOVE:
            moves = self.ring_moves(self.to_act)
            if not moves:
                return [PASS_ACTION]
            moves.sort()
            return moves
        if phase == _ROW:
            return row_actions(self.markers[self.to_act])
        if phase == _RING:
            return [RING_OFFSET + p for p in bits_to_points(self.rings[self.to_act])]
        if phase == _PLACE:
            occupied = self.rings[0] | self.rings[1] | self.markers[0] | self.markers[1]
            return [a for bit, a in _EMPTY_PLACEMENTS if not bit & occupied]
        return []

    def _generate_marks(self) -> bytearray:
        """The legal actions as one byte each (1 legal): :meth:`legal_mask`'s source."""
        phase = self.phase
        if phase == _MOVE:
            marks = bytearray(N_ACTIONS)
            if not self._mark_ring_moves(marks):
                marks[PASS_ACTION] = 1
            return marks
        if phase == _PLACE:
            marks = bytearray(_ALL_PLACEMENTS)
            occupied = self.rings[0] | self.rings[1] | self.markers[0] | self.markers[1]
            while occupied:  # at most the ten rings
                low = occupied & -occupied
                occupied ^= low
                marks[PLACE_OFFSET + BIT_POS_TO_POINT[low.bit_length() - 1]] = 0
            return marks
        marks = bytearray(N_ACTIONS)
        for action in self._generate():  # a few rows or rings; none once over
            marks[action] = 1
        return marks

    def ring_moves(self, player: int) -> list[int]:
        """Every ring move ``player``'s rings have, in generation order (unsorted).

        For evaluation (mobility) as well as legal-move generation; ignores
        whose turn it is and the phase.
        """
        all_rings = self.rings[0] | self.rings[1]
        occupied = all_rings | self.markers[0] | self.markers[1]
        out: list[int] = []
        append = out.append
        own = self.rings[player]
        while own:
            low = own & -own
            own ^= low
            for ray in _RAY_MOVES[low.bit_length() - 1]:
                jumped = False
                for bit, action in ray:
                    if not bit & occupied:
                        append(action)
                        if jumped:
                            break
                    elif bit & all_rings:
                        break
                    else:
                        jumped = True
        return out

    def _mark_ring_moves(self, marks: bytearray) -> bool:
        """:meth:`ring_moves` for the player to act, written into ``marks``; whether any.

        The same walk as ``ring_moves`` (tests check they agree), kept apart:
        the store per move is the whole inner loop, and writing both outputs
        would slow both the environment (bytes only) and search (list only).
        """
        all_rings = self.rings[0] | self.rings[1]
        occupied = all_rings | self.markers[0] | self.markers[1]
        own = self.rings[self.to_act]
        while own:
            low = own & -own
            own ^= low
            for ray in _RAY_MOVES[low.bit_length() - 1]:
                jumped = False
                for bit, action in ray:
                    if not bit & occupied:
                        marks[action] = 1
                        if jumped:
                            break
                    elif bit & all_rings:
                        break
                    else:
                        jumped = True
        return marks.find(1) >= 0  # a scan in C: cheaper than a flag set per move
