"""Pictures of positions: SVG (notebooks, files), raster (RGB arrays), text (terminals).

All three draw the same thing; each output is its own module over one shared
layout (:mod:`yinsh_env.render.layout`: screen geometry, inputs, caption):

* :func:`svg_board` (:mod:`yinsh_env.render.svg`) returns SVG text; ``State._repr_svg_`` uses
  it, so a position shows itself inline in a notebook.
* :func:`rgb_board` (:mod:`yinsh_env.render.raster`) returns an ``(H, W, 3)`` ``uint8`` array
  drawn with Pillow, for the environments' ``rgb_array`` mode and videos.
* :func:`ansi_board` (:mod:`yinsh_env.render.ansi`) returns a text board; ``str(state)`` is
  its plain-ASCII form.

SVG and raster are built from one scene of shapes (:mod:`yinsh_env.render.scene`), so they
never disagree.  ``highlight`` marks points (indices or names, e.g. a ring's
legal destinations), ``last_action`` marks the last action, ``show_legal``
marks what the player to act may choose; in the ``row`` phase the candidate
rows are outlined.
"""

from __future__ import annotations

from yinsh_env.render.ansi import ansi_board
from yinsh_env.render.layout import describe, picture_size, point_xy
from yinsh_env.render.raster import rgb_board
from yinsh_env.render.svg import svg_board

__all__ = ["ansi_board", "describe", "picture_size", "point_xy", "rgb_board", "svg_board"]
