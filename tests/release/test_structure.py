"""The packages' structure: no import circles, imports flowing one way.

Read from the source with :mod:`ast` (every import, module level or inside a
function, ``TYPE_CHECKING`` blocks included), so a circle held together by an
import inside a function is found too.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: The packages, lowest first: a module may import its own package and those below it.
PACKAGES = ("yinsh_env", "agents", "train")
#: STYLE: a folder past about twenty modules groups them by job into sub-packages.
MAX_MODULES = 20
#: STYLE: a product module past this many lines splits by job.
MAX_MODULE_LINES = 600
#: STYLE: a function past this many lines (``def`` to its last line) splits into steps.
MAX_FUNCTION_LINES = 120
#: The library trainers: each picks its opponents with ``yinsh_env.envs.matchmaking``.
TRAINERS = (
    "train.libraries.ppo",
    "train.libraries.sb3_maskable_ppo",
    "train.libraries.rllib_example",
    "train.libraries.torchrl_ppo",
)
#: Each package's top level: its face and sub-packages named by job, few modules beside.
TOP_LEVEL = {
    "yinsh_env": set(),
    "agents": {"base", "byo", "league", "params", "spec"},
}
#: ``agents``' sub-packages by job: the players, and the applications that use them.
PLAYERS = {"baselines", "search", "network", "learned"}
APPLICATIONS = {"evaluation", "web", "review", "play", "protocol", "infra"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules ``path`` imports (package faces resolved to their modules)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@functools.cache
def import_graph(faces: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports; ``faces``: imports of a top package's
    ``__init__`` kept (for the direction of imports; dropped for circles).  Read once per
    session (callers only read it)."""
    paths = [p for package in PACKAGES for p in (PROJECT_ROOT / package).rglob("*.py")]
    modules = {module_name(p) for p in paths}
    graph = {module_name(p): imports_of(p, modules) for p in paths}
    if faces:
        return graph
    # A package's face (__init__) stands for what it re-exports: an import of
    # the face is not an arrow into every module of the package.
    return {m: {t for t in ts if t not in PACKAGES} for m, ts in graph.items()}


def level(module: str) -> int:
    """Where a module's top package sits in :data:`PACKAGES` (0: the engine)."""
    return PACKAGES.index(module.partition(".")[0])


