"""Zobrist keys: random 64-bit numbers per piece and point, drawn once at import.

:meth:`State.zobrist <yinsh_env.engine.state.State.zobrist>` XORs them; the tables
are folded per byte so that hashing a bitboard costs one lookup per byte while
staying an XOR of per-point keys.  The seed is fixed, so hashes are the same
in every process (transposition tables can be shared and saved).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from yinsh_env.engine.geometry import BIT_POS_TO_POINT, GRID_WIDTH
from yinsh_env.engine.vocabulary import TOTAL_MARKERS

__all__ = ["BOARD_BYTES", "EXTRA_KEYS", "PIECE_KEYS"]

#: Bytes of a bitboard in the padded grid.
BOARD_BYTES: Final = (11 * GRID_WIDTH + 7) // 8


def _tables() -> tuple[list[list[list[int]]], list[int]]:
    """``tables[kind][i][v]``: the XOR of the keys of the points whose bits are
    set in value ``v`` of byte ``i`` of a bitboard of piece kind ``kind``
    (white rings, black rings, white markers, black markers); and the keys of
    the scalar fields (player, phase, mover, passes, rings removed, rings to
    win, pool)."""
    rng = np.random.default_rng(0x59494E5348)  # "YINSH"
    point_keys = rng.integers(0, 2**63, size=(4, 11 * GRID_WIDTH), dtype=np.int64).tolist()
    tables = []
    for kind in range(4):
        per_byte = []
        for i in range(BOARD_BYTES):
            table = [0] * 256
            for v in range(1, 256):
                low = v & -v
                pos = 8 * i + low.bit_length() - 1
                key = point_keys[kind][pos] if pos in BIT_POS_TO_POINT else 0
                table[v] = table[v ^ low] ^ key
            per_byte.append(table)
        tables.append(per_byte)
    extra = rng.integers(0, 2**63, size=64 + TOTAL_MARKERS + 1, dtype=np.int64).tolist()
    return tables, extra


PIECE_KEYS, EXTRA_KEYS = _tables()
