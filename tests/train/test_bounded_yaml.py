"""The config loader refuses a key given twice (yaml.safe_load keeps the last one silently)."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.bounded_yaml import load_yaml
from train.config import ConfigError, load_config


@pytest.mark.parametrize(
    ("text", "key", "lines"),
    [
        ("a: 1\nb: 2\na: 3\n", "a", "lines 1 and 3"),
        ("a: {x: 1, x: 2}\n", "x", "lines 1 and 1"),
        ("s:\n  lr: 1\n  lr: 2\n", "lr", "lines 2 and 3"),
        ('a: 1\n"a": 2\n', "a", "lines 1 and 2"),
        ("- {k: 1}\n- {k: 2, k: 3}\n", "k", "lines 2 and 2"),
    ],
)
def test_a_key_given_twice_is_refused_naming_it(text: str, key: str, lines: str) -> None:
    with pytest.raises(ValueError, match=f"key '{key}' given twice \\({lines}\\)"):
        load_yaml(text)


@pytest.mark.parametrize(
    "text",
    ["a: [1, 1]\n", "- {a: 1}\n- {a: 2}\n", "a: {k: 1}\nb: {k: 1}\n", "? a\n: {a: 1}\nk: [a, a]\n"],
)
def test_the_same_key_in_different_mappings_is_fine(text: str) -> None:
    assert load_yaml(text) is not None


def test_a_config_file_with_a_key_twice_names_the_file_the_key_and_the_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("train:\n  iterations: 3\n  iterations: 30\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert str(path) in message and "'iterations' given twice (lines 2 and 3)" in message


@pytest.mark.parametrize(
    ("text", "read"),
    [("3_0", 30), ("1:30", 90), ("010", 8), ("0x10", 16), ("0b11", 3), ("1_0.5", 10.5)],
)
def test_numbers_yaml_reads_as_something_else_are_refused(text: str, read: object) -> None:
    with pytest.raises(ValueError, match=f"reads as {read!r} in YAML"):
        load_yaml(f"train:\n  iterations: {text}\n")
    assert load_yaml(f"name: '{text}'\n") == {"name": text}  # quoted: text, as written


def test_an_override_with_such_a_number_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("train:\n  iterations: 3\n")
    with pytest.raises(ConfigError, match="'3_0' on line 1 reads as 30"):
        load_config(path, ["train.iterations=3_0"])
