"""Shared test settings: where the game records and traces live.

Each data set is looked up in order: the directory named by its environment
variable (``YINSH_GAMES_DIR``, ``YINSH_TRACES_DIR``), the full set in
``../shared/games`` / ``../shared/traces`` beside the project, else the small
representative subset shipped in ``tests/data`` (see its README), so a clone
with nothing beside it runs the whole suite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import start_local_ray

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BUNDLED_DATA = PROJECT_ROOT / "tests" / "data"


def data_path(env_var: str, name: str) -> Path:
    """``$env_var`` if set, else ``../shared/<name>`` if present, else ``tests/data/<name>``."""
    if env_var in os.environ:
        return Path(os.environ[env_var]).resolve()
    shared = (PROJECT_ROOT / ".." / "shared" / name).resolve()
    return shared if shared.is_dir() else BUNDLED_DATA / name


GAMES_DIR = data_path("YINSH_GAMES_DIR", "games")
TRACES_DIR = data_path("YINSH_TRACES_DIR", "traces")


def is_bundled(path: Path) -> bool:
    """Whether ``path`` is the subset shipped in ``tests/data`` (not a full set)."""
    return path.resolve().is_relative_to(BUNDLED_DATA)


@pytest.fixture
def torch_one_thread() -> Iterator[None]:
    """Run a test with one torch thread (small networks; xdist workers share the cores)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory holding tiny network checkpoints (for ``net:path=...``)."""
    from helpers import tiny_training_run

    return tiny_training_run(tmp_path_factory.mktemp("tiny-net"))


@pytest.fixture(scope="session")
def games_dir() -> Path:
    if not GAMES_DIR.is_dir():
        pytest.fail(f"game records not found at {GAMES_DIR}; set YINSH_GAMES_DIR")
    return GAMES_DIR


@pytest.fixture(scope="session")
def traces_file() -> Path:
    path = TRACES_DIR / "traces.jsonl.gz"
    if not path.is_file():
        pytest.fail(f"differential traces not found at {path}; set YINSH_TRACES_DIR")
    return path


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray of two CPUs, no dashboard, for one test module; skips without Ray."""
    ray = pytest.importorskip("ray", reason='optional extra: pip install -e ".[ray]"')
    start_local_ray(ray)
    try:
        yield ray
    finally:
        ray.shutdown()