def reached(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def registry_targets() -> dict[str, str]:
    """Agent name -> ``module:attribute`` of every built-in agent named by a string."""
    from agents.spec import _REGISTRY

    return {name: target for name, target in _REGISTRY.items() if isinstance(target, str)}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "yinsh_env.engine.vocabulary" in graph["yinsh_env.engine.state"]
    assert "yinsh_env.engine.state" in graph["yinsh_env.records.game_record"]


def test_a_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_the_engine_imports_neither_agents_nor_train() -> None:
    graph = import_graph()
    upward = {
        (m, t)
        for m, ts in graph.items()
        if m.startswith("yinsh_env")
        for t in ts
        if t.startswith(("agents", "train"))
    }
    assert not upward


def test_each_package_keeps_its_rooms() -> None:
    """The engine, environments, records and utilities apart; agents' players apart from
    their applications: a top level of the face, a few core modules and folders by job."""
    for package, allowed in TOP_LEVEL.items():
        top = {p.stem for p in (PROJECT_ROOT / package).glob("*.py")} - {"__init__"}
        assert top == allowed, (package, sorted(top))
    folders = {p.parent.name for p in (PROJECT_ROOT / "yinsh_env").glob("*/__init__.py")}
    assert folders == {"engine", "envs", "records", "render", "util", "vector"}
    folders = {p.parent.name for p in (PROJECT_ROOT / "agents").glob("*/__init__.py")}
    assert folders == PLAYERS | APPLICATIONS


def test_no_module_of_a_package_imports_its_own_face() -> None:
    """Inside a package, modules import the module that defines a name, not the package's
    ``__init__`` (which imports them: an arrow back up, and a circle waiting to happen)."""
    graph = import_graph(faces=True)
    found = {(m, t) for m, ts in graph.items() for t in ts if t in PACKAGES and m.startswith(t)}
    # Ray's runtime_env ships the three packages whole: they are imported as packages.
    assert found <= {("train.ray_backend", "train")}, sorted(found)


def test_players_import_no_application() -> None:
    """A player (baselines, search, network, learned) never needs an application."""
    graph = import_graph()
    found = sorted(
        (m, t)
        for m, ts in graph.items()
        if m.split(".")[:2][-1] in PLAYERS
        for t in ts
        if t.startswith("agents.") and t.split(".")[1] in APPLICATIONS
    )
    assert not found


def test_the_utilities_and_the_engine_stand_alone() -> None:
    """``yinsh_env.util`` imports nothing of the project; the engine only the utilities
    and its own pictures (``State._repr_svg_``, ``str(state)``)."""
    graph = import_graph(faces=True)
    for module, targets in graph.items():
        if module.startswith("yinsh_env.util"):
            assert {t for t in targets if not t.startswith("yinsh_env.util")} == set(), module
        if module.startswith("yinsh_env.engine"):
            outside = {
                t
                for t in targets
                if not t.startswith(("yinsh_env.engine", "yinsh_env.util", "yinsh_env.render"))
            }
            assert not outside, (module, outside)


def private_imports() -> list[tuple[str, str]]:
    """``(module, name)`` for every private name a product module imports from another."""
    found = []
    for package in PACKAGES:
        for path in (PROJECT_ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGES):
                    found += [
                        (module_name(path), f"{node.module}.{alias.name}")
                        for alias in node.names
                        if alias.name.startswith("_")
                    ]
    return sorted(found)


def test_players_use_the_batched_engine_through_its_public_api() -> None:
    """Outside ``yinsh_env``, the batched engine is reached through ``yinsh_env.vector``'s
    ``__all__`` (its environment modules aside), never its internal modules."""
    import yinsh_env.vector as vector

    environment = {"yinsh_env.vector.env", "yinsh_env.vector.batch_agents", "yinsh_env.vector.sb3"}
    for package in PACKAGES[1:]:
        for path in (PROJECT_ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "yinsh_env.vector"
                ):
                    assert node.module == "yinsh_env.vector" or node.module in environment, (
                        module_name(path),
                        node.module,
                    )
                    if node.module == "yinsh_env.vector":
                        assert {a.name for a in node.names} <= set(vector.__all__), path


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports() == []


def test_the_test_folders_mirror_the_packages() -> None:
    """tests/PACKAGE/SUB/ for the package folder PACKAGE/SUB/ it tests, none over the cap."""
    tests = PROJECT_ROOT / "tests"
    for folder in sorted({p.parent for p in tests.rglob("test_*.py")}):
        modules = list(folder.glob("test_*.py"))
        assert len(modules) <= MAX_MODULES, (folder, len(modules))
        relative = folder.relative_to(tests)
        if relative.parts[0] != "release":  # the release's checks test no one package
            assert (PROJECT_ROOT / relative / "__init__.py").is_file(), folder


def test_no_two_modules_share_a_file_name() -> None:
    """A file name says one job: ``checkpoint.py`` twice would hide which is which."""
    names = [p.name for package in PACKAGES for p in (PROJECT_ROOT / package).rglob("*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == ["__init__.py"]


def test_imports_flow_one_way() -> None:
    """yinsh_env < agents < train: no module imports from a package above its own."""
    graph = import_graph(faces=True)
    upward = sorted((m, t) for m, ts in graph.items() for t in ts if level(t) > level(m))
    assert not upward


def test_an_upward_import_is_found() -> None:
    graph = {"agents.x": {"train.y"}, "train.y": {"agents.x"}}
    assert [(m, t) for m, ts in graph.items() for t in ts if level(t) > level(m)] == [
        ("agents.x", "train.y")
    ]


def test_every_registry_target_is_a_player_in_agents_that_reaches_no_trainer() -> None:
    graph = import_graph(faces=True)
    targets = registry_targets()
    assert {"net", "pretrained", "sb3", "rllib"} <= set(targets)
    for name, target in targets.items():
        module, _, attribute = target.partition(":")
        assert level(module) == PACKAGES.index("agents"), (name, target)
        path = PROJECT_ROOT / (module.replace(".", "/") + ".py")
        defined = {
            node.name
            for node in ast.parse(path.read_text()).body
            if isinstance(node, (ast.ClassDef, ast.FunctionDef))
        }
        assert attribute in defined, (name, target)
        assert not {m for m in reached(graph, module) if level(m) > 1}, (name, target)


@pytest.mark.slow
def test_every_registry_target_imports_without_loading_the_trainer() -> None:
    """Each target imported in a fresh interpreter (those whose extras are installed)."""
    wanted = [
        target
        for target in registry_targets().values()
        if not target.startswith(("agents.learned.sb3", "agents.learned.rllib"))
        or importlib.util.find_spec("sb3_contrib" if "sb3" in target else "ray") is not None
    ]
    code = (
        "import importlib, json, sys\n"
        f"for target in {wanted!r}:\n"
        "    module, _, attribute = target.partition(':')\n"
        "    getattr(importlib.import_module(module), attribute)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.partition('.')[0] == 'train')))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1]) == []


def package_folders() -> list[Path]:
    roots = [PROJECT_ROOT / package for package in PACKAGES]
    return sorted({*roots, *(init.parent for root in roots for init in root.rglob("__init__.py"))})


@pytest.mark.parametrize("folder", package_folders(), ids=lambda p: module_name(p / "x.py")[:-2])
def test_no_folder_holds_more_than_about_twenty_modules(folder: Path) -> None:
    modules = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    name = module_name(folder / "__init__.py")
    assert len(modules) <= MAX_MODULES, (name, modules)


def test_every_package_says_what_each_of_its_modules_is() -> None:
    """Each ``__init__`` docstring names every module of its package (new ones too)."""
    for folder in package_folders():
        package = module_name(folder / "__init__.py")
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or ""
        unnamed = [
            p.stem
            for p in sorted(folder.glob("*.py"))
            if p.stem != "__init__" and not re.search(rf"\b{re.escape(package)}\.{p.stem}\b", doc)
        ]
        assert not unnamed, (package, unnamed)


def product_paths() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (PROJECT_ROOT / package).rglob("*.py"))


def long_functions(source: str) -> list[tuple[str, int]]:
    """``(name, lines)`` of each function (methods and nested ones too) over the limit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found.append((node.name, lines))
    return found


def test_a_long_function_is_found() -> None:
    body = "\n".join(["class A:", "    def f(self):", *["        x = 1"] * 120, "def g(): pass"])
    assert long_functions(body) == [("f", 121)]
    assert long_functions(body.replace("        x = 1\n", "", 1)) == []


def test_no_module_is_longer_than_600_lines() -> None:
    lengths = {module_name(p): len(p.read_text().splitlines()) for p in product_paths()}
    assert {m: n for m, n in lengths.items() if n > MAX_MODULE_LINES} == {}


def test_no_function_is_longer_than_120_lines() -> None:
    found = {
        module_name(p): long for p in product_paths() if (long := long_functions(p.read_text()))
    }
    assert found == {}


def samplers_defined(path: Path) -> list[str]:
    """Classes of ``path`` that choose opponents themselves (``sample`` and ``record``)."""
    return [
        node.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        and {"sample", "record"} <= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    ]


def test_the_library_trainers_pick_opponents_with_matchmaking_only() -> None:
    """The single-file PPO, SB3 and RLlib trainers import the picking (pools, mixes,
    leagues) from ``yinsh_env.envs.matchmaking``, through their own helpers or directly,
    and no trainer module keeps a sampler of its own."""
    graph = import_graph()
    for trainer in TRAINERS:
        helpers = {m for m in reached(graph, trainer) if m.startswith("train.libraries")}
        assert any("yinsh_env.envs.matchmaking" in graph[m] for m in helpers), trainer
    own = {module_name(p): samplers_defined(p) for p in (PROJECT_ROOT / "train").rglob("*.py")}
    assert {m: classes for m, classes in own.items() if classes} == {}
    assert samplers_defined(PROJECT_ROOT / "yinsh_env" / "envs" / "matchmaking.py")


#: The one checkpoint kept in the tree besides the shipped networks: where the shipped
#: line resumes (``pretrained`` is its iteration 920).
RESUME_CHECKPOINT = "docs/studies/runs/long2-int8/checkpoints/iter_000920.pt"


def test_no_checkpoint_is_tracked_but_the_shipped_networks_and_the_resume_point() -> None:
    if not (PROJECT_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "*.pt"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert RESUME_CHECKPOINT in tracked
    strays = [
        p for p in tracked if p != RESUME_CHECKPOINT and not p.startswith("agents/network/weights/")
    ]
    assert not strays


def test_every_archived_checkpoint_is_in_the_tree_or_names_the_commit_that_has_it() -> None:
    manifests = sorted((PROJECT_ROOT / "docs" / "studies" / "runs").glob("*/archive.json"))
    assert manifests
    for manifest in manifests:
        data = json.loads(manifest.read_text())
        pruned = data.get("pruned", {})
        for name in data["files"]:
            assert (manifest.parent / name).is_file() or pruned.get(name), (manifest, name)
