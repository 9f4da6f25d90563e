"""Sphinx configuration: ``python -m sphinx -W --keep-going -n -b html docs SITE``.

MyST Markdown pages, the furo theme, API pages generated from the docstrings
(autosummary writes them to ``api/_generated/``, not kept in git) and the
notebooks with the outputs stored in them (``notebooks/`` is linked in; nothing
is executed here: docs/execute_notebooks.py says why).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout, whatever is installed
sys.path.insert(0, str(Path(__file__).resolve().parent))
# autosummary rewrites api/_generated/ at every build but never deletes a page, so a
# module moved or removed would leave a stale page that breaks the build: start clean.
shutil.rmtree(Path(__file__).resolve().parent / "api" / "_generated", ignore_errors=True)

from reexports import type_aliases, type_variables  # noqa: E402

import yinsh_env  # noqa: E402

project = "yinsh"
author = "The yinsh developers"
copyright = "2026, The yinsh developers"
release = version = yinsh_env.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "reexports",
]
templates_path = ["_templates"]
# studies/runs/: the runs' text (config, metrics, manifests) the study pages cite, not pages.
exclude_patterns = ["_build", "images/README.md", "notebooks/.ipynb_checkpoints", "studies/runs"]
suppress_warnings: list[str] = []

# MyST: README-style heading anchors, so links like guide.md#the-rules resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# Notebooks: rendered from their stored outputs (full mode), never executed here.
nb_execution_mode = "off"
nb_execution_raise_on_error = True

# API pages.
autosummary_generate = True
autosummary_imported_members = False
# Each object once, where it is defined (a package's __all__ re-exports are not
# documented again; reexports.py resolves references to them).
autodoc_default_options = {
    "members": True,
    "undoc-members": True,
    "show-inheritance": True,
    "ignore-module-all": True,
}
autodoc_inherit_docstrings = False  # not torch's forward() text on our modules
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Annotations keep the names of this project's type aliases (``PositiveInt``), not
# their expansion into pydantic's metadata.
autodoc_type_aliases = type_aliases(["yinsh_env", "agents", "train"])
autodoc_preserve_defaults = True
add_module_names = False
# [source] links to the module that defines each object (an alias such as
# ``tuple[float, float]`` would otherwise send viewcode to ``builtins``).
viewcode_follow_imported_members = False

# Nitpicky (-n): every cross-reference must resolve.  Names from other libraries
# are not linked (no intersphinx: the build needs no network); this project's own
# names must all resolve.
EXTERNAL = sorted(
    {
        *sys.stdlib_module_names,
        "NoneType",
        *("numpy", "np", "torch", "gymnasium", "pettingzoo", "pyspiel", "ray", "PIL"),
        *("stable_baselines3", "sb3_contrib", "onnxruntime", "tqdm", "yaml"),
        # pydantic, and the names its annotations use bare (``Field(ge=0)``).
        *("pydantic", "annotated_types", "Field", "AfterValidator", "BeforeValidator"),
        # and the metadata an alias's value shows bare (``FieldInfo(... Ge(ge=1))``).
        *("FieldInfo", "PydanticUndefined", "Strict", "Ge", "Gt", "Le", "Lt", "MinLen", "MaxLen"),
    }
)
TYPEVARS = type_variables(["yinsh_env", "agents", "train"])
nitpick_ignore_regex = [
    (r"py:.*", rf"({'|'.join(EXTERNAL)})(\..*)?"),
    (r"py:.*", r"(.*\.)?_[^.]*"),  # private helpers are not documented, by design
    (r"py:class", r"-?[0-9.]+"),  # numbers inside a shown alias value (``Le(le=1.0)``)
    # Type variables (``P``, ``agents.params.R``) are not documented either.
    *((r"py:.*", rf"({re.escape(name)}|{re.escape(name.rsplit('.', 1)[1])})") for name in TYPEVARS),
]

html_theme = "furo"
html_title = f"yinsh {release}"
html_static_path: list[str] = []


# Napoleon reads the classes' ``Args:`` sections; an attribute's ``#:`` text such as
# "Final result: ..." it would read as a type named "Final result", so attribute
# docstrings keep their own text.
_ATTRIBUTE_KINDS = ("attribute", "data", "property")
_originals: dict[str, list[str]] = {}


def _keep_attribute_text(app, what, name, obj, options, lines) -> None:  # type: ignore[no-untyped-def]
    if what in _ATTRIBUTE_KINDS:
        _originals[name] = list(lines)


def _restore_attribute_text(app, what, name, obj, options, lines) -> None:  # type: ignore[no-untyped-def]
    if what in _ATTRIBUTE_KINDS and name in _originals:
        lines[:] = _originals.pop(name)


def _factory_defaults(app, what, name, obj, options, signature, annotation):  # type: ignore[no-untyped-def]
    """Dataclass fields with a default factory show ``= ...``: ``<factory>`` is no
    Python, and Sphinx would then split the signature at every comma."""
    if signature and "<factory>" in signature:
        return signature.replace("<factory>", "..."), annotation
    return None


def setup(app) -> None:  # type: ignore[no-untyped-def]
    app.connect("autodoc-process-docstring", _keep_attribute_text, priority=100)
    app.connect("autodoc-process-docstring", _restore_attribute_text, priority=900)
    app.connect("autodoc-process-signature", _factory_defaults)
