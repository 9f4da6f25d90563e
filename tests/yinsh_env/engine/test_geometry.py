"""Board geometry derived from the definition: counts, lines and symmetries."""

from __future__ import annotations

import itertools

from yinsh_env.engine import geometry as g


def test_counts_match_the_rules() -> None:
    assert g.N_POINTS == 85
    assert g.N_SEGMENTS == 123
    assert g.N_MOVE_PAIRS == 1848
    assert max(len(line) for line in g.LINES) == 10
    assert max(len(ray) for rays in g.RAYS for ray in rays) == 9
    assert g.N_SYMMETRIES == 12


def test_column_ranges_match_the_rules_table() -> None:
    expected = {
        "A": (2, 5), "B": (1, 7), "C": (1, 8), "D": (1, 9), "E": (1, 10), "F": (2, 10),
        "G": (2, 11), "H": (3, 11), "I": (4, 11), "J": (5, 11), "K": (7, 10),
    }  # fmt: skip
    for letter, (lo, hi) in expected.items():
        numbers = sorted(int(name[1:]) for name in g.POINT_NAMES if name[0] == letter)
        assert numbers == list(range(lo, hi + 1)), letter


def test_neighbours_of_f6() -> None:
    f6 = g.NAME_TO_POINT["F6"]
    neighbours = {g.POINT_NAMES[ray[0]] for ray in g.RAYS[f6]}
    assert neighbours == {"F5", "F7", "E6", "G6", "E5", "G7"}


def test_every_segment_lies_on_a_line_and_is_distinct() -> None:
    assert len({frozenset(s) for s in g.SEGMENTS}) == 123
    for seg in g.SEGMENTS:
        assert any(tuple(line[i : i + 5]) == seg for line in g.LINES for i in range(len(line) - 4))


def test_segments_per_line_add_up() -> None:
    assert sum(max(0, len(line) - 4) for line in g.LINES) == 123


def test_move_pairs_are_collinear_distinct_and_sorted() -> None:
    on_a_line = {(a, b) for line in g.LINES for a, b in itertools.permutations(line, 2)}
    assert set(g.MOVE_PAIRS) == on_a_line
    assert list(g.MOVE_PAIRS) == sorted(g.MOVE_PAIRS)


def test_symmetries_are_distinct_permutations_forming_a_group() -> None:
    perms = set(g.SYMMETRIES)
    assert len(perms) == 12
    assert tuple(range(g.N_POINTS)) == g.SYMMETRIES[0]
    for sym in g.SYMMETRIES:
        assert sorted(sym) == list(range(g.N_POINTS))
    for a in g.SYMMETRIES:
        for b in g.SYMMETRIES:
            assert tuple(a[b[p]] for p in range(g.N_POINTS)) in perms


def test_every_symmetry_maps_lines_to_lines() -> None:
    lines = {frozenset(line) for line in g.LINES}
    segments = {frozenset(s) for s in g.SEGMENTS}
    for sym in g.SYMMETRIES:
        assert {frozenset(sym[p] for p in line) for line in lines} == lines
        assert {frozenset(sym[p] for p in s) for s in segments} == segments
        assert sym[g.NAME_TO_POINT["F6"]] == g.NAME_TO_POINT["F6"]


def test_bit_layout_is_one_bit_per_point() -> None:
    assert g.BOARD_MASK.bit_count() == 85
    assert g.bits_to_points(g.points_to_bits([3, 40, 84])) == [3, 40, 84]
