"""The position as an SVG document: notebooks (``State._repr_svg_``), files, the web."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from xml.sax.saxutils import escape

from yinsh_env.render.layout import ActionLike, Drawable, PointLike, layout_for
from yinsh_env.render.scene import PAGE, Circle, Group, Line, Polygon, Shape, board_scene, scene

__all__ = ["svg_board"]


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _svg_shape(shape: Shape) -> str:
    if isinstance(shape, Circle):
        attrs = f'cx="{_f(shape.x)}" cy="{_f(shape.y)}" r="{_f(shape.r)}"'
        attrs += f' fill="{shape.fill or "none"}"'
        if shape.stroke:
            attrs += f' stroke="{shape.stroke}" stroke-width="{_f(shape.width)}"'
        if shape.opacity < 1:
            attrs += f' opacity="{shape.opacity:g}"'
        return f"<circle {attrs}/>"
    if isinstance(shape, Line):
        pts = " ".join(f"{_f(x)},{_f(y)}" for x, y in shape.points)
        opacity = f' stroke-opacity="{shape.opacity:g}"' if shape.opacity < 1 else ""
        return (
            f'<polyline points="{pts}" fill="none" stroke="{shape.stroke}" '
            f'stroke-width="{_f(shape.width)}" stroke-linecap="round" '
            f'stroke-linejoin="round"{opacity}/>'
        )
    if isinstance(shape, Polygon):
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
    state: Drawable,
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
    lay = layout_for(size)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="yinsh-board" '
        f'width="{lay.width}" height="{lay.height}" viewBox="0 0 {lay.width} {lay.height}" '
        'font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(state.to_text())}</title>",
        f'<rect class="page" width="{lay.width}" height="{lay.height}" fill="{PAGE}"/>',
    ]
    groups = scene(state, size, highlight, last_action, show_legal, coordinates)
    out.append(_svg_static(size, coordinates))
    out.append(_svg_groups(groups[len(board_scene(size, coordinates)) :]))
    out.append("</svg>")
    return "\n".join(out)


def _svg_groups(groups: Iterable[Group]) -> str:
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
    return _svg_groups(board_scene(size, coordinates))
