"""Board geometry of YINSH, derived once at import from the board definition.

The board is the hexagon of radius 5 around F6 in axial coordinates, less its
six corners: 85 points.  A point is named by its column letter (A..K) and its
number (1..11).  Everything else here (lines, rays, five-point segments, move
pairs, the 12 symmetries) is computed from that definition, never typed in.

Bitboards: every point owns one bit of a Python int.  Bit positions follow an
11 x 12 padded grid, ``bit = column * 12 + (number - 1)``; the twelfth slot of
each column is always empty, so shifting a bitboard by 1 (along a column),
12 (along a row) or 13 (along the rising diagonal) never wraps across the
board's edge.  That lets five-in-a-row detection be a handful of shifts and ANDs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

N_COLUMNS: Final = 11
GRID_WIDTH: Final = 12  # 11 numbers per column plus one always-empty padding slot
COLUMN_LETTERS: Final = "ABCDEFGHIJK"
CENTER: Final = (5, 6)  # F6 as (column index, number)

#: The three line directions as (d_column, d_number): along a column, along a
#: row number, and the diagonal where letter and number rise together.
LINE_DIRECTIONS: Final = ((0, 1), (1, 0), (1, 1))
#: The six ways a ring can move: the three line directions and their opposites.
RAY_DIRECTIONS: Final = LINE_DIRECTIONS + tuple((-dc, -dn) for dc, dn in LINE_DIRECTIONS)
#: Bit shift that moves one step along each line direction.
LINE_SHIFTS: Final = tuple(dc * GRID_WIDTH + dn for dc, dn in LINE_DIRECTIONS)

ROW_LENGTH: Final = 5


def _on_board(col: int, num: int) -> bool:
    q, r = col - CENTER[0], num - CENTER[1]
    extent = (abs(q), abs(r), abs(q - r))
    return max(extent) <= 5 and extent.count(5) < 2


#: The 85 points as (column index, number), ordered by column then number.
POINTS: Final[tuple[tuple[int, int], ...]] = tuple(
    (c, n) for c in range(N_COLUMNS) for n in range(1, 12) if _on_board(c, n)
)
N_POINTS: Final = len(POINTS)
POINT_INDEX: Final[dict[tuple[int, int], int]] = {cn: i for i, cn in enumerate(POINTS)}
POINT_NAMES: Final[tuple[str, ...]] = tuple(f"{COLUMN_LETTERS[c]}{n}" for c, n in POINTS)
NAME_TO_POINT: Final[dict[str, int]] = {name: i for i, name in enumerate(POINT_NAMES)}

#: Bit of each point in the padded grid, and the inverse map.
POINT_BIT_POS: Final[tuple[int, ...]] = tuple(c * GRID_WIDTH + (n - 1) for c, n in POINTS)
POINT_BIT: Final[tuple[int, ...]] = tuple(1 << b for b in POINT_BIT_POS)
BIT_POS_TO_POINT: Final[dict[int, int]] = {b: i for i, b in enumerate(POINT_BIT_POS)}
BOARD_MASK: Final = sum(POINT_BIT)


def point_name(point: int) -> str:
    """Notation of a point index, e.g. ``5 -> 'B1'``."""
    return POINT_NAMES[point]


def bits_to_points(bitboard: int) -> list[int]:
    """Point indices of the set bits of a bitboard, in point order.

    Bit order is point order (both run by column, then number), so the lowest
    bit first gives the points sorted.
    """
    out = []
    while bitboard:
        low = bitboard & -bitboard
        out.append(BIT_POS_TO_POINT[low.bit_length() - 1])
        bitboard ^= low
    return out


def iter_points(bitboard: int) -> Iterator[int]:
    """Point indices of a bitboard's set bits, in point order."""
    return iter(bits_to_points(bitboard))


def points_to_bits(points: list[int] | tuple[int, ...] | set[int]) -> int:
    """Bitboard holding the given point indices."""
    bb = 0
    for p in points:
        bb |= POINT_BIT[p]
    return bb


def _step(point: int, direction: tuple[int, int], k: int) -> int | None:
    c, n = POINTS[point]
    return POINT_INDEX.get((c + k * direction[0], n + k * direction[1]))


