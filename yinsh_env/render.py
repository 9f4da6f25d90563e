"""Pictures of positions: SVG (notebooks, files), text (terminals), RGB arrays.

All three draw the same thing, in the usual YINSH style: the triangular grid of
the board with its 85 points, rings as thick circles, markers as discs (White
light with a dark outline, Black dark), coordinates, and a caption saying who
is to act, the phase, the rings removed and the markers left in the pool.

* :func:`svg_board` returns SVG text; ``State._repr_svg_`` uses it, so a
  position shows itself inline in a notebook.
* :func:`ansi_board` returns a text board laid out like the diagram in the
  rules (numbers 11..1 from top to bottom, columns A..K from left to right);
  ``str(state)`` is its plain-ASCII form.
* :func:`rgb_board` returns an ``(H, W, 3)`` ``uint8`` array drawn with Pillow,
  for the environments' ``rgb_array`` render mode and videos.

The SVG and the raster picture are built from one scene (a list of circles,
lines, polygons and texts in pixel coordinates, see :func:`_scene`), so they
never disagree.  Screen geometry: the point in column ``c`` with number ``n``
is drawn at ``x = c * sqrt(3)/2``, ``y = -(n - c/2)`` (in units of the distance
between neighbouring points), which makes columns vertical, numbers increase
upwards and the three line directions meet at 60 degrees.

Decorations, on request: ``highlight`` marks points (indices or names, e.g. a
ring's legal destinations); ``last_action`` marks the last action (an arrow
for a move, a ring around a placed ring, a cross where a ring was removed, a
band over a removed row); ``show_legal`` marks what the player to act may
choose.  In the ``row`` phase the candidate rows are always outlined.

Text symbols (:func:`ansi_board`): ``.`` empty point, ``R``/``r`` White/Black
ring, ``M``/``m`` White/Black marker (as in the position text), ``*`` a
highlighted empty point, ``(X)`` a highlighted piece, ``[X]`` a point of the
last action.  ``color=True`` keeps the same characters and adds ANSI colours.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final
from xml.sax.saxutils import escape

import numpy as np

from .actions import (
    MOVE_OFFSET,
    PASS_ACTION,
    RING_OFFSET,
    ROW_OFFSET,
    action_to_str,
    parse_point,
    str_to_action,
)
from .errors import NotationError
from .geometry import (
    COLUMN_LETTERS,
    LINES,
    MOVE_PAIRS,
    N_POINTS,
    POINT_INDEX,
    POINT_NAMES,
    POINTS,
    SEGMENTS,
)

if TYPE_CHECKING:
    from PIL import Image, ImageFont

    from .state import State

__all__ = ["ansi_board", "describe", "picture_size", "point_xy", "rgb_board", "svg_board"]

PointLike = int | str
ActionLike = int | str

# --- layout -------------------------------------------------------------------

_SQRT3_2: Final = math.sqrt(3) / 2
#: Margins around the points' bounding box, in units of the point spacing.
_MARGIN_X: Final = 1.15
_MARGIN_TOP: Final = 0.8
_MARGIN_BOTTOM: Final = 1.35  # room for the column letters
_CAPTION_BAND: Final = 0.85

_RAW_XY: Final = tuple((c * _SQRT3_2, -(n - c / 2)) for c, n in POINTS)
_MIN_X: Final = min(x for x, _ in _RAW_XY)
_MAX_X: Final = max(x for x, _ in _RAW_XY)
_MIN_Y: Final = min(y for _, y in _RAW_XY)
_MAX_Y: Final = max(y for _, y in _RAW_XY)
_WIDTH_UNITS: Final = _MAX_X - _MIN_X + 2 * _MARGIN_X
_HEIGHT_UNITS: Final = _MAX_Y - _MIN_Y + _MARGIN_TOP + _MARGIN_BOTTOM + _CAPTION_BAND


def picture_size(size: int) -> tuple[int, int]:
    """(width, height) in pixels of a picture drawn at ``size`` (its width)."""
    return size, round(size * _HEIGHT_UNITS / _WIDTH_UNITS)


@dataclass(frozen=True)
class _Layout:
    """Maps board units to pixels for one picture width."""

    width: int
    height: int
    unit: float

    def xy(self, x: float, y: float) -> tuple[float, float]:
        u = self.unit
        return (x - _MIN_X + _MARGIN_X) * u, (y - _MIN_Y + _MARGIN_TOP) * u

    def point(self, p: int) -> tuple[float, float]:
        return self.xy(*_RAW_XY[p])

    def axial(self, c: float, n: float) -> tuple[float, float]:
        return self.xy(c * _SQRT3_2, -(n - c / 2))


def point_xy(point: PointLike, size: int = 480) -> tuple[float, float]:
    """Pixel centre of a point (index or name) in a picture ``size`` pixels wide."""
    return _layout(size).point(_to_point(point))


@lru_cache(maxsize=16)
def _layout(size: int) -> _Layout:
    if isinstance(size, bool) or not isinstance(size, int) or size < 64:
        raise ValueError(f"picture size must be an integer of at least 64 pixels, got {size!r}")
    width, height = picture_size(size)
    return _Layout(width, height, size / _WIDTH_UNITS)


# --- colours and proportions (in units of the point spacing) ------------------

_PAGE: Final = "#f7f2e7"
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
class _Circle:
    x: float
    y: float
    r: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 0.0
    opacity: float = 1.0


@dataclass(frozen=True)
class _Line:
    """A polyline with round caps and joins."""

    points: tuple[Point2, ...]
    stroke: str
    width: float
    opacity: float = 1.0


@dataclass(frozen=True)
class _Polygon:
    points: tuple[Point2, ...]
    fill: str
    opacity: float = 1.0


@dataclass(frozen=True)
class _Text:
    x: float
    y: float  # vertical centre of the text
    text: str
    size: float
    fill: str
    anchor: str = "middle"  # "start", "middle" or "end"
    bold: bool = False


_Shape = _Circle | _Line | _Polygon | _Text


@dataclass(frozen=True)
class _Group:
    """Shapes that form one thing (a ring, a marker); ``cls`` names it in the SVG."""

    cls: str
    shapes: tuple[_Shape, ...]
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
def _board_scene(size: int, coordinates: bool) -> tuple[_Group, ...]:
    """The static part of the picture: board, grid lines, points, coordinates."""
    lay = _layout(size)
    u = lay.unit
    centres = [lay.point(p) for p in range(N_POINTS)]
    hull = _hull(centres)
    # Orientation-independent outward normals: make the hull clockwise on screen
    # (y points down) so that "edge direction minus 90 degrees" points outwards.
    area = sum(hull[i - 1][0] * hull[i][1] - hull[i][0] * hull[i - 1][1] for i in range(len(hull)))
    if area < 0:
        hull.reverse()
    board = (
        _Polygon(_rounded_offset(hull, 0.52 * u), _BOARD_EDGE),
        _Polygon(_rounded_offset(hull, 0.48 * u), _BOARD_FILL),
    )
    grid = tuple(
        _Line((centres[line[0]], centres[line[-1]]), _GRID, max(1.0, 0.035 * u)) for line in LINES
    )
    dots = tuple(_Circle(x, y, 0.06 * u, fill=_GRID) for x, y in centres)
    groups = [_Group("board", board), _Group("grid", grid + dots)]
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
        labels = [_Text(x, y, text, font, _LABEL) for (x, y), (_, text) in zip(positions, spots)]
        groups.append(_Group("coordinates", tuple(labels)))
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


def _ring(lay: _Layout, p: int, player: int) -> _Group:
    x, y = lay.point(p)
    u = lay.unit
    r, w = _RING_RADIUS * u, _RING_WIDTH * u
    shadow = _Circle(x + 0.03 * u, y + 0.05 * u, r, stroke=_SHADOW, width=w, opacity=0.22)
    if player == 0:
        shapes: tuple[_Shape, ...] = (
            shadow,
            _Circle(x, y, r, stroke=_WHITE_EDGE, width=w + 2 * _OUTLINE * u),
            _Circle(x, y, r, stroke=_WHITE_PIECE, width=w),
        )
    else:
        shapes = (shadow, _Circle(x, y, r, stroke=_BLACK_PIECE, width=w + _OUTLINE * u))
    return _Group(f"ring {'white' if player == 0 else 'black'}", shapes, POINT_NAMES[p])


def _marker(lay: _Layout, p: int, player: int) -> _Group:
    x, y = lay.point(p)
    u = lay.unit
    r = _MARKER_RADIUS * u
    shadow = _Circle(x + 0.03 * u, y + 0.05 * u, r, fill=_SHADOW, opacity=0.22)
    if player == 0:
        disc = _Circle(x, y, r, fill=_WHITE_PIECE, stroke=_WHITE_EDGE, width=_OUTLINE * u * 1.2)
    else:
        disc = _Circle(x, y, r, fill=_BLACK_PIECE, stroke=_BLACK_EDGE, width=_OUTLINE * u)
    return _Group(f"marker {'white' if player == 0 else 'black'}", (shadow, disc), POINT_NAMES[p])


def _band(lay: _Layout, segment: Sequence[int], color: str, opacity: float) -> _Line:
    """A rounded band over a row of points."""
    return _Line(
        (lay.point(segment[0]), lay.point(segment[-1])), color, 0.86 * lay.unit, opacity=opacity
    )


def _arrow(lay: _Layout, origin: int, dest: int) -> tuple[_Shape, ...]:
    (x0, y0), (x1, y1) = lay.point(origin), lay.point(dest)
    u = lay.unit
    length = math.hypot(x1 - x0, y1 - y0)
    dx, dy = (x1 - x0) / length, (y1 - y0) / length
    head, half = 0.36 * u, 0.2 * u
    tip = (x1 - dx * 0.12 * u, y1 - dy * 0.12 * u)
    base = (tip[0] - dx * head, tip[1] - dy * head)
    shaft = _Line(((x0, y0), base), _LAST, 0.11 * u, opacity=0.85)
    triangle = _Polygon(
        (
            tip,
            (base[0] - dy * half, base[1] + dx * half),
            (base[0] + dy * half, base[1] - dx * half),
        ),
        _LAST,
        opacity=0.85,
    )
    return (shaft, triangle)


def _cross(lay: _Layout, p: int) -> tuple[_Shape, ...]:
    x, y = lay.point(p)
    d, w = 0.26 * lay.unit, 0.1 * lay.unit
    return (
        _Line(((x - d, y - d), (x + d, y + d)), _LAST, w, 0.9),
        _Line(((x - d, y + d), (x + d, y - d)), _LAST, w, 0.9),
    )


def _to_point(point: PointLike) -> int:
    if isinstance(point, str):
        return parse_point(point)
    if isinstance(point, bool) or not isinstance(point, (int, np.integer)):
        raise NotationError(f"highlight entry {point!r} is not a point index or name")
    if not 0 <= int(point) < N_POINTS:
        raise NotationError(f"point index {point!r} is outside 0..{N_POINTS - 1}")
    return int(point)


def _to_action(action: ActionLike | None) -> int | None:
    if action is None:
        return None
    if isinstance(action, str):
        return str_to_action(action)
    action_to_str(action)  # validates the index, raising NotationError
    return int(action)


def _legal_points(state: State) -> tuple[set[int], set[int]]:
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


def describe(state: State) -> str:
    """One line on the position: who acts and how, rings removed, pool."""
    from .state import MOVE, OVER, PHASE_NAMES, PLACE, PLAYER_NAMES, RING, ROW

    player = PLAYER_NAMES[state.to_act]
    if state.phase == OVER:
        winner = state.winner
        head = "Draw" if winner is None else f"{PLAYER_NAMES[winner]} wins"
        head = f"Game over: {head} ({state.end_reason})"
    elif state.phase == PLACE:
        head = f"{player} to place a ring"
    elif state.phase == MOVE:
        head = (
            f"{player} must pass" if state.legal_actions() == [PASS_ACTION] else f"{player} to move"
        )
    elif state.phase == ROW:
        head = f"{player} to remove a row"
    elif state.phase == RING:
        head = f"{player} to remove a ring"
    else:  # pragma: no cover - every phase is listed above
        head = f"{player} to act ({PHASE_NAMES[state.phase]})"
    white, black = state.removed
    return f"{head} · rings removed W{white}-B{black} of {state.rings_to_win} · pool {state.pool}"


def _scene(
    state: State,
    size: int,
    highlight: Iterable[PointLike],
    last_action: ActionLike | None,
    show_legal: bool,
    coordinates: bool,
) -> list[_Group]:
    """Everything to draw, bottom layer first."""
    from .state import OVER, ROW

    lay = _layout(size)
    u = lay.unit
    marked = sorted({_to_point(p) for p in highlight})
    last = _to_action(last_action)
    groups = list(_board_scene(size, coordinates))

    if state.phase == ROW:
        rows = tuple(_band(lay, SEGMENTS[a - ROW_OFFSET], _ROW, 0.55) for a in state.pending_rows())
        groups.append(_Group("pending-rows", rows))
    if last is not None and ROW_OFFSET <= last < RING_OFFSET:
        groups.append(_Group("last-action", (_band(lay, SEGMENTS[last - ROW_OFFSET], _LAST, 0.3),)))
    if last is not None and last < MOVE_OFFSET:
        x, y = lay.point(last)
        halo = _Circle(x, y, 0.5 * u, stroke=_LAST, width=0.07 * u, opacity=0.9)
        groups.append(_Group("last-action", (halo,)))

    for player in (0, 1):
        groups.extend(_marker(lay, p, player) for p in state.marker_points(player))
        groups.extend(_ring(lay, p, player) for p in state.ring_points(player))

    if show_legal and state.phase != OVER:
        empty, pieces = _legal_points(state)
        shapes: list[_Shape] = [
            _Circle(*lay.point(p), 0.13 * u, fill=_LEGAL, opacity=0.75) for p in sorted(empty)
        ]
        shapes += [
            _Circle(*lay.point(p), 0.5 * u, stroke=_LEGAL, width=0.07 * u, opacity=0.9)
            for p in sorted(pieces)
        ]
        groups.append(_Group("legal", tuple(shapes)))
    if marked:
        shapes = []
        for p in marked:
            x, y = lay.point(p)
            if state.piece_at(p) is None:
                shapes.append(_Circle(x, y, 0.17 * u, fill=_HIGHLIGHT, opacity=0.8))
            else:
                shapes.append(_Circle(x, y, 0.5 * u, stroke=_HIGHLIGHT, width=0.08 * u))
        groups.append(_Group("highlight", tuple(shapes)))
    if last is not None and MOVE_OFFSET <= last < ROW_OFFSET:
        groups.append(_Group("last-action", _arrow(lay, *MOVE_PAIRS[last - MOVE_OFFSET])))
    elif last is not None and RING_OFFSET <= last < PASS_ACTION:
        groups.append(_Group("last-action", _cross(lay, last - RING_OFFSET)))

    caption = describe(state)
    if last == PASS_ACTION:  # every other last action is drawn on the board
        caption += " · last pass"
    cy = lay.height - 0.5 * _CAPTION_BAND * u
    cx = 0.45 * u
    swatch = 0.13 * u
    if state.phase == OVER:
        winner = state.winner
        swatch_player = state.to_act if winner is None else winner
    else:
        swatch_player = state.to_act
    fill, edge = (_WHITE_PIECE, _WHITE_EDGE) if swatch_player == 0 else (_BLACK_PIECE, _BLACK_EDGE)
    groups.append(
        _Group(
            "caption",
            (
                _Circle(cx, cy, swatch, fill=fill, stroke=edge, width=max(1.0, 0.025 * u)),
                _Text(cx + 0.3 * u, cy, caption, 0.28 * u, _TEXT, anchor="start"),
            ),
        )
    )
    return groups


# --- SVG ----------------------------------------------------------------------


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _svg_shape(shape: _Shape) -> str:
    if isinstance(shape, _Circle):
        attrs = f'cx="{_f(shape.x)}" cy="{_f(shape.y)}" r="{_f(shape.r)}"'
        attrs += f' fill="{shape.fill or "none"}"'
        if shape.stroke:
            attrs += f' stroke="{shape.stroke}" stroke-width="{_f(shape.width)}"'
        if shape.opacity < 1:
            attrs += f' opacity="{shape.opacity:g}"'
        return f"<circle {attrs}/>"
    if isinstance(shape, _Line):
        pts = " ".join(f"{_f(x)},{_f(y)}" for x, y in shape.points)
        opacity = f' stroke-opacity="{shape.opacity:g}"' if shape.opacity < 1 else ""
        return (
            f'<polyline points="{pts}" fill="none" stroke="{shape.stroke}" '
            f'stroke-width="{_f(shape.width)}" stroke-linecap="round" '
            f'stroke-linejoin="round"{opacity}/>'
        )
    if isinstance(shape, _Polygon):
        pts = " ".join(f"{_f(x)},{_f(y)}" for x, y in shape.points)
        opacity = f' fill-opacity="{shape.opacity:g}"' if shape.opacity < 1 else ""
        return f'<polygon points="{pts}" fill="{shape.fill}"{opacity}/>'
    weight = ' font-weight="bold"' if shape.bold else ""
    return (
        f'<text x="{_f(shape.x)}" y="{_f(shape.y)}" font-size="{_f(shape.size)}" '
        f'fill="{shape.fill}" text-anchor="{shape.anchor}" dominant-baseline="central"'
        f"{weight}>{escape(shape.text)}</text>"
    )


def svg_board(
    state: State,
    size: int = 480,
    highlight: Iterable[PointLike] = (),
    last_action: ActionLike | None = None,
    show_legal: bool = False,
    coordinates: bool = True,
) -> str:
    """The position as an SVG document, ``size`` pixels wide.

    ``highlight`` marks points (indices or names), ``last_action`` (index or
    notation) draws the last action, ``show_legal`` marks the points the player
    to act may choose (placements, ring destinations, rings to remove).  Pieces
    are ``<g>`` elements of class ``ring white``, ``marker black``... titled
    with their point, so the picture can be styled and inspected.
    """
    lay = _layout(size)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="yinsh-board" '
        f'width="{lay.width}" height="{lay.height}" viewBox="0 0 {lay.width} {lay.height}" '
        'font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(state.to_text())}</title>",
        f'<rect class="page" width="{lay.width}" height="{lay.height}" fill="{_PAGE}"/>',
    ]
    groups = _scene(state, size, highlight, last_action, show_legal, coordinates)
    out.append(_svg_static(size, coordinates))
    out.append(_svg_groups(groups[len(_board_scene(size, coordinates)) :]))
    out.append("</svg>")
    return "\n".join(out)


def _svg_groups(groups: Iterable[_Group]) -> str:
    out = []
    for group in groups:
        title = f' data-point="{group.title}"' if group.title else ""
        out.append(f'<g class="{group.cls}"{title}>')
        out.extend(_svg_shape(s) for s in group.shapes)
        out.append("</g>")
    return "\n".join(out)


@lru_cache(maxsize=16)
def _svg_static(size: int, coordinates: bool) -> str:
    """The SVG of the board itself, the same for every position."""
    return _svg_groups(_board_scene(size, coordinates))


# --- raster (Pillow) ----------------------------------------------------------

#: Supersampling factor of the raster picture (antialiasing).
_SUPERSAMPLE: Final = 2


@lru_cache(maxsize=64)
def _rgba(color: str, opacity: float) -> tuple[int, int, int, int]:
    return (
        int(color[1:3], 16),
        int(color[3:5], 16),
        int(color[5:7], 16),
        round(255 * opacity),
    )


@lru_cache(maxsize=16)
def _font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=pixels)
    except (TypeError, ImportError, OSError):  # old Pillow or no FreeType: bitmap font
        return ImageFont.load_default()


def _draw_shapes(image: Image.Image, groups: Iterable[_Group], k: float) -> None:
    """Draw scene groups onto ``image``, scaling coordinates by ``k``."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(image, "RGBA")
    for group in groups:
        for s in group.shapes:
            if isinstance(s, _Circle):
                x, y = s.x * k, s.y * k
                if s.stroke:
                    w = s.width * k
                    r = s.r * k + w / 2
                    if s.fill:
                        inner = s.r * k - w / 2
                        draw.ellipse(
                            (x - inner, y - inner, x + inner, y + inner), fill=_rgba(s.fill, 1.0)
                        )
                    draw.ellipse(
                        (x - r, y - r, x + r, y + r),
                        outline=_rgba(s.stroke, s.opacity),
                        width=max(1, round(w)),
                    )
                else:
                    r = s.r * k
                    draw.ellipse(
                        (x - r, y - r, x + r, y + r), fill=_rgba(s.fill or _PAGE, s.opacity)
                    )
            elif isinstance(s, _Line):
                pts = [(x * k, y * k) for x, y in s.points]
                color = _rgba(s.stroke, s.opacity)
                w = s.width * k
                if s.opacity < 1:
                    # Overlapping caps would blend twice: draw opaque on a mask.
                    _blend_line(image, pts, w, color)
                    draw = ImageDraw.Draw(image, "RGBA")
                    continue
                draw.line(pts, fill=color, width=max(1, round(w)), joint="curve")
                r = w / 2
                if r >= 1.5:
                    for x, y in (pts[0], pts[-1]):
                        draw.ellipse((x - r, y - r, x + r, y + r), fill=color)
            elif isinstance(s, _Polygon):
                draw.polygon([(x * k, y * k) for x, y in s.points], fill=_rgba(s.fill, s.opacity))
            else:
                # Centre the ink box by hand: bitmap fonts (Pillow without
                # FreeType) take no ``anchor``.
                font = _font(max(6, round(s.size * k)))
                left, top, right, bottom = draw.textbbox((0, 0), s.text, font=font)
                shift = {"start": 0.0, "middle": 0.5, "end": 1.0}[s.anchor] * (right - left)
                xy = (s.x * k - shift - left, s.y * k - (bottom - top) / 2 - top)
                draw.text(xy, s.text, fill=_rgba(s.fill, 1.0), font=font)


