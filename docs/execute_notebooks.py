"""Run the notebooks in full mode and store their outputs in notebooks/*.ipynb.

    python3 docs/execute_notebooks.py                          # all of them
    python3 docs/execute_notebooks.py 02_train_and_evaluate    # one

The notebooks are kept executed: GitHub, JupyterLab and the documentation site
(``nb_execution_mode = "off"`` in docs/conf.py) then show their pictures and real
numbers without running anything, and the site builds in seconds.  Full mode takes
65 seconds (notebook 01), 13 minutes (notebook 02, which trains ``configs/quick.yaml``)
and 7.5 (notebook 03) on two quiet cores, about an hour for 02 on a loaded machine: far
beyond a docs build; tiny mode (``YINSH_NOTEBOOK_SMOKE=1``, what the tests run) would publish
numbers that mean nothing.  Rerun this after a change that alters
what a notebook shows.

Each notebook runs in a fresh temporary folder, as a copied notebook would, with
this checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def execute(path: Path, timeout: int = 4 * 3600) -> None:
    """Execute ``path`` top to bottom in a temporary folder and write it back with outputs."""
    notebook = nbformat.read(path, as_version=4)
    # The kernel inherits this environment: full settings, this checkout's code.
    os.environ.pop("YINSH_NOTEBOOK_SMOKE", None)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    with tempfile.TemporaryDirectory(prefix="yinsh-notebook-") as folder:
        client = nbclient.NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,  # no per-cell timestamps: smaller diffs
            resources={"metadata": {"path": folder}},
        )
        client.execute()  # raises CellExecutionError naming the cell on any error
    nbformat.write(notebook, path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook stems (default: all)")
    args = parser.parse_args(argv)
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.names:
        known = {path.stem: path for path in paths}
        unknown = [name for name in args.names if name not in known]
        if unknown:
            parser.error(f"no notebook {unknown} (known: {sorted(known)})")
        paths = [known[name] for name in args.names]
    for path in paths:
        started = time.perf_counter()
        execute(path)
        print(f"{path.relative_to(ROOT)}: {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