def _ray(point: int, direction: tuple[int, int]) -> tuple[int, ...]:
    out = []
    k = 1
    while (q := _step(point, direction, k)) is not None:
        out.append(q)
        k += 1
    return tuple(out)


#: RAYS[p][d]: points met walking from p in RAY_DIRECTIONS[d], nearest first.
RAYS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(_ray(p, d) for d in RAY_DIRECTIONS) for p in range(N_POINTS)
)


def _lines() -> tuple[tuple[int, ...], ...]:
    out = []
    for d in LINE_DIRECTIONS:
        back = (-d[0], -d[1])
        for p in range(N_POINTS):
            if _step(p, back, 1) is None:  # p starts a maximal line
                line = (p, *_ray(p, d))
                if len(line) > 1:
                    out.append(line)
    return tuple(out)


#: Maximal lines of the board (two or more points) in the three directions.
LINES: Final = _lines()


def _segments() -> tuple[tuple[tuple[int, ...], int], ...]:
    out = []
    for p in range(N_POINTS):
        for di, d in enumerate(LINE_DIRECTIONS):
            seg = [p]
            for k in range(1, ROW_LENGTH):
                q = _step(p, d, k)
                if q is None:
                    break
                seg.append(q)
            if len(seg) == ROW_LENGTH:
                out.append((tuple(seg), di))
    return tuple(out)


_SEGMENTS_WITH_DIRECTION = _segments()
#: The five-point segments (possible rows), ordered by lower end point then
#: direction; each is its points from the lower end.
SEGMENTS: Final[tuple[tuple[int, ...], ...]] = tuple(s for s, _ in _SEGMENTS_WITH_DIRECTION)
SEGMENT_DIRECTION: Final[tuple[int, ...]] = tuple(d for _, d in _SEGMENTS_WITH_DIRECTION)
SEGMENT_MASK: Final[tuple[int, ...]] = tuple(points_to_bits(s) for s in SEGMENTS)
N_SEGMENTS: Final = len(SEGMENTS)
#: (lowest bit position, line direction index) -> segment index, for row scans.
SEGMENT_BY_START: Final[dict[tuple[int, int], int]] = {
    (POINT_BIT_POS[s[0]], d): i for i, (s, d) in enumerate(_SEGMENTS_WITH_DIRECTION)
}


def _move_pairs() -> tuple[tuple[int, int], ...]:
    pairs: list[tuple[int, int]] = []
    for p in range(N_POINTS):
        targets = sorted(q for ray in RAYS[p] for q in ray)
        pairs.extend((p, q) for q in targets)
    return tuple(pairs)


#: Ordered (from, to) pairs of distinct points on a common line, sorted.
MOVE_PAIRS: Final = _move_pairs()
N_MOVE_PAIRS: Final = len(MOVE_PAIRS)


def _between(a: int, b: int) -> tuple[int, ...]:
    for ray in RAYS[a]:
        if b in ray:
            return ray[: ray.index(b)]
    raise ValueError(f"{POINT_NAMES[a]} and {POINT_NAMES[b]} share no line")


#: Points strictly between the two ends of each move pair, nearest the origin first.
MOVE_BETWEEN: Final[tuple[tuple[int, ...], ...]] = tuple(_between(a, b) for a, b in MOVE_PAIRS)


# --- symmetries -------------------------------------------------------------


def _rotate(q: int, r: int) -> tuple[int, int]:
    """60 degree rotation in axial coordinates: (1,0) -> (1,1) -> (0,1) -> ..."""
    return q - r, q


def _symmetry_maps() -> tuple[tuple[int, ...], ...]:
    maps = []
    for reflect in (False, True):
        for turns in range(6):
            perm = []
            for c, n in POINTS:
                q, r = c - CENTER[0], n - CENTER[1]
                if reflect:
                    q, r = r, q
                for _ in range(turns):
                    q, r = _rotate(q, r)
                perm.append(POINT_INDEX[(q + CENTER[0], r + CENTER[1])])
            maps.append(tuple(perm))
    return tuple(maps)


#: The 12 symmetries of the board as permutations of point indices:
#: ``SYMMETRIES[k][p]`` is the image of point p.  Index 0 is the identity,
#: 0-5 are rotations by k * 60 degrees, 6-11 reflections followed by rotations.
SYMMETRIES: Final = _symmetry_maps()
N_SYMMETRIES: Final = len(SYMMETRIES)
