"""The pins CI installs (.ci/constraints.txt) cover every dependency pyproject.toml
names and agree with its ranges, so a refresh that drops or breaks one fails here
rather than on the next fresh machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def pins(text: str) -> dict[str, Version]:
    """``name == version`` lines of a pip-compile output, by canonical name."""
    found: dict[str, Version] = {}
    for line in text.splitlines():
        match = PIN.match(line.strip())
        if match:
            found[canonicalize_name(match.group(1))] = Version(match.group(2))
    return found


def declared() -> list[Requirement]:
    """Every requirement of the project and its extras, other than the project itself."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    texts = [*project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        texts += extra
    return [r for r in map(Requirement, texts) if canonicalize_name(r.name) != "yinsh"]


def unmet(requirements: list[Requirement], pinned: dict[str, Version]) -> list[str]:
    """The requirements the pins leave out or pin outside their range."""
    problems = []
    for requirement in requirements:
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None:
            problems.append(f"{requirement.name}: not pinned")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement.name}: pinned {version}, wants {requirement.specifier}")
    return problems


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    assert unmet(declared(), pins(CONSTRAINTS.read_text())) == []


def test_the_project_itself_is_never_pinned() -> None:
    """Its extras name it (``yinsh[train]``), so pip-compile would pin ``yinsh @ file://...``
    of the machine that compiled, and pip would then refuse the checkout it installs."""
    text = CONSTRAINTS.read_text()
    assert not [line for line in text.splitlines() if re.match(r"\s*yinsh\b", line)]


def test_torch_is_pinned_to_the_cpu_build() -> None:
    assert str(pins(CONSTRAINTS.read_text())["torch"]).endswith("+cpu")


def test_the_check_can_fail() -> None:
    pinned = pins("numpy==1.20.0\n    # via x\nfoo-bar==2.0 ; python_version >= '3'\n")
    assert pinned == {"numpy": Version("1.20.0"), "foo-bar": Version("2.0")}
    problems = unmet(
        [Requirement("numpy>=1.24"), Requirement("Foo_Bar>=1"), Requirement("x")], pinned
    )
    assert problems == ["numpy: pinned 1.20.0, wants >=1.24", "x: not pinned"]
