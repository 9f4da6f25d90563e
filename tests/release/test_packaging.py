"""Packaging: named configs resolve installed or not, the wheel carries them (and the web
app's page), extras match use."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from train.config import ConfigError, load_config
from train.config_files import config_names, resolve_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
PROJECT_PACKAGES = {"yinsh_env", "agents", "train", "benchmarks"}


def test_every_shipped_config_resolves_by_name_and_loads() -> None:
    names = config_names()
    recipes = {"ppo", "sb3", "rllib", "torchrl"}  # the RL libraries' recipes: tests/train/libraries
    assert names == sorted(p.stem for p in CONFIGS.glob("*.yaml") if p.stem not in recipes)
    for name in names:
        assert resolve_config(name) == CONFIGS / f"{name}.yaml"
        assert resolve_config(f"{name}.yaml") == CONFIGS / f"{name}.yaml"
        assert load_config(resolve_config(name)).iterations > 0


def test_a_path_wins_over_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "quick.yaml").write_text("iterations: 2\n")
    monkeypatch.chdir(tmp_path)
    assert resolve_config("quick.yaml") == Path("quick.yaml")
    assert resolve_config(tmp_path / "quick.yaml") == tmp_path / "quick.yaml"
    assert resolve_config("quick") == CONFIGS / "quick.yaml"


@pytest.mark.parametrize("bad", ["nope", "nope.yaml", "sub/quick.yaml", "quick.toml"])
def test_an_unknown_config_names_itself_and_the_choices(bad: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(repr(bad))) as info:
        resolve_config(bad)
    assert "quick" in str(info.value)


@pytest.mark.slow
def test_the_wheel_carries_configs_identical_to_the_source(tmp_path: Path) -> None:
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip_wheel, "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = tmp_path.glob("yinsh-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            Path(name).name: archive.read(name)
            for name in archive.namelist()
            if name.startswith("train/configs/")
        }
    assert shipped == {p.name: p.read_bytes() for p in CONFIGS.glob("*.yaml")}
    with zipfile.ZipFile(wheel) as archive:  # the web app's page ships with it
        pages = {n for n in archive.namelist() if n.startswith("agents/web/static/")}
    static = ROOT / "agents" / "web" / "static"
    assert pages == {f"agents/web/static/{p.name}" for p in static.iterdir()}


# --- extras: the dev extra covers every third-party import of tests and notebooks ----


def _imports(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _third_party_imports() -> set[str]:
    sources = [p.read_text() for p in (ROOT / "tests").glob("*.py")]
    for notebook in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(notebook.read_text())["cells"]
        sources += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    # Tests import their helpers and docs/ scripts (site_check) by path.
    local = {p.stem for folder in ("tests", "docs") for p in (ROOT / folder).glob("*.py")}
    local |= PROJECT_PACKAGES
    found = set().union(*map(_imports, sources))
    return {name for name in found - local if name not in sys.stdlib_module_names}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _dev_closure() -> set[str]:
    """Distributions ``pip install .[dev]`` brings: the extras, then installed metadata."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    pending = list(project["dependencies"]) + list(extras["dev"])
    names: set[str] = set()
    while pending:
        requirement = pending.pop()
        if requirement.startswith("yinsh["):
            pending += extras[requirement[len("yinsh[") : -1]]
            continue
        name = _requirement_name(requirement)
        if name in names:
            continue
        names.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        pending += [r for r in requires if "extra ==" not in r]
    return names


def test_dev_extra_covers_every_import_of_tests_and_notebooks() -> None:
    providers = importlib.metadata.packages_distributions()
    closure = _dev_closure()
    missing = {}
    for module in sorted(_third_party_imports()):
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [module])}
        if not dists & closure:
            missing[module] = sorted(dists)
    assert "matplotlib" in _third_party_imports() and "hypothesis" in closure
    assert not missing, f"imported by tests or notebooks but not in the dev extra: {missing}"
