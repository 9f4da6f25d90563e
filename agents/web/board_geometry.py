"""The board's geometry for the page, taken from the project's renderer.

The page draws pieces, targets and the analysis overlay itself (it must react
to clicks and flip the board), but the board, its grid and its coordinates
come from :func:`yinsh_env.render.svg_board`, and every point's centre from
:func:`yinsh_env.render.point_xy`, so the page and the notebooks' pictures
share one layout.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any

from yinsh_env import State
from yinsh_env.engine.geometry import POINT_NAMES
from yinsh_env.render import picture_size, point_xy, svg_board

_SVG = "{http://www.w3.org/2000/svg}"
#: Width of the board the page draws, in SVG user units.
BOARD_SIZE = 600


@lru_cache(maxsize=1)
def board_geometry(size: int = BOARD_SIZE) -> dict[str, Any]:
    """Sizes, point centres, the static board as SVG markup, and the coordinate labels."""
    root = ET.fromstring(svg_board(State(), size=size))
    static: list[str] = []
    labels: list[dict[str, Any]] = []
    for group in root.iter(f"{_SVG}g"):
        cls = group.get("class", "")
        if cls in ("board", "grid"):
            ET.register_namespace("", _SVG[1:-1])
            static.append(ET.tostring(group, encoding="unicode"))
        elif cls == "coordinates":
            labels.extend(
                {
                    "text": text.text or "",
                    "x": float(text.get("x", 0)),
                    "y": float(text.get("y", 0)),
                    "size": float(text.get("font-size", 12)),
                }
                for text in group.iter(f"{_SVG}text")
            )
    centres = [point_xy(name, size) for name in POINT_NAMES]
    points = [
        {"name": name, "x": round(x, 2), "y": round(y, 2)}
        for name, (x, y) in zip(POINT_NAMES, centres)
    ]
    xs = [x for x, _ in centres]
    ys = [y for _, y in centres]
    a2, a3 = point_xy("A2", size), point_xy("A3", size)
    width, height = picture_size(size)
    return {
        "width": width,
        "height": height,
        "unit": round(abs(a3[1] - a2[1]), 3),
        "center": [(min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2],
        "points": points,
        "static_svg": "".join(static),
        "labels": labels,
    }