def _blend_line(
    image: Image.Image, pts: list[tuple[float, float]], w: float, color: tuple[int, ...]
) -> None:
    """A translucent round-capped line, blended once even where parts overlap."""
    from PIL import Image as PILImage
    from PIL import ImageDraw

    r = w / 2
    xs = [x for x, _ in pts]
    ys = [y for _, y in pts]
    box = (
        max(0, int(min(xs) - r - 2)),
        max(0, int(min(ys) - r - 2)),
        min(image.width, int(max(xs) + r + 3)),
        min(image.height, int(max(ys) + r + 3)),
    )
    mask = PILImage.new("L", (box[2] - box[0], box[3] - box[1]), 0)
    md = ImageDraw.Draw(mask)
    local = [(x - box[0], y - box[1]) for x, y in pts]
    md.line(local, fill=color[3], width=max(1, round(w)), joint="curve")
    for x, y in (local[0], local[-1]):
        md.ellipse((x - r, y - r, x + r, y + r), fill=color[3])
    solid = PILImage.new("RGB", mask.size, color[:3])
    image.paste(solid, box, mask)


@lru_cache(maxsize=8)
def _raster_background(size: int) -> Image.Image:
    from PIL import Image as PILImage

    lay = _layout(size)
    k = _SUPERSAMPLE
    image = PILImage.new("RGB", (lay.width * k, lay.height * k), _rgba(_PAGE, 1.0)[:3])
    _draw_shapes(image, _board_scene(size, True), k)
    return image


