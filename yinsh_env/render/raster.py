"""The position as an RGB array drawn with Pillow (the environments' ``rgb_array`` mode).

Pillow is imported inside the functions that draw, so that importing the
engine (which draws text and SVG) does not load it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Final

import numpy as np

from yinsh_env.render.layout import ActionLike, Drawable, PointLike, layout_for
from yinsh_env.render.scene import PAGE, Circle, Group, Line, Polygon, board_scene, scene

if TYPE_CHECKING:
    from PIL import Image, ImageFont


__all__ = ["rgb_board"]


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


def _draw_shapes(image: Image.Image, groups: Iterable[Group], k: float) -> None:
    """Draw scene groups onto ``image``, scaling coordinates by ``k``."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(image, "RGBA")
    for group in groups:
        for s in group.shapes:
            if isinstance(s, Circle):
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
                        (x - r, y - r, x + r, y + r), fill=_rgba(s.fill or PAGE, s.opacity)
                    )
            elif isinstance(s, Line):
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
            elif isinstance(s, Polygon):
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

    lay = layout_for(size)
    k = _SUPERSAMPLE
    image = PILImage.new("RGB", (lay.width * k, lay.height * k), _rgba(PAGE, 1.0)[:3])
    _draw_shapes(image, board_scene(size, True), k)
    return image


def rgb_board(
    state: Drawable,
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
    lay = layout_for(size)
    image = _raster_background(size).copy()
    groups = scene(state, size, highlight, last_action, show_legal, True)
    static = len(board_scene(size, True))
    _draw_shapes(image, groups[static:], _SUPERSAMPLE)
    small = image.reduce(_SUPERSAMPLE)
    assert small.size == (lay.width, lay.height)
    return np.asarray(small, dtype=np.uint8)
