"""Every notebook in notebooks/ runs top to bottom without an error (tiny settings),
far from this checkout's configs/, and leaves nothing git would take in the checkout
it runs in (what it makes goes to a folder git ignores, notebooks/out/); the stored
ones carry their full-mode outputs (what GitHub and the docs site show)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert any(path.name == "01_quickstart.ipynb" for path in NOTEBOOKS)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_from_any_folder(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Notebooks read YINSH_NOTEBOOK_SMOKE to pick tiny settings; the kernel inherits it.
    monkeypatch.setenv("YINSH_NOTEBOOK_SMOKE", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # The package is "installed": the kernel imports this checkout, whatever is installed.
    root = str(NOTEBOOKS_DIR.parent)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    # A copy in notebooks/ of a checkout of its own (git, the project's .gitignore, no
    # configs/), opened there as a person opens it.
    checkout = tmp_path / "checkout"
    copy = checkout / "notebooks" / path.name
    copy.parent.mkdir(parents=True)
    shutil.copy(path, copy)
    shutil.copy(NOTEBOOKS_DIR.parent / ".gitignore", checkout / ".gitignore")
    _git(checkout, "init", "--quiet")
    _git(checkout, "add", "--all")
    notebook = nbformat.read(copy, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,  # per cell; bounds a hang, generous for a loaded machine
        startup_timeout=300,  # the kernel's start (60 s by default)
        kernel_name="python3",
        resources={"metadata": {"path": str(copy.parent)}},
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    assert not _errors(notebook)
    status = _git(checkout, "status", "--porcelain", "--untracked-files=all")
    assert [line for line in status.splitlines() if not line.startswith("A ")] == []


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    ).stdout


#: Notebooks stored with their full-mode outputs (``python3 docs/execute_notebooks.py``):
#: every one the project ships, so a reader sees real numbers and pictures.
STORED_EXECUTED = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("path", STORED_EXECUTED, ids=[path.stem for path in STORED_EXECUTED])
def test_notebook_is_stored_executed_in_full_mode(path: Path) -> None:
    """docs/execute_notebooks.py ran it: every code cell has its outputs, none an error."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    unrun = [i for i, cell in enumerate(code) if cell.get("execution_count") is None]
    assert not unrun, f"{path.name}: code cells {unrun} were not run (docs/execute_notebooks.py)"
    counts = [cell.execution_count for cell in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: not run top to bottom"
    assert not _errors(notebook)
    first = "".join(output.get("text", "") for output in code[0].get("outputs", []))
    assert first.startswith("full settings"), f"{path.name} was stored from a tiny run"


def _errors(notebook: Any) -> list[Any]:
    return [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