def rgb_board(
    state: State,
    size: int = 480,
    highlight: Iterable[PointLike] = (),
    last_action: ActionLike | None = None,
    show_legal: bool = False,
) -> np.ndarray:
    """The position as an ``(H, W, 3)`` ``uint8`` image, ``W == size``.

    The same picture as :func:`svg_board` (with coordinates), drawn with
    Pillow at twice the size and reduced for antialiasing; the static board is
    drawn once per size and cached.
    """
    lay = _layout(size)
    image = _raster_background(size).copy()
    groups = _scene(state, size, highlight, last_action, show_legal, True)
    static = len(_board_scene(size, True))
    _draw_shapes(image, groups[static:], _SUPERSAMPLE)
    small = image.reduce(_SUPERSAMPLE)
    assert small.size == (lay.width, lay.height)
    return np.asarray(small, dtype=np.uint8)


# --- text ---------------------------------------------------------------------

_RESET: Final = "\x1b[0m"
_BG_BOARD: Final = "\x1b[48;5;137m"
_BG_HIGHLIGHT: Final = "\x1b[48;5;71m"
_BG_LAST: Final = "\x1b[48;5;167m"
_BG_ROW: Final = "\x1b[48;5;179m"
_FG: Final = {
    ".": "\x1b[38;5;180m",
    "*": "\x1b[1;38;5;231m",
    "R": "\x1b[1;38;5;231m",
    "M": "\x1b[1;38;5;231m",
    "r": "\x1b[1;38;5;16m",
    "m": "\x1b[1;38;5;16m",
}
_CELL: Final = 3


