"""The examples in the product's docstrings run and show what they say.

python-chess's way: the public API's docstrings carry short ``>>>`` examples
with their output, and the tests run them.  Every module of the packages whose
source holds a ``>>>`` is imported and its examples run with :mod:`doctest`, one
test per module.  Modules are found by reading the source, so a module with
examples is never left out and one without is never imported (nothing here
imports the optional extras).  Examples that need an extra, a download or
minutes stay ``::`` blocks, which nothing runs.
"""

from __future__ import annotations

import doctest
import functools
import importlib
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("yinsh_env", "agents", "train")
#: The examples across all modules stay at least this many (a floor: adding is free).
MIN_EXAMPLES = 220


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_with_examples() -> list[str]:
    """The product modules whose source holds a ``>>>`` example, by name."""
    return [
        module_name(path)
        for package in PACKAGES
        for path in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if ">>>" in path.read_text(encoding="utf-8")
    ]


MODULES = modules_with_examples()


@functools.cache
def doctests(name: str) -> tuple[doctest.DocTest, ...]:
    """The docstrings of module ``name`` (and of what it defines) that hold examples."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    return tuple(t for t in finder.find(importlib.import_module(name)) if t.examples)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name: str) -> None:
    tests = doctests(name)
    assert tests, f"{name}: '>>>' in the source, but in no docstring doctest reads"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in tests:
        # Run a copy: the run clears its globals, and the cached test keeps its own.
        test = doctest.DocTest(
            test.examples, dict(test.globs), test.name, test.filename, test.lineno, test.docstring
        )
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_examples_stay_many() -> None:
    count = sum(len(t.examples) for name in MODULES for t in doctests(name))
    assert count >= MIN_EXAMPLES, f"{count} examples in docstrings, fewer than {MIN_EXAMPLES}"
