"""What every picture of a position shares: screen geometry, inputs, the caption.

Screen geometry: the point in column ``c`` with number ``n`` is drawn at
``x = c * sqrt(3)/2``, ``y = -(n - c/2)`` (in units of the distance between
neighbouring points), which makes columns vertical, numbers increase upwards
and the three line directions meet at 60 degrees.  :class:`Layout` maps those
units to the pixels of one picture width.  The SVG and raster back ends draw
with it; the text board (:mod:`.ansi`) shares the inputs and the caption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Protocol

import numpy as np

from yinsh_env.engine.actions import PASS_ACTION, action_to_str, parse_point, str_to_action
from yinsh_env.engine.errors import NotationError, bounded_repr
from yinsh_env.engine.geometry import N_POINTS, POINTS
from yinsh_env.engine.vocabulary import Phase, Player, Termination

__all__ = [
    "CAPTION_BAND",
    "ActionLike",
    "Drawable",
    "Layout",
    "PointLike",
    "describe",
    "check_picture_size",
    "layout_for",
    "picture_size",
    "point_xy",
    "to_action",
    "to_point",
]

PointLike = int | str
ActionLike = int | str


class Drawable(Protocol):
    """What a picture reads of a position: :class:`~yinsh_env.engine.state.State` is one.

    Stated here, so the pictures need no import of the engine (which imports
    them for ``str(state)`` and ``_repr_svg_``).
    """

    @property
    def to_act(self) -> Player: ...
    @property
    def phase(self) -> Phase: ...
    @property
    def removed(self) -> list[int]: ...
    @property
    def pool(self) -> int: ...
    @property
    def rings_to_win(self) -> int: ...
    @property
    def winner(self) -> Player | None: ...
    @property
    def end_reason(self) -> Termination | None: ...

    def legal_actions(self) -> list[int]: ...
    def pending_rows(self) -> list[int]: ...
    def piece_at(self, point: int) -> str | None: ...
    def ring_points(self, player: int) -> list[int]: ...
    def marker_points(self, player: int) -> list[int]: ...
    def to_text(self) -> str: ...


# --- layout -------------------------------------------------------------------

_SQRT3_2: Final = math.sqrt(3) / 2
#: Margins around the points' bounding box, in units of the point spacing.
_MARGIN_X: Final = 1.15
_MARGIN_TOP: Final = 0.8
_MARGIN_BOTTOM: Final = 1.35  # room for the column letters
CAPTION_BAND: Final = 0.85

_RAW_XY: Final = tuple((c * _SQRT3_2, -(n - c / 2)) for c, n in POINTS)
_MIN_X: Final = min(x for x, _ in _RAW_XY)
_MAX_X: Final = max(x for x, _ in _RAW_XY)
_MIN_Y: Final = min(y for _, y in _RAW_XY)
_MAX_Y: Final = max(y for _, y in _RAW_XY)
_WIDTH_UNITS: Final = _MAX_X - _MIN_X + 2 * _MARGIN_X
_HEIGHT_UNITS: Final = _MAX_Y - _MIN_Y + _MARGIN_TOP + _MARGIN_BOTTOM + CAPTION_BAND


def picture_size(size: int) -> tuple[int, int]:
    """(width, height) in pixels of a picture drawn at ``size`` (its width)."""
    return size, round(size * _HEIGHT_UNITS / _WIDTH_UNITS)


@dataclass(frozen=True)
class Layout:
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
    return layout_for(size).point(to_point(point))


#: Widest picture drawn, in pixels (a raster of 100,000 wanted about 30 GB).
MAX_PICTURE_SIZE = 8192


def check_picture_size(size: object) -> int:
    """``size`` if it is a picture width of 64..:data:`MAX_PICTURE_SIZE` pixels, else ValueError."""
    if isinstance(size, bool) or not isinstance(size, int) or not 64 <= size <= MAX_PICTURE_SIZE:
        raise ValueError(
            f"picture size must be an integer of 64..{MAX_PICTURE_SIZE} pixels, "
            f"got {bounded_repr(size)}"
        )
    return size


@lru_cache(maxsize=16)
def layout_for(size: int) -> Layout:
    width, height = picture_size(check_picture_size(size))
    return Layout(width, height, size / _WIDTH_UNITS)


def to_point(point: PointLike) -> int:
    if isinstance(point, str):
        return parse_point(point)
    if isinstance(point, bool) or not isinstance(point, (int, np.integer)):
        raise NotationError(f"highlight entry {point!r} is not a point index or name")
    if not 0 <= int(point) < N_POINTS:
        raise NotationError(f"point index {point!r} is outside 0..{N_POINTS - 1}")
    return int(point)


def to_action(action: ActionLike | None) -> int | None:
    if action is None:
        return None
    if isinstance(action, str):
        return str_to_action(action)
    action_to_str(action)  # validates the index, raising NotationError
    return int(action)


def describe(state: Drawable) -> str:
    """One line on the position: who acts and how, rings removed, pool."""
    player = Player(state.to_act).label
    phase = state.phase
    if phase == Phase.OVER:
        winner = state.winner
        head = "Draw" if winner is None else f"{winner.label} wins"
        head = f"Game over: {head} ({state.end_reason})"
    elif phase == Phase.PLACE:
        head = f"{player} to place a ring"
    elif phase == Phase.MOVE:
        head = (
            f"{player} must pass" if state.legal_actions() == [PASS_ACTION] else f"{player} to move"
        )
    elif phase == Phase.ROW:
        head = f"{player} to remove a row"
    elif phase == Phase.RING:
        head = f"{player} to remove a ring"
    else:  # pragma: no cover - every phase is listed above
        head = f"{player} to act ({Phase(phase).text})"
    white, black = state.removed
    return f"{head} · rings removed W{white}-B{black} of {state.rings_to_win} · pool {state.pool}"
