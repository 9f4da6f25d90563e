"""The release: one version everywhere, a license, a changelog, valid citation metadata,
and a wheel that carries every package and plays from any folder once installed, without
torch (``pip install yinsh`` brings none: the shipped network plays its ONNX graphs)."""

from __future__ import annotations

import json
import re
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers import BLOCK_NON_BASE_PACKAGES, NOT_IN_BASE_INSTALL

import yinsh_env

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOTS = ("yinsh_env", "agents", "train")


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _source_packages() -> set[str]:
    """Every directory with an ``__init__.py`` under the project's packages, dotted."""
    found = set()
    for root in PACKAGE_ROOTS:
        for init in (ROOT / root).rglob("__init__.py"):
            found.add(".".join(init.parent.relative_to(ROOT).parts))
    return found


def test_the_version_has_one_source() -> None:
    project = _pyproject()
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "yinsh_env.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", yinsh_env.__version__)


def test_every_package_directory_ships_listed_once() -> None:
    packages = _pyproject()["tool"]["setuptools"]["packages"]
    listed = set(packages)
    missing = _source_packages() - listed
    assert not missing, f"package directories missing from pyproject's packages: {missing}"
    twice = sorted(p for p in listed if packages.count(p) > 1)
    assert not twice, f"listed more than once in pyproject's packages: {twice}"
    assert listed - _source_packages() == {"train.configs"}  # configs/, mapped by package-dir


def test_license_is_mit_as_pyproject_says() -> None:
    assert _pyproject()["project"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_changelog_follows_keep_a_changelog_and_names_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "keepachangelog.com" in text
    versions = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert versions[0] == "Unreleased"
    assert yinsh_env.__version__ in versions
    for heading in re.findall(r"^### (.+)$", text, flags=re.M):
        assert heading in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_citation_file_is_valid_cff_and_matches_the_version() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    schema = json.loads((ROOT / "tests" / "data" / "citation-cff-1.2.0.schema.json").read_text())
    jsonschema.validate(citation, schema)
    assert citation["version"] == yinsh_env.__version__
    assert citation["license"] == "MIT"


def test_the_schema_check_can_fail() -> None:
    schema = json.loads((ROOT / "tests" / "data" / "citation-cff-1.2.0.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"cff-version": "1.2.0", "title": "x"}, schema)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run([*command, "-q", "-w", str(out), str(ROOT)], check=True, capture_output=True)
    (built,) = out.glob("yinsh-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_carries_every_module_and_the_network(wheel: Path) -> None:
    assert wheel.name.startswith(f"yinsh-{yinsh_env.__version__}-")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    sources = {
        p.relative_to(ROOT).as_posix()
        for root in PACKAGE_ROOTS
        for p in (ROOT / root).rglob("*.py")
    }
    assert not sources - names, f"modules missing from the wheel: {sorted(sources - names)}"
    assert "agents/network/weights/pretrained.pt" in names
    # The fixed rating scale: its frozen ratings and its frozen anchor network.
    assert {"agents/evaluation/yinsh-v1.json", "agents/network/weights/anchor-v1.pt"} <= names
    # Every shipped network with its graphs (played without torch) and their description.
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / WEIGHTS).iterdir()}
    assert {f"{WEIGHTS}/pretrained.int8.onnx", f"{WEIGHTS}/anchor-v1.fp32.onnx"} <= shipped
    assert not shipped - names, f"shipped networks missing from the wheel: {shipped - names}"


WEIGHTS = "agents/network/weights"


def environment_with_these_packages(venv: Path) -> Path:
    """A new virtual environment that sees the packages of the one running the tests,
    whether they were installed into a virtual environment or the base interpreter
    (``--system-site-packages`` sees only the base's); returns its python.

    The running environment's site folders are listed in a ``.pth`` file as plain
    paths, so their own ``.pth`` files (this checkout's editable install) are not run:
    the project comes only from what is installed into the new environment.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True)
    ours = {site.getusersitepackages(), *site.getsitepackages()}
    folders = [p for p in sys.path if p in ours and Path(p).is_dir()]
    Path(purelib.stdout.strip(), "_tests_parent_env.pth").write_text("\n".join(folders) + "\n")
    return python


def block_non_base_packages(python: Path) -> None:
    """Make the train extra's packages (torch...) unimportable in ``python``'s environment,
    as in a fresh ``pip install yinsh``: a module run at startup by a ``.pth`` file."""
    ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = Path(subprocess.check_output([python, "-c", ask], text=True).strip())
    (purelib / "_not_in_base_install.py").write_text(BLOCK_NON_BASE_PACKAGES)
    (purelib / "_not_in_base_install.pth").write_text("import _not_in_base_install\n")


@pytest.mark.slow
def test_the_installed_wheel_plays_pretrained_from_any_folder(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    python = environment_with_these_packages(venv)
    block_non_base_packages(python)
    install = [
        str(python),
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--ignore-installed",
        str(wheel),
    ]
    subprocess.run(install, check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = (
        "import sys\n"
        "import agents, train, yinsh_env\n"
        "from agents import make_agent\n"
        "from agents.evaluation.match import play_match\n"
        "for module in (agents, train, yinsh_env):\n"
        f"    assert module.__file__.startswith({str(venv)!r}), module.__file__\n"
        "try:\n"
        "    import torch\n"
        "except ImportError:\n"
        "    print('no torch')\n"
        "agents_ = [make_agent('pretrained:sims=2', seed=1), make_agent('random', seed=2)]\n"
        "game = play_match(agents_)\n"
        "print('result', game.result.value, game.termination.value, game.state.ply)\n"
        f"blocked = {NOT_IN_BASE_INSTALL!r}\n"
        "print('loaded', sorted(m for m in sys.modules if m.split('.')[0] in blocked))\n"
    )

    def run_elsewhere(*command: str | Path) -> str:
        """``command``'s output, run in another folder with a bare environment."""
        done = subprocess.run(
            [str(part) for part in command],
            cwd=elsewhere,
            capture_output=True,
            text=True,
            timeout=600,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    played = run_elsewhere(python, "-c", script)
    match = re.search(r"result (\S+) (\S+) (\d+)", played)
    assert match, played
    assert match.group(1) in {"W", "B", "draw"} and match.group(2) != "forfeit"
    assert int(match.group(3)) > 10
    assert "no torch" in played and "loaded []" in played
    # The console scripts run on the base install too.
    eval_cli = venv / "bin" / "yinsh-eval"
    assert "pretrained:sims=0" in run_elsewhere(eval_cli, "pretrained:sims=0", "greedy", "-n", "2")


#: The project's top level is fixed (the developers' brief); anything else goes inside one.
TOP_LEVEL = {
    ".ci", ".gitignore", "CHANGELOG.md", "CITATION.cff", "LICENSE", "README.md",
    "agents", "benchmarks", "configs", "docs", "notebooks", "pyproject.toml",
    "tests", "train", "yinsh_env",
}  # fmt: skip


def test_the_top_level_holds_only_the_fixed_entries() -> None:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    entries = {line.split("/", 1)[0] for line in listed.stdout.splitlines()}
    assert entries <= TOP_LEVEL, f"unexpected top-level entries: {sorted(entries - TOP_LEVEL)}"
