"""Pictures of positions: SVG structure, text layout, raster pixels."""

from __future__ import annotations

import math
import random
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from yinsh_env import MOVE_OFFSET, NotationError, State, action_to_str
from yinsh_env.engine.geometry import LINE_DIRECTIONS, POINT_INDEX, POINT_NAMES, POINTS
from yinsh_env.render import (
    ansi_board,
    picture_size,
    point_xy,
    rgb_board,
    svg_board,
)

# White rings A2 D4 G7 I6 K7, Black rings B2 F6 H6 J8 K9, a white marker on C3,
# black markers E5..E8; White to move.
KNOWN = "R3/1r5/2M5/3R5/4mmmm2/4r4/5R4/3r5/2R5/3r3/R1r1 w move - 0-0 46 0 3"
WHITE_RINGS = {"A2", "D4", "G7", "I6", "K7"}
BLACK_RINGS = {"B2", "F6", "H6", "J8", "K9"}
WHITE_MARKERS = {"C3"}
BLACK_MARKERS = {"E5", "E6", "E7", "E8"}
# Six white markers E1..E6 in a column: two candidate rows for White.
ROWS = "4/7/8/9/MMMMMM4/9/10/9/R7/Rr5/Rrrr w row w 0-0 45 0 3"

SVG = "{http://www.w3.org/2000/svg}"
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def random_states(seed: int, count: int) -> list[tuple[State, int]]:
    """Positions (with the action that led there) from seeded random games."""
    rng = random.Random(seed)
    out: list[tuple[State, int]] = []
    state = State()
    while len(out) < count:
        if state.is_terminal:
            state = State()
        action = rng.choice(state.legal_actions())
        state.apply(action)
        out.append((state.copy(), action))
    return out


def groups(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]


# --- geometry ------------------------------------------------------------------


def test_points_form_a_regular_triangular_lattice_with_numbers_rising() -> None:
    distances = []
    for c, n in POINTS:
        x0, y0 = point_xy(POINT_INDEX[(c, n)])
        vectors = []
        for dc, dn in LINE_DIRECTIONS:
            q = POINT_INDEX.get((c + dc, n + dn))
            if q is None:
                break
            x1, y1 = point_xy(q)
            vectors.append((x1 - x0, y1 - y0))
            distances.append(math.hypot(x1 - x0, y1 - y0))
        if len(vectors) == 3:
            up, row, diag = vectors
            assert up[0] == pytest.approx(0) and up[1] < 0  # columns vertical, numbers rise
            angle = math.degrees(math.atan2(up[1], up[0]) - math.atan2(diag[1], diag[0]))
            assert abs(angle) == pytest.approx(60)
            angle = math.degrees(math.atan2(diag[1], diag[0]) - math.atan2(row[1], row[0]))
            assert abs(angle) == pytest.approx(60)
    assert max(distances) == pytest.approx(min(distances))


def test_every_point_lies_inside_the_picture() -> None:
    width, height = picture_size(300)
    for p in range(len(POINTS)):
        x, y = point_xy(p, 300)
        assert 0 < x < width and 0 < y < height


# --- SVG -----------------------------------------------------------------------


def test_svg_draws_each_piece_on_its_point() -> None:
    svg = svg_board(State.from_text(KNOWN))
    for cls, expected in (
        ("ring white", WHITE_RINGS),
        ("ring black", BLACK_RINGS),
        ("marker white", WHITE_MARKERS),
        ("marker black", BLACK_MARKERS),
    ):
        found = groups(svg, cls)
        assert {g.get("data-point") for g in found} == expected
        assert len(found) == len(expected)


def test_svg_size_coordinates_and_caption() -> None:
    state = State.from_text(KNOWN)
    root = ET.fromstring(svg_board(state, size=360))
    assert (int(root.get("width", 0)), int(root.get("height", 0))) == picture_size(360)
    labels = {t.text for g in groups(svg_board(state), "coordinates") for t in g}
    assert labels == set("ABCDEFGHIJK") | {str(n) for n in range(1, 12)}
    assert not groups(svg_board(state, coordinates=False), "coordinates")
    caption = " ".join(t.text or "" for g in groups(svg_board(state), "caption") for t in g)
    assert "White to move" in caption and "pool 46" in caption and "W0-B0" in caption


