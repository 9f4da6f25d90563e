"""The packages' structure: no import circles, imports flowing one way.

Read from the source with :mod:`ast` (every import, module level or inside a
function, ``TYPE_CHECKING`` blocks included), so a circle held together by an
import inside a function is found too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("yinsh_env", "agents", "train")


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


def import_graph() -> dict[str, set[str]]:
    paths = [p for package in PACKAGES for p in (PROJECT_ROOT / package).rglob("*.py")]
    modules = {module_name(p) for p in paths}
    graph = {module_name(p): imports_of(p, modules) for p in paths}
    # A package's face (__init__) stands for what it re-exports: an import of
    # the face is not an arrow into every module of the package.
    return {m: {t for t in ts if t not in PACKAGES} for m, ts in graph.items()}


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
    assert "yinsh_env.vocabulary" in graph["yinsh_env.state"]
    assert "yinsh_env.state" in graph["yinsh_env.game_record"]


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


def test_agents_keeps_its_rooms() -> None:
    """STYLE: a folder past about twenty modules groups them by job into sub-packages."""
    top = sorted(p.stem for p in (PROJECT_ROOT / "agents").glob("*.py"))
    assert len(top) <= 20, top
    evaluation = {p.stem for p in (PROJECT_ROOT / "agents" / "evaluation").glob("*.py")}
    assert {"arena", "elo", "match", "eval_cli", "sprt", "scale", "results_db"} <= evaluation
    assert not {"arena", "elo", "match", "eval_cli"} & set(top)
