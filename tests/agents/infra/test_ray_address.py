"""No address: a local Ray, even with a stale cluster file; a dead address: one line, at once."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agents.evaluation.eval_cli import main as eval_main
from agents.infra import ray_address as ray_address_module
from agents.infra.ray_address import GCS_METHOD, RayClusterLost, ray_address, wait_first


def _dead_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def stale_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A Ray temp folder whose cluster file names a head that is gone (a short path:
    Ray's socket names must fit in 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="rs", dir="/tmp"))
    (folder / "ray").mkdir()
    dead = f"127.0.0.1:{_dead_port()}"
    (folder / "ray" / "ray_current_cluster").write_text(dead + "\n")
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield folder, dead
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def test_no_address_is_a_local_ray_whatever_the_cluster_file_says(
    stale_cluster: tuple[Path, str],
) -> None:
    assert ray_address(None) == "local"
    assert ray_address("") == "local"
    assert ray_address("local") == "local"


def test_auto_with_a_stale_cluster_file_names_it(stale_cluster: tuple[Path, str]) -> None:
    _, dead = stale_cluster
    with pytest.raises(ValueError, match=f"--address 'auto' \\({dead}\\): cannot connect to Ray"):
        ray_address("auto")


@pytest.mark.parametrize("form", ["{}", "ray://{}"])
def test_an_address_that_does_not_answer_is_refused_in_one_line(form: str) -> None:
    address = form.format(f"127.0.0.1:{_dead_port()}")
    with pytest.raises(ValueError) as caught:
        ray_address(address, "ray.address")
    message = str(caught.value)
    assert message.startswith(f"ray.address {address!r}: cannot connect to Ray")
    assert "\n" not in message


def test_a_dead_ray_address_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{_dead_port()}")
    with pytest.raises(ValueError, match=r"^RAY_ADDRESS '127\.0\.0\.1:"):
        ray_address(None)


class _Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def web_server() -> Iterator[str]:
    """``127.0.0.1:PORT`` of a web server (HTTP/1.1): no Ray."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """``127.0.0.1:PORT`` where connections are accepted and never answered."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield f"127.0.0.1:{sock.getsockname()[1]}"


def _grpc_server(handlers: dict[str, Any]) -> Iterator[str]:
    """``127.0.0.1:PORT`` of a gRPC server with ``handlers`` (method path -> behaviour)."""
    grpc = pytest.importorskip("grpc")
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    by_service: dict[str, dict[str, Any]] = {}
    for path, behaviour in handlers.items():
        service, _, method = path.strip("/").partition("/")
        by_service.setdefault(service, {})[method] = grpc.unary_unary_rpc_method_handler(behaviour)
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler(s, m) for s, m in by_service.items()]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None)


@pytest.fixture
def other_grpc_server() -> Iterator[str]:
    """A gRPC server of some other service: it knows no Ray method."""
    yield from _grpc_server({"/other.Service/Ping": lambda request, context: b""})


@pytest.fixture
def head_with_token() -> Iterator[str]:
    """A gRPC server that answers the GCS method as a head with a token does: UNAUTHENTICATED."""
    grpc = pytest.importorskip("grpc")

    def refuse(request: bytes, context: Any) -> bytes:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "InvalidAuthToken: missing")

    yield from _grpc_server({GCS_METHOD: refuse})


@pytest.fixture
def open_head() -> Iterator[str]:
    """A gRPC server that answers the GCS method (an empty id), as a head with no token does."""
    yield from _grpc_server({GCS_METHOD: lambda request, context: b""})


@pytest.mark.parametrize("server", ["web_server", "silent_server", "other_grpc_server"])
def test_an_address_where_something_else_answers_is_refused_in_one_line(
    server: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was let through to ray.init, which hung (a web server: killed after 127 s).
    pytest.importorskip("grpc")
    monkeypatch.setattr(ray_address_module, "PROBE_SECONDS", 1.0)  # the silent one waits it out
    address = request.getfixturevalue(server)
    with pytest.raises(ValueError) as caught:
        ray_address(address)
    message = str(caught.value)
    assert message.startswith(f"--address {address!r}: cannot connect to Ray"), message
    assert "\n" not in message


def test_a_server_answering_as_ray_does_is_taken(open_head: str) -> None:
    assert ray_address(open_head) == open_head


def test_a_head_asking_for_a_token_is_taken_in_token_mode_only(
    head_with_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without RAY_AUTH_MODE=token, ray.init retried for 24 s, then said only that it failed.
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    with pytest.raises(ValueError, match=r"asks for an authentication token.*RAY_AUTH_MODE=token"):
        ray_address(head_with_token)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert ray_address(head_with_token) == head_with_token


def test_yinsh_eval_refuses_a_web_server_as_ray_before_any_game(
    web_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("grpc")
    argv = ["random", "greedy", "--games", "2", "--backend", "ray", "--address", web_server]
    assert eval_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "answers, but not as Ray does" in err[0], err


@pytest.mark.ray
@pytest.mark.slow
def test_yinsh_eval_on_ray_starts_a_local_ray_past_a_stale_cluster_file(
    stale_cluster: tuple[Path, str],
) -> None:
    pytest.importorskip("ray")
    folder, _ = stale_cluster
    code = "from agents.evaluation.eval_cli import main; raise SystemExit(main())"
    argv = ["random", "greedy", "--games", "2", "--backend", "ray", "-w", "1", "--no-progress"]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RAY_TMPDIR": str(folder)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "greedy" in done.stdout and "Failed to connect to GCS" not in done.stderr


class FakeRay:
    """``ray.wait`` and ``ray.nodes`` of a cluster whose nodes are ``alive``, where
    ``ready`` becomes ready on the ``after``-th wait."""

    def __init__(self, alive: list[bool], ready: str | None = None, after: int = 1) -> None:
        self.alive, self.ready, self.after, self.waits = alive, ready, after, 0

    def wait(self, refs: list[str], num_returns: int, timeout: float) -> tuple[list[str], list]:
        assert num_returns == 1 and timeout > 0  # never the wait without a bound
        self.waits += 1
        if self.ready is not None and self.waits >= self.after:
            return [self.ready], [r for r in refs if r != self.ready]
        return [], list(refs)

    def nodes(self) -> list[dict[str, bool]]:
        return [{"Alive": alive} for alive in self.alive]


def _with_ray(monkeypatch: pytest.MonkeyPatch, fake: FakeRay) -> None:
    module = types.ModuleType("ray")
    module.wait, module.nodes = fake.wait, fake.nodes  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", module)


def test_wait_first_gives_the_result_that_finishes_while_a_node_lives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeRay(alive=[False, True], ready="b", after=3)
    _with_ray(monkeypatch, fake)
    assert wait_first(["a", "b"], liveness_seconds=0.01) == "b"
    assert fake.waits == 3


def test_wait_first_stops_when_no_node_of_the_cluster_is_alive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeRay(alive=[False, False])
    _with_ray(monkeypatch, fake)
    with pytest.raises(RayClusterLost, match="no live node"):
        wait_first(["a"], liveness_seconds=0.01)
    assert fake.waits == 1