def test_svg_highlight_and_last_move_elements_only_when_asked() -> None:
    state = State.from_text(KNOWN)
    plain = svg_board(state)
    assert not groups(plain, "highlight") and not groups(plain, "last-action")
    svg = svg_board(state, highlight=["F5", POINT_INDEX[(3, 3)], "G7"], last_action="D4-D7")
    (marks,) = groups(svg, "highlight")
    assert len(marks) == 3
    (arrow,) = groups(svg, "last-action")
    assert [child.tag for child in arrow] == [f"{SVG}polyline", f"{SVG}polygon"]
    # The arrow runs from D4 towards D7.
    start = arrow[0].get("points", "").split()[0].split(",")
    assert [float(v) for v in start] == pytest.approx(point_xy("D4"), abs=0.1)
    tip = arrow[1].get("points", "").split()[0].split(",")
    x7, y7 = point_xy("D7")
    assert math.hypot(float(tip[0]) - x7, float(tip[1]) - y7) < 0.2 * 480 / 10


def test_svg_marks_placement_and_ring_removal() -> None:
    placed = State().apply_all(["F6"])
    (halo,) = groups(svg_board(placed, last_action="F6"), "last-action")
    assert [float(halo[0].get(k, 0)) for k in ("cx", "cy")] == pytest.approx(point_xy("F6"), 0.1)
    state = State.from_text(KNOWN)
    (cross,) = groups(svg_board(state, last_action="xE4"), "last-action")
    assert len(cross) == 2


def test_svg_show_legal_marks_every_destination() -> None:
    state = State.from_text(KNOWN)
    destinations = {name.split("-")[1] for name in state.legal_action_names()}
    (legal,) = groups(svg_board(state, show_legal=True), "legal")
    centres = {(float(c.get("cx", 0)), float(c.get("cy", 0))) for c in legal}
    expected = {tuple(round(v, 1) for v in point_xy(name)) for name in destinations}
    assert centres == expected
    start = State()
    (legal,) = groups(svg_board(start, show_legal=True), "legal")
    assert len(legal) == len(POINTS)


def test_svg_outlines_candidate_rows() -> None:
    state = State.from_text(ROWS)
    (rows,) = groups(svg_board(state), "pending-rows")
    assert len(rows) == len(state.pending_rows()) == 2
    assert not groups(svg_board(State.from_text(KNOWN)), "pending-rows")


def test_svg_is_valid_xml_for_many_positions() -> None:
    for state, action in random_states(5, 120)[::7]:
        root = ET.fromstring(svg_board(state, last_action=action, show_legal=True))
        assert root.tag == f"{SVG}svg"
        assert len(groups(svg_board(state), "ring white")) == len(state.ring_points(0))
        assert len(groups(svg_board(state), "marker black")) == len(state.marker_points(1))


def test_repr_svg_is_svg_board() -> None:
    state = State.from_text(KNOWN)
    assert state._repr_svg_() == svg_board(state)


def test_bad_decorations_raise_clear_errors() -> None:
    state = State.from_text(KNOWN)
    with pytest.raises(NotationError, match="Z9"):
        svg_board(state, highlight=["Z9"])
    with pytest.raises(NotationError, match="85"):
        svg_board(state, highlight=[85])
    with pytest.raises(NotationError, match="99999"):
        svg_board(state, last_action=99999)
    with pytest.raises(ValueError, match="size"):
        svg_board(state, size=10)


# --- text ----------------------------------------------------------------------


def board_rows(text: str) -> list[str]:
    return text.splitlines()[:11]


