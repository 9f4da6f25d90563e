"""Five-in-a-row on a marker bitboard: the test and the row-removal actions.

Shared by the rules (:mod:`yinsh_env.engine.state`), the position-text checks
(:mod:`yinsh_env.engine.position_text`) and the observation planes.  Both work on one
player's marker bitboard (:mod:`yinsh_env.engine.geometry`'s padded grid), where a
step along the three line directions is a shift by 1, 12 or 13 bits.
"""

from __future__ import annotations

from yinsh_env.engine.actions import ROW_OFFSET
from yinsh_env.engine.geometry import LINE_SHIFTS, SEGMENT_BY_START

assert LINE_SHIFTS == (1, 12, 13), "has_row hard-codes the line shifts"

__all__ = ["has_row", "row_actions"]


def has_row(markers: int) -> bool:
    """Whether the marker bitboard holds five in a row in any direction."""
    m = markers
    a = m & (m >> 1)
    if a & (a >> 2) & (m >> 4):
        return True
    a = m & (m >> 12)
    if a & (a >> 24) & (m >> 48):
        return True
    a = m & (m >> 13)
    return bool(a & (a >> 26) & (m >> 52))


def row_actions(markers: int) -> list[int]:
    """Row-removal actions for every five-marker segment of the bitboard, sorted."""
    m = markers
    out = []
    for direction, shift in enumerate(LINE_SHIFTS):
        a = m & (m >> shift)
        a &= a >> (2 * shift)
        a &= m >> (4 * shift)
        while a:
            low = a & -a
            a ^= low
            out.append(ROW_OFFSET + SEGMENT_BY_START[(low.bit_length() - 1, direction)])
    out.sort()
    return out
