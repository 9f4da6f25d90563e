"""A hand-made evaluation of YINSH positions for the search baselines.

The score of a position for a player is their material and threats minus the
opponent's, in units where one removed ring is :data:`RING_VALUE`:

* rings removed (the goal), and a pending ring (a complete row on the board, or
  a row just taken whose ring removal is still due) almost as much;
* threats: five-point segments holding four of the player's markers, worth
  most when the fifth point holds the player's own ring (moving that ring
  away leaves the fifth marker), and segments holding three markers; segments
  with an opponent ring in them are blocked and do not count;
* markers of the player's colour on the board;
* ring mobility: the number of destinations the player's rings have.

Threat counting is bit-parallel: for each of the three line directions the
five shifted copies of a marker bitboard are summed with full adders, so one
evaluation is a few hundred integer operations whatever the position.
"""

from __future__ import annotations

from typing import Final

from yinsh_env import Phase, State
from yinsh_env.engine.geometry import (
    LINE_SHIFTS,
    POINT_BIT,
    SEGMENT_DIRECTION,
    SEGMENTS,
)

#: Score of a won (lost) game; larger than any static evaluation.
WIN_SCORE: Final = 1_000_000.0

#: One removed ring: the unit of the evaluation.
RING_VALUE: Final = 100.0
PENDING_RING_VALUE: Final = 80.0
RING_THREAT_VALUE: Final = 12.0
FOUR_VALUE: Final = 5.0
THREE_VALUE: Final = 1.5
MARKER_VALUE: Final = 1.0
MOBILITY_VALUE: Final = 0.25

#: Per line direction: the bits where a five-point segment starts.
_SEGMENT_STARTS: Final = tuple(
    sum(POINT_BIT[seg[0]] for seg, d in zip(SEGMENTS, SEGMENT_DIRECTION) if d == direction)
    for direction in range(len(LINE_SHIFTS))
)
_DIRECTIONS: Final = tuple(zip(LINE_SHIFTS, _SEGMENT_STARTS))


def _spread(board: int, shift: int) -> int:
    """Bits where a segment starting there contains any bit of ``board``."""
    return board | board >> shift | board >> 2 * shift | board >> 3 * shift | board >> 4 * shift


def threat_counts(markers: int, own_rings: int, opp_rings: int) -> tuple[int, int, int, int]:
    """(rows, ring threats, fours, threes) of one player's markers.

    ``rows``: complete five-marker segments.  ``ring threats``: segments of four
    markers whose fifth point holds one of the player's rings.  ``fours`` and
    ``threes``: segments with exactly four (three) markers and no opponent
    ring (ring threats excluded from ``fours``).
    """
    rows = ring_threats = fours = threes = 0
    for shift, starts in _DIRECTIONS:
        x0 = markers
        x1 = markers >> shift
        x2 = markers >> 2 * shift
        x3 = markers >> 3 * shift
        x4 = markers >> 4 * shift
        # Sum five bit-planes with adders: count = b0 + 2*b1 + 4*b2 (at most 5).
        s1 = x0 ^ x1 ^ x2
        c1 = (x0 & x1) | (x2 & (x0 ^ x1))
        s2 = x3 ^ x4
        c2 = x3 & x4
        b0 = s1 ^ s2
        c0 = s1 & s2
        b1 = c1 ^ c2 ^ c0
        b2 = (c1 & c2) | (c0 & (c1 ^ c2))
        five = b2 & b0 & starts
        if five:
            rows += five.bit_count()
        four = b2 & ~b0 & starts
        three = b0 & b1 & ~b2 & starts
        if four or three:
            open_ = ~_spread(opp_rings, shift)
            if four:
                with_ring = four & _spread(own_rings, shift)
                ring_threats += with_ring.bit_count()
                fours += (four & ~with_ring & open_).bit_count()
            if three:
                threes += (three & open_).bit_count()
    return rows, ring_threats, fours, threes


def mobility(state: State, player: int) -> int:
    """Number of destinations ``player``'s rings have (their ring moves)."""
    return len(state.ring_moves(player))


def _side_score(state: State, player: int) -> float:
    opp = 1 - player
    markers = state.markers[player]
    rows, ring_threats, fours, threes = threat_counts(
        markers, state.rings[player], state.rings[opp]
    )
    pending = min(rows, 1)  # overlapping rows can usually yield one ring only
    if state.phase == Phase.RING and state.to_act == player:
        pending += 1  # the row is gone, its ring is due
    return (
        RING_VALUE * state.removed[player]
        + PENDING_RING_VALUE * pending
        + RING_THREAT_VALUE * ring_threats
        + FOUR_VALUE * fours
        + THREE_VALUE * threes
        + MARKER_VALUE * markers.bit_count()
        + MOBILITY_VALUE * mobility(state, player)
    )


def terminal_score(state: State, player: int) -> float:
    """:data:`WIN_SCORE`, ``-WIN_SCORE`` or 0 for a finished game, from ``player``'s side."""
    winner = state.winner
    if winner is None:
        return 0.0
    return WIN_SCORE if winner == player else -WIN_SCORE


def evaluate(state: State, player: int) -> float:
    """Heuristic value of ``state`` for ``player`` (positive: ``player`` is better).

    A finished game scores ``±WIN_SCORE`` (0 for a draw).  Rows still to be
    resolved count for their owner whoever is to act, so positions in the middle
    of a row resolution are comparable with quiet ones.
    """
    if state.phase == Phase.OVER:
        return terminal_score(state, player)
    return _side_score(state, player) - _side_score(state, 1 - player)


def is_quiet(state: State) -> bool:
    """Whether no row or ring removal is pending (a natural leaf for search)."""
    return state.phase not in (Phase.ROW, Phase.RING)