def _action_points(action: int) -> tuple[int, ...]:
    """The points an action touches (for marking the last action)."""
    if action < MOVE_OFFSET:
        return (action,)
    if action < ROW_OFFSET:
        return MOVE_PAIRS[action - MOVE_OFFSET]
    if action < RING_OFFSET:
        return SEGMENTS[action - ROW_OFFSET]
    if action < PASS_ACTION:
        return (action - RING_OFFSET,)
    return ()


def ansi_board(
    state: State,
    color: bool = True,
    highlight: Iterable[PointLike] = (),
    last_action: ActionLike | None = None,
) -> str:
    """The position as text: 11 rows (11 at the top), a letter row, a status line.

    Columns are aligned as in the rules' diagram.  Symbols: ``.`` empty,
    ``R``/``r`` White/Black ring, ``M``/``m`` White/Black marker, ``*`` a
    highlighted empty point, ``(X)`` a highlighted piece, ``[X]`` a point of
    the last action.  With ``color=False`` the text is plain ASCII; with
    ``color=True`` the same characters carry ANSI colours (256-colour palette).
    """
    marked = {_to_point(p) for p in highlight}
    last = _to_action(last_action)
    last_points = set(_action_points(last)) if last is not None else set()
    row_points = {p for a in state.pending_rows() for p in SEGMENTS[a - ROW_OFFSET]}
    lines = []
    for n in range(11, 0, -1):
        cells = [f"{n:>2} "]
        for c in range(11):
            p = POINT_INDEX.get((c, n))
            if p is None:
                cells.append(" " * _CELL)
                continue
            piece = state.piece_at(p)
            char = piece or ("*" if p in marked else ".")
            if p in last_points:
                text = f"[{char}]"
            elif p in marked and piece is not None:
                text = f"({char})"
            else:
                text = f" {char} "
            if color:
                if p in last_points:
                    bg = _BG_LAST
                elif p in marked:
                    bg = _BG_HIGHLIGHT
                elif p in row_points:
                    bg = _BG_ROW
                else:
                    bg = _BG_BOARD
                text = f"{bg}{_FG[char]}{text}{_RESET}"
            cells.append(text)
        lines.append("".join(cells).rstrip())
    lines.append("   " + "".join(f" {letter} " for letter in COLUMN_LETTERS).rstrip())
    status = describe(state)
    if last is not None:
        status += f" · last {action_to_str(last)}"
    if row_points:
        status += " · rows " + " ".join(action_to_str(a) for a in state.pending_rows())
    lines.append(status.replace("·", "|"))  # keep the text ASCII apart from colour codes
    return "\n".join(lines)
