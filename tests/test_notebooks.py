"""Every notebook in notebooks/ runs top to bottom without an error (tiny settings)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert any(path.name == "01_quickstart.ipynb" for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Notebooks read YINSH_NOTEBOOK_SMOKE to pick tiny settings; the kernel inherits it.
    monkeypatch.setenv("YINSH_NOTEBOOK_SMOKE", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # The kernel runs in notebooks/: make it import this checkout, whatever is installed.
    root = str(NOTEBOOKS_DIR.parent)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,  # per cell; bounds a hang, generous for a loaded machine
        startup_timeout=300,  # the kernel's start (60 s by default)
        kernel_name="python3",
        # Run where Jupyter runs it: in notebooks/ (a notebook must not need the root).
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
