"""The pins CI installs (.ci/constraints.txt) cover every dependency pyproject.toml
names and agree with its ranges, so a refresh that drops or breaks one fails here
rather than on the next fresh machine; and .ci/install checks the file before pip
reads it, naming a malformed line (.ci/check_constraints.py)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_constraints", CHECKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKER = ROOT / ".ci" / "check_constraints.py"
#: Malformed lines, and the start of what each check says of them.
MALFORMED = [
    "numpy==2.4.6 ; python_version >",
    "numpy==2.4.6 ; python_verison > '3'",
    "numpy==2.4.6 ; (python_version > '3'",
    "numpy==2.4.6 ;",
    "numpy===",
    "numpy 2.4.6",
    "numpy==2.4.6 ; python_version > '3' and",
]


@pytest.mark.parametrize("careful", [False, True], ids=["packaging", "careful-parse"])
def test_every_line_of_the_shipped_pins_passes_both_checks(careful: bool) -> None:
    checker = _checker()
    check = checker.careful_check if careful else checker.packaging_check()
    assert list(checker.problems(CONSTRAINTS.read_text(), check)) == []


@pytest.mark.parametrize("careful", [False, True], ids=["packaging", "careful-parse"])
@pytest.mark.parametrize("line", MALFORMED)
def test_a_malformed_line_is_named_by_its_number(careful: bool, line: str) -> None:
    checker = _checker()
    check = checker.careful_check if careful else checker.packaging_check()
    text = (
        f"absl-py==2.5.1\n    # via\n    #   x\n{line}   # a comment\nzipp==3.1 ; os_name == 'nt'\n"
    )
    found = list(checker.problems(text, check))
    assert [(number, shown) for number, shown, _ in found] == [(4, line)]


def test_options_comments_and_joined_lines_are_read_as_pip_reads_them() -> None:
    checker = _checker()
    text = (
        "--index-url https://x\n# a\nnumpy==1.0 \\\n  ; python_version >= '3' # b\n"
        "zipp==3 --hash=sha256:ab\n"
    )
    assert list(checker.logical_lines(text)) == [
        (1, "--index-url https://x"),
        (3, "numpy==1.0   ; python_version >= '3'"),
        (5, "zipp==3 --hash=sha256:ab"),
    ]
    assert [checker.requirement_part(line) for _, line in checker.logical_lines(text)] == [
        "",
        "numpy==1.0   ; python_version >= '3'",
        "zipp==3",
    ]


def test_install_checks_the_pins_before_pip_or_apt_get_naming_the_line(tmp_path: Path) -> None:
    ci = tmp_path / ".ci"
    ci.mkdir()
    for name in ("install", "check_constraints.py"):
        shutil.copy(ROOT / ".ci" / name, ci / name)
    (ci / "constraints.txt").write_text(
        "absl-py==2.5.1\n    # via x\nnumpy==2.4.6 ; python_version >\n"
    )
    # Stand-ins that record any call: pip through $PYTHON, and apt-get and sudo on PATH.
    calls = tmp_path / "calls.log"
    stubs = tmp_path / "bin"
    stubs.mkdir()
    python = stubs / "python"
    python.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-m" ]; then echo "python $*" >> {calls}; exit 1; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    for name in ("apt-get", "sudo"):
        (stubs / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\nexit 1\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    env = {**os.environ, "PYTHON": str(python), "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", str(ci / "install")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        ".ci/constraints.txt: line 3: 'numpy==2.4.6 ; python_version >': not a valid requirement: "
    )
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not calls.exists(), calls.read_text()


def test_without_packaging_the_check_uses_pips_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pip._vendor.packaging.requirements")
    monkeypatch.setitem(sys.modules, "packaging.requirements", None)  # import fails
    check = _checker().packaging_check()
    assert check is not None
    assert check("numpy==2.4.6 ; python_version >") is not None
    assert check("numpy==2.4.6 ; python_version > '3'") is None
