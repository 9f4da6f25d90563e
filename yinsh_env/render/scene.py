"""The picture of a position as shapes: what the SVG and raster back ends draw.

One scene (a list of groups of circles, lines, polygons and texts in pixel
coordinates, see :func:`scene`) feeds both :mod:`.svg` and :mod:`.raster`, so
the two pictures never disagree.  The board itself (:func:`board_scene`) is
the same for every position and cached per size.

The usual YINSH style: the triangular grid of the board with its 85 points,
rings as thick circles, markers as discs (White light with a dark outline,
Black dark), coordinates, and a caption saying who is to act, the phase, the
rings removed and the markers left in the pool.  Decorations on request:
``highlight`` marks points, ``last_action`` the last action (an arrow for a
move, a ring around a placed ring, a cross where a ring was removed, a band
over a removed row), ``show_legal`` what the player to act may choose; in the
``row`` phase the candidate rows are always outlined.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from yinsh_env.engine.actions import MOVE_OFFSET, PASS_ACTION, RING_OFFSET, ROW_OFFSET
from yinsh_env.engine.geometry import (
    COLUMN_LETTERS,
    LINES,
    MOVE_PAIRS,
    N_POINTS,
    POINT_NAMES,
    POINTS,
    SEGMENTS,
)
from yinsh_env.engine.vocabulary import Phase
from yinsh_env.render.layout import (
    CAPTION_BAND,
    ActionLike,
    Drawable,
    Layout,
    PointLike,
    describe,
    layout_for,
    to_action,
    to_point,
)

__all__ = [
    "PAGE",
    "Circle",
    "Group",
    "Line",
    "Point2",
    "Polygon",
    "Shape",
    "Text",
    "board_scene",
    "scene",
]

# --- colours and proportions (in units of the point spacing) ------------------

PAGE: Final = "#f7f2e7"
_BOARD_FILL: Final = "#ecdcb8"
_BOARD_EDGE: Final = "#c9b07e"
_GRID: Final = "#8f7a52"
_LABEL: Final = "#6b5a3a"
_TEXT: Final = "#2f2a22"
_WHITE_PIECE: Final = "#fbfaf6"
_WHITE_EDGE: Final = "#2b2926"
_BLACK_PIECE: Final = "#1f1e1c"
_BLACK_EDGE: Final = "#000000"
_SHADOW: Final = "#000000"
_HIGHLIGHT: Final = "#2f9e57"
_LEGAL: Final = "#2f7fd1"
_LAST: Final = "#d9472b"
_ROW: Final = "#f0a818"

_RING_RADIUS: Final = 0.36  # centre line of the ring's stroke
_RING_WIDTH: Final = 0.15
_MARKER_RADIUS: Final = 0.27
_OUTLINE: Final = 0.03

# --- the scene: primitives shared by the SVG and raster back ends ----------------

Point2 = tuple[float, float]


@dataclass(frozen=True)
class Circle:
    """A disc or ring: filled, stroked, or both (``width`` is the stroke's)."""

    x: float
    y: float
    r: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 0.0
    opacity: float = 1.0


@dataclass(frozen=True)
class Line:
    """A polyline with round caps and joins."""

    points: tuple[Point2, ...]
    stroke: str
    width: float
    opacity: float = 1.0


@dataclass(frozen=True)
class Polygon:
    """A filled polygon through ``points``."""

    points: tuple[Point2, ...]
    fill: str
    opacity: float = 1.0


@dataclass(frozen=True)
class Text:
    """A label centred vertically on ``y``, anchored at ``x`` by ``anchor``."""

    x: float
    y: float  # vertical centre of the text
    text: str
    size: float
    fill: str
    anchor: str = "middle"  # "start", "middle" or "end"
    bold: bool = False


Shape = Circle | Line | Polygon | Text


@dataclass(frozen=True)
class Group:
    """Shapes that form one thing (a ring, a marker); ``cls`` names it in the SVG."""

    cls: str
    shapes: tuple[Shape, ...]
    title: str = ""


def _hull(points: Sequence[Point2]) -> list[Point2]:
    """Convex hull, counter-clockwise in screen coordinates (monotone chain)."""
    pts = sorted(set(points))

    def cross(o: Point2, a: Point2, b: Point2) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[Point2] = []
    upper: list[Point2] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 1e-9:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 1e-9:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _rounded_offset(hull: list[Point2], margin: float, steps: int = 8) -> tuple[Point2, ...]:
    """The convex polygon ``hull`` grown by ``margin`` with round corners."""
    out: list[Point2] = []
    k = len(hull)
    for i, (x, y) in enumerate(hull):
        px, py = hull[i - 1]
        nx, ny = hull[(i + 1) % k]
        # Outward normals of the edges before and after this vertex.
        a0 = math.atan2(y - py, x - px) - math.pi / 2
        a1 = math.atan2(ny - y, nx - x) - math.pi / 2
        while a1 < a0:
            a1 += 2 * math.pi
        for s in range(steps + 1):
            a = a0 + (a1 - a0) * s / steps
            out.append((x + margin * math.cos(a), y + margin * math.sin(a)))
    return tuple(out)


@lru_cache(maxsize=16)
def board_scene(size: int, coordinates: bool) -> tuple[Group, ...]:
    """The static part of the picture: board, grid lines, points, coordinates."""
    lay = layout_for(size)
    u = lay.unit
    centres = [lay.point(p) for p in range(N_POINTS)]
    hull = _hull(centres)
    # Orientation-independent outward normals: make the hull clockwise on screen
    # (y points down) so that "edge direction minus 90 degrees" points outwards.
    area = sum(hull[i - 1][0] * hull[i][1] - hull[i][0] * hull[i - 1][1] for i in range(len(hull)))
    if area < 0:
        hull.reverse()
    board = (
        Polygon(_rounded_offset(hull, 0.52 * u), _BOARD_EDGE),
        Polygon(_rounded_offset(hull, 0.48 * u), _BOARD_FILL),
    )
    grid = tuple(
        Line((centres[line[0]], centres[line[-1]]), _GRID, max(1.0, 0.035 * u)) for line in LINES
    )
    dots = tuple(Circle(x, y, 0.06 * u, fill=_GRID) for x, y in centres)
    groups = [Group("board", board), Group("grid", grid + dots)]
    if coordinates:
        font = 0.3 * u
        columns: dict[int, int] = {}
        rows: dict[int, int] = {}
        for c, n in POINTS:
            columns[c] = min(columns.get(c, 99), n)
            rows[n] = min(rows.get(n, 99), c)
        # Letters extend the columns downwards, numbers extend the rows to the
        # left; where the two meet (the cut corner by A2 and B1) they are
        # pushed apart.
        spots = [(lay.axial(c, n - 0.95), COLUMN_LETTERS[c]) for c, n in columns.items()]
        spots += [(lay.axial(c - 0.95, n), str(n)) for n, c in rows.items()]
        positions = _spread([xy for xy, _ in spots], 0.6 * u)
        labels = [Text(x, y, text, font, _LABEL) for (x, y), (_, text) in zip(positions, spots)]
        groups.append(Group("coordinates", tuple(labels)))
    return tuple(groups)


def _spread(points: list[Point2], gap: float) -> list[Point2]:
    """Move points that are closer than ``gap`` apart along their separation."""
    out = list(points)
    for i in range(len(out)):
        for j in range(i + 1, len(out)):
            (x0, y0), (x1, y1) = out[i], out[j]
            d = math.hypot(x1 - x0, y1 - y0)
            if 0 < d < gap:
                push = (gap - d) / 2 / d
                out[i] = (x0 - (x1 - x0) * push, y0 - (y1 - y0) * push)
                out[j] = (x1 + (x1 - x0) * push, y1 + (y1 - y0) * push)
    return out


def _ring(lay: Layout, p: int, player: int) -> Group:
    x, y = lay.point(p)
    u = lay.unit
    r, w = _RING_RADIUS * u, _RING_WIDTH * u
    shadow = Circle(x + 0.03 * u, y + 0.05 * u, r, stroke=_SHADOW, width=w, opacity=0.22)
    if player == 0:
        shapes: tuple[Shape, ...] = (
            shadow,
            Circle(x, y, r, stroke=_WHITE_EDGE, width=w + 2 * _OUTLINE * u),
            Circle(x, y, r, stroke=_WHITE_PIECE, width=w),
        )
    else:
        shapes = (shadow, Circle(x, y, r, stroke=_BLACK_PIECE, width=w + _OUTLINE * u))
    return Group(f"ring {'white' if player == 0 else 'black'}", shapes, POINT_NAMES[p])


def _marker(lay: Layout, p: int, player: int) -> Group:
    x, y = lay.point(p)
    u = lay.unit
    r = _MARKER_RADIUS * u
    shadow = Circle(x + 0.03 * u, y + 0.05 * u, r, fill=_SHADOW, opacity=0.22)
    if player == 0:
        disc = Circle(x, y, r, fill=_WHITE_PIECE, stroke=_WHITE_EDGE, width=_OUTLINE * u * 1.2)
    else:
        disc = Circle(x, y, r, fill=_BLACK_PIECE, stroke=_BLACK_EDGE, width=_OUTLINE * u)
    return Group(f"marker {'white' if player == 0 else 'black'}", (shadow, disc), POINT_NAMES[p])


def _band(lay: Layout, segment: Sequence[int], color: str, opacity: float) -> Line:
    """A rounded band over a row of points."""
    return Line(
        (lay.point(segment[0]), lay.point(segment[-1])), color, 0.86 * lay.unit, opacity=opacity
    )


def _arrow(lay: Layout, origin: int, dest: int) -> tuple[Shape, ...]:
    (x0, y0), (x1, y1) = lay.point(origin), lay.point(dest)
    u = lay.unit
    length = math.hypot(x1 - x0, y1 - y0)
    dx, dy = (x1 - x0) / length, (y1 - y0) / length
    head, half = 0.36 * u, 0.2 * u
    tip = (x1 - dx * 0.12 * u, y1 - dy * 0.12 * u)
    base = (tip[0] - dx * head, tip[1] - dy * head)
    shaft = Line(((x0, y0), base), _LAST, 0.11 * u, opacity=0.85)
    triangle = Polygon(
        (
            tip,
            (base[0] - dy * half, base[1] + dx * half),
            (base[0] + dy * half, base[1] - dx * half),
        ),
        _LAST,
        opacity=0.85,
    )
    return (shaft, triangle)


def _cross(lay: Layout, p: int) -> tuple[Shape, ...]:
    x, y = lay.point(p)
    d, w = 0.26 * lay.unit, 0.1 * lay.unit
    return (
        Line(((x - d, y - d), (x + d, y + d)), _LAST, w, 0.9),
        Line(((x - d, y + d), (x + d, y - d)), _LAST, w, 0.9),
    )


def _legal_points(state: Drawable) -> tuple[set[int], set[int]]:
    """(empty points, pieces) the player to act may choose, for ``show_legal``."""
    empty: set[int] = set()
    pieces: set[int] = set()
    for a in state.legal_actions():
        if a < MOVE_OFFSET:
            empty.add(a)
        elif a < ROW_OFFSET:
            empty.add(MOVE_PAIRS[a - MOVE_OFFSET][1])
        elif RING_OFFSET <= a < PASS_ACTION:
            pieces.add(a - RING_OFFSET)
    return empty, pieces


def scene(
    state: Drawable,
    size: int,
    highlight: Iterable[PointLike],
    last_action: ActionLike | None,
    show_legal: bool,
    coordinates: bool,
) -> list[Group]:
    """Everything to draw, bottom layer first."""
    lay = layout_for(size)
    u = lay.unit
    marked = sorted({to_point(p) for p in highlight})
    last = to_action(last_action)
    groups = list(board_scene(size, coordinates))

    if state.phase == Phase.ROW:
        rows = tuple(_band(lay, SEGMENTS[a - ROW_OFFSET], _ROW, 0.55) for a in state.pending_rows())
        groups.append(Group("pending-rows", rows))
    if last is not None and ROW_OFFSET <= last < RING_OFFSET:
        groups.append(Group("last-action", (_band(lay, SEGMENTS[last - ROW_OFFSET], _LAST, 0.3),)))
    if last is not None and last < MOVE_OFFSET:
        x, y = lay.point(last)
        halo = Circle(x, y, 0.5 * u, stroke=_LAST, width=0.07 * u, opacity=0.9)
        groups.append(Group("last-action", (halo,)))

    for player in (0, 1):
        groups.extend(_marker(lay, p, player) for p in state.marker_points(player))
        groups.extend(_ring(lay, p, player) for p in state.ring_points(player))

    if show_legal and state.phase != Phase.OVER:
        empty, pieces = _legal_points(state)
        shapes: list[Shape] = [
            Circle(*lay.point(p), 0.13 * u, fill=_LEGAL, opacity=0.75) for p in sorted(empty)
        ]
        shapes += [
            Circle(*lay.point(p), 0.5 * u, stroke=_LEGAL, width=0.07 * u, opacity=0.9)
            for p in sorted(pieces)
        ]
        groups.append(Group("legal", tuple(shapes)))
    if marked:
        shapes = []
        for p in marked:
            x, y = lay.point(p)
            if state.piece_at(p) is None:
                shapes.append(Circle(x, y, 0.17 * u, fill=_HIGHLIGHT, opacity=0.8))
            else:
                shapes.append(Circle(x, y, 0.5 * u, stroke=_HIGHLIGHT, width=0.08 * u))
        groups.append(Group("highlight", tuple(shapes)))
    if last is not None and MOVE_OFFSET <= last < ROW_OFFSET:
        groups.append(Group("last-action", _arrow(lay, *MOVE_PAIRS[last - MOVE_OFFSET])))
    elif last is not None and RING_OFFSET <= last < PASS_ACTION:
        groups.append(Group("last-action", _cross(lay, last - RING_OFFSET)))

    caption = describe(state)
    if last == PASS_ACTION:  # every other last action is drawn on the board
        caption += " · last pass"
    cy = lay.height - 0.5 * CAPTION_BAND * u
    cx = 0.45 * u
    swatch = 0.13 * u
    if state.phase == Phase.OVER:
        winner = state.winner
        swatch_player = state.to_act if winner is None else winner
    else:
        swatch_player = state.to_act
    fill, edge = (_WHITE_PIECE, _WHITE_EDGE) if swatch_player == 0 else (_BLACK_PIECE, _BLACK_EDGE)
    groups.append(
        Group(
            "caption",
            (
                Circle(cx, cy, swatch, fill=fill, stroke=edge, width=max(1.0, 0.025 * u)),
                Text(cx + 0.3 * u, cy, caption, 0.28 * u, _TEXT, anchor="start"),
            ),
        )
    )
    return groups
