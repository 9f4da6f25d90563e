"""The flat action space and its notation."""

from __future__ import annotations

import pytest

from yinsh_env import (
    ACTION_SYMMETRIES,
    MOVE_OFFSET,
    N_ACTIONS,
    PASS_ACTION,
    RING_OFFSET,
    ROW_OFFSET,
    NotationError,
    action_kind,
    action_to_str,
    str_to_action,
)


def test_layout() -> None:
    assert (MOVE_OFFSET, ROW_OFFSET, RING_OFFSET, PASS_ACTION, N_ACTIONS) == (
        85, 85 + 1848, 85 + 1848 + 123, 85 + 1848 + 123 + 85, 2142,
    )  # fmt: skip
    kinds = [action_kind(a) for a in range(N_ACTIONS)]
    assert [kinds.count(k) for k in ("place", "move", "row", "ring", "pass")] == [
        85,
        1848,
        123,
        85,
        1,
    ]


def test_round_trip_every_action_in_any_case() -> None:
    names = [action_to_str(a) for a in range(N_ACTIONS)]
    assert len(set(names)) == N_ACTIONS
    for a, name in enumerate(names):
        assert str_to_action(name) == a
        assert str_to_action(name.lower()) == a
        assert str_to_action(f"  {name.upper()} ") == a


@pytest.mark.parametrize(
    ("text", "expected"),
    [("E5", "E5"), ("e5-e8", "E5-E8"), ("XE5-E9", "xE5-E9"), ("xe9-e5", "xE5-E9"),
     ("xC3-G3", "xC3-G3"), ("xC3-G7", "xC3-G7"), ("xe5", "xE5"), ("PASS", "pass")],
)  # fmt: skip
def test_notation_examples(text: str, expected: str) -> None:
    assert action_to_str(str_to_action(text)) == expected


@pytest.mark.parametrize(
    "bad", ["", "Z9", "E11", "A1", "E5-F7", "E5-E5", "xE5-E8", "xE5-E9-E10", "pas", "E5E8", "x"]
)
def test_malformed_or_unknown_strings_raise_naming_the_input(bad: str) -> None:
    with pytest.raises(NotationError) as info:
        str_to_action(bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [-1, N_ACTIONS, 10**9])
def test_out_of_range_index_raises(bad: int) -> None:
    with pytest.raises(ValueError, match=str(bad)):
        action_to_str(bad)


def test_row_ends_are_lower_first() -> None:
    for a in range(ROW_OFFSET, RING_OFFSET):
        first, second = action_to_str(a)[1:].split("-")
        key = lambda p: (p[0], int(p[1:]))  # noqa: E731
        assert key(first) < key(second)


def test_action_symmetries_are_permutations_keeping_kinds() -> None:
    for perm in ACTION_SYMMETRIES:
        assert sorted(perm) == list(range(N_ACTIONS))
        assert all(action_kind(perm[a]) == action_kind(a) for a in range(N_ACTIONS))
    assert ACTION_SYMMETRIES[0] == tuple(range(N_ACTIONS))
