"""Resolve cross-references the way the docstrings mean them.

Docstrings say :class:`State` or :class:`yinsh_env.State`, but autodoc documents
the class where it is defined (``yinsh_env.engine.state.State``).  When Sphinx finds no
target, this extension looks the name up by import from the reference's own
module and class and retries with the defining module's name; then, for a bare
name such as :class:`AgentSpecError` used in a module that does not import it,
it takes the one documented object of the project with that name; a name that
imports to an object of another library, or that no project module defines (a type
a third-party annotation brings in bare, such as a new pydantic release's metadata
classes), is shown unlinked.  A project name that matches nothing, or several
objects, stays a broken reference (an error under ``-n -W``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
import types
import typing
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment


def _lookup(path: str) -> Any:
    """The object named by a dotted path (module, then attributes), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def _canonical(obj: Any) -> str | None:
    """Where ``obj`` is defined, as a dotted name (None for plain values)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    return f"{module}.{qualname}" if isinstance(module, str) and isinstance(qualname, str) else None


def _candidates(env: BuildEnvironment, node: Any) -> list[str]:
    """Full names the reference may mean, most specific first."""
    target = node["reftarget"].lstrip("~.")
    context = [node.get("py:module"), node.get("py:class")]
    prefixes = [".".join(filter(None, context[: i + 1])) for i in range(len(context))][::-1]
    names = []
    for prefix in [*dict.fromkeys(p for p in prefixes if p), ""]:
        full = f"{prefix}.{target}" if prefix else target
        obj = _lookup(full)
        if obj is not None:
            names += [n for n in (_canonical(obj), full) if n]
    # The one documented object of that name (in that package, for a dotted name).
    package, _, last = target.rpartition(".")
    objects = env.get_domain("py").objects  # type: ignore[attr-defined]
    same = [n for n in objects if n.rsplit(".", 1)[-1] == last and n.startswith(package)]
    if len(same) == 1:
        names.append(same[0])
    return [*dict.fromkeys([*names, node["reftarget"]])]


def _modules(packages: list[str]) -> list[types.ModuleType]:
    modules = []
    for package in packages:
        root = importlib.import_module(package)
        names = [package, *(m.name for m in pkgutil.walk_packages(root.__path__, f"{package}."))]
        modules += [importlib.import_module(name) for name in names]
    return modules


def type_variables(packages: list[str]) -> list[str]:
    """Full names of the modules' TypeVars and ParamSpecs (not documented, by design)."""
    return [
        f"{module.__name__}.{attr}"
        for module in _modules(packages)
        for attr, value in vars(module).items()
        if isinstance(value, typing.TypeVar | typing.ParamSpec)
        and getattr(value, "__module__", None) == module.__name__
    ]


def type_aliases(packages: list[str]) -> dict[str, str]:
    """``autodoc_type_aliases`` for the documented module-level aliases (a ``#:``
    comment above ``X = Annotated[...]``).  The option maps bare names in every
    module, so a name that means anything else anywhere (``Path``) is left out."""
    modules = _modules(packages)
    aliases: dict[str, str] = {}
    for module in modules:
        source = inspect.getsource(module)
        for attr, value in vars(module).items():
            documented = rf"^#:.*\n(#:.*\n)*{attr}\s*(:[^=\n]*)?="
            # Annotated only: a Callable alias in a union comes out as Sphinx's
            # TypeAliasForwardRef(...), so those are shown expanded.
            annotated = typing.get_origin(value) is typing.Annotated
            if annotated and re.search(documented, source, re.M):
                aliases[attr] = f"{module.__name__}.{attr}"
    clashes = {
        attr
        for module in modules
        for attr, value in vars(module).items()
        if attr in aliases and value is not _lookup(aliases[attr])
    }
    return {attr: name for attr, name in aliases.items() if attr not in clashes}


#: The packages this site documents; other objects are shown unlinked.
PROJECT = ("yinsh_env", "agents", "train")


def _external(node: Any) -> bool:
    """Whether the reference names, from its module, an object defined outside the
    project (``HTTPServer`` imported from :mod:`http.server`): shown as plain text,
    as a nitpick-ignored external name would be."""
    module, cls = node.get("py:module"), node.get("py:class")
    target = node["reftarget"].lstrip("~.")
    for prefix in filter(None, [f"{module}.{cls}" if module and cls else None, module]):
        obj = _lookup(f"{prefix}.{target}")
        name = _canonical(obj) if obj is not None else None
        if name is not None:
            return name.split(".")[0] not in PROJECT
    return False


@functools.cache
def _project_names() -> frozenset[str]:
    """Every name a project module defines at its top level (classes, functions,
    aliases, constants), and the project's module names."""
    names: set[str] = set()
    for module in _modules(list(PROJECT)):
        names.update(module.__name__.split("."))
        for attr, value in vars(module).items():
            defined_here = getattr(value, "__module__", module.__name__) == module.__name__
            if defined_here and not isinstance(value, types.ModuleType):
                names.add(attr)
    return frozenset(names)


def _foreign(node: Any) -> bool:
    """Whether the reference names something no project module defines: a type a
    third-party annotation brings along bare (pydantic's ``AllowInfNan``, or whatever a
    new release adds), shown as plain text.  A name the project defines, or a dotted
    name under one of its packages, that does not resolve stays an error."""
    head = node["reftarget"].lstrip("~.").split(".")[0]
    return head not in PROJECT and head not in _project_names()


def missing_reference(
    app: Sphinx, env: BuildEnvironment, node: Any, contnode: nodes.Element
) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    for name in _candidates(env, node):
        retry = node.deepcopy()
        retry["reftarget"] = name
        if name != node["reftarget"]:
            found = domain.resolve_xref(
                env, node["refdoc"], app.builder, node["reftype"], name, retry, contnode
            )
            if found is not None:
                return found
        # The role may name another kind (:class: for a type alias): any kind will do.
        for _, element in domain.resolve_any_xref(
            env, node["refdoc"], app.builder, name, retry, contnode
        ):
            return element
    return contnode if _external(node) or _foreign(node) else None


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("missing-reference", missing_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