def test_ansi_layout_follows_the_rules_diagram() -> None:
    state = State.from_text(KNOWN)
    text = ansi_board(state, color=False)
    lines = text.splitlines()
    assert len(lines) == 13  # 11 rows, the letters, the status line
    assert [int(line[:2]) for line in lines[:11]] == list(range(11, 0, -1))
    assert lines[11].split() == list("ABCDEFGHIJK")
    for p, (c, n) in enumerate(POINTS):
        column = lines[11].index("ABCDEFGHIJK"[c])
        assert lines[11 - n][column] == (state.piece_at(p) or "."), POINT_NAMES[p]
    assert "White to move" in lines[12] and "pool 46" in lines[12]


def test_ansi_symbol_counts() -> None:
    state = State.from_text(KNOWN)
    rows = "".join(board_rows(ansi_board(state, color=False)))
    assert rows.count("R") == len(WHITE_RINGS)
    assert rows.count("r") == len(BLACK_RINGS)
    assert rows.count("M") == len(WHITE_MARKERS)
    assert rows.count("m") == len(BLACK_MARKERS)
    assert rows.count(".") == len(POINTS) - 15


def test_ansi_plain_is_ascii_and_colour_adds_only_codes() -> None:
    for state, action in random_states(2, 60)[::6]:
        plain = ansi_board(state, color=False, last_action=action, highlight=["F6"])
        assert plain.isascii() and "\x1b" not in plain
        coloured = ansi_board(state, color=True, last_action=action, highlight=["F6"])
        assert "\x1b[" in coloured
        stripped = [line.rstrip() for line in ANSI_CODE.sub("", coloured).splitlines()]
        assert stripped == plain.splitlines()
    assert str(state) == ansi_board(state, color=False)


def test_ansi_marks_highlights_and_last_action() -> None:
    state = State.from_text(KNOWN)
    move = next(a for a in state.legal_actions() if a >= MOVE_OFFSET)
    rows = "\n".join(board_rows(ansi_board(state, color=False, highlight=["F5", "G7"])))
    assert rows.count("*") == 1 and rows.count("(R)") == 1
    text = ansi_board(state, color=False, last_action=move)
    assert "\n".join(board_rows(text)).count("[") == 2
    assert f"last {action_to_str(move)}" in text.splitlines()[-1]
    rows_text = ansi_board(State.from_text(ROWS), color=False)
    assert "rows xE1-E5 xE2-E6" in rows_text.splitlines()[-1]


# --- raster --------------------------------------------------------------------


def pixel(image: np.ndarray, point: str, dx: float = 0.0, dy: float = 0.0) -> np.ndarray:
    size = image.shape[1]
    x, y = point_xy(point, size)
    unit = math.dist(point_xy("F6", size), point_xy("F7", size))
    return image[round(y + dy * unit), round(x + dx * unit)].astype(int)


def test_rgb_shape_and_type() -> None:
    image = rgb_board(State(), size=300)
    assert image.dtype == np.uint8
    assert image.shape == (picture_size(300)[1], 300, 3)


def test_rgb_draws_pieces_where_they_are() -> None:
    image = rgb_board(State.from_text(KNOWN))
    # Between the grid lines (60 degrees off the column line), 0.2 units out.
    off = (0.2 * math.cos(math.radians(60)), -0.2 * math.sin(math.radians(60)))
    board = pixel(image, "F4", *off)
    assert board.mean() > 150 and abs(board[0] - board[2]) > 30  # the board's warm colour
    assert pixel(image, "C3", *off).min() > 225  # white marker
    assert pixel(image, "E6", *off).max() < 60  # black marker
    assert pixel(image, "D4", 0.36).min() > 225  # white ring, on its stroke
    assert pixel(image, "F6", 0.36).max() < 60  # black ring
    assert np.abs(pixel(image, "D4", *off) - board).max() < 30  # a ring's hole shows the board


def test_rgb_differs_between_positions_and_decorations() -> None:
    (a, _), (b, action) = random_states(9, 40)[-2:]
    image_a, image_b = rgb_board(a), rgb_board(b)
    assert image_a.shape == image_b.shape
    assert np.any(image_a != image_b)
    assert np.any(rgb_board(b, last_action=action) != image_b)
    assert np.any(rgb_board(b, highlight=["F6"]) != image_b)
    assert np.array_equal(rgb_board(b), image_b)  # deterministic, cache untouched
