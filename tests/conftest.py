"""Shared test settings: where the game records and traces live; no Hypothesis deadline.

Each data set is looked up in order: the directory named by its environment
variable (``YINSH_GAMES_DIR``, ``YINSH_TRACES_DIR``), the full set in
``../shared/games`` / ``../shared/traces`` beside the project, else the small
representative subset shipped in ``tests/data`` (see its README), so a clone
with nothing beside it runs the whole suite.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    from hypothesis import settings
except ImportError:  # the dev extra brings it; only the property tests need it
    pass
else:
    # No test may depend on the machine's speed: Hypothesis's per-example
    # deadline (200 ms by default) fails on a loaded machine, so it is off.
    settings.register_profile("loaded-machine", deadline=None)
    settings.load_profile("loaded-machine")

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


@pytest.fixture
def clip_norms(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The gradient norm before clipping of every ``torch.nn.utils.clip_grad_norm_`` call
    from here on, in call order: the library parity tests compare updates by it."""
    import torch

    norms: list[float] = []
    clip = torch.nn.utils.clip_grad_norm_

    def recorded(*given: Any, **kwargs: Any) -> Any:
        norm = clip(*given, **kwargs)
        norms.append(float(norm))
        return norm

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", recorded)
    return norms


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


#: The ports Ray's agents report through files, which its raylet waits for.
RAY_AGENT_PORTS = (
    "metrics_agent_port",
    "metrics_export_port",
    "dashboard_agent_listen_port",
    "runtime_env_agent_port",
)
#: Seconds Ray may take to start a process, however busy the machine.
RAY_START_BOUND = 600


def _free_ports(count: int) -> list[int]:
    """Ports free now (the OS picks them; closed again for Ray to bind)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start_local_ray(ray: Any) -> None:
    """``ray.init`` a local Ray of two CPUs, no dashboard, whose start a loaded machine
    cannot time out.

    Ray's raylet gives its Python agents a fixed 15 s to write their ports to
    files, then aborts (ray-project/ray#65983): a loaded machine starts Python
    slower than that.  Told the ports, it waits for no file; Ray's configurable
    waits (the GCS port, agents and workers registering) are raised to
    :data:`RAY_START_BOUND`.  ``ray.init`` takes no agent ports, so they are set
    on the ``RayParams`` it builds and on the raylet's command line (private
    hooks of Ray 2.x; without them, a plain start).
    """
    from ray._private import parameter, ray_constants, services

    ports = dict(zip(RAY_AGENT_PORTS, _free_ports(len(RAY_AGENT_PORTS))))
    start_process = services.start_ray_process

    class WithAgentPorts(parameter.RayParams):  # type: ignore[misc, name-defined]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            for name, port in ports.items():
                setattr(self, name, port)

    def start_told_the_ports(command: list[str], process_type: str, *args: Any, **kw: Any) -> Any:
        if process_type == ray_constants.PROCESS_TYPE_RAYLET:  # not among start_raylet's flags
            listen = ports["dashboard_agent_listen_port"]
            command = [*command, f"--dashboard_agent_listen_port={listen}"]
        return start_process(command, process_type, *args, **kw)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parameter, "RayParams", WithAgentPorts)
        patch.setattr(services, "start_ray_process", start_told_the_ports)
        patch.setenv("RAY_gcs_server_port_wait_time_s", str(RAY_START_BOUND))
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            _system_config={
                "agent_register_timeout_ms": RAY_START_BOUND * 1000,
                "worker_register_timeout_seconds": RAY_START_BOUND,
                # No metrics exporter: one port less that another process can take
                # between our choosing it and Ray's agent binding it (the raylet
                # ends with its agent when a bind fails).
                "enable_metrics_collection": False,
            },
        )


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray (:func:`start_local_ray`) for one test module; skips without Ray."""
    ray = pytest.importorskip("ray", reason='optional extra: pip install -e ".[ray]"')
    start_local_ray(ray)
    try:
        yield ray
    finally:
        ray.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts Ray is also ``slow``: a Ray start takes seconds, and
    seconds more on a loaded machine, so the edit loop (``-m "not slow"``) leaves
    them out."""
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(pytest.mark.slow)
