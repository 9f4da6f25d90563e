"""Shared test settings: where the shared game records and traces live.

``YINSH_GAMES_DIR`` and ``YINSH_TRACES_DIR`` override the defaults
``../shared/games`` and ``../shared/traces`` (relative to the project root).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def shared_path(env_var: str, default: str) -> Path:
    return Path(os.environ.get(env_var, PROJECT_ROOT / default)).resolve()


GAMES_DIR = shared_path("YINSH_GAMES_DIR", "../shared/games")
TRACES_DIR = shared_path("YINSH_TRACES_DIR", "../shared/traces")


@pytest.fixture
def torch_one_thread() -> Iterator[None]:
    """Run a test with one torch thread (small networks; xdist workers share the cores)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
