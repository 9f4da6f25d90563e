"""Which Ray to connect to, decided before ``ray.init`` can hang on a dead one,
and waiting for results from it without hanging when it dies.

Given no address, ``ray.init()`` joins the cluster named in
``/tmp/ray/ray_current_cluster`` when that file exists, and keeps retrying
"Failed to connect to GCS" for minutes when the head it names is gone (a
stale file, left by a Ray that was killed).  The project's commands
(``yinsh-eval --backend ray``, the trainer's Ray backend, the RLlib example)
promise a local Ray when no address is given, so :func:`ray_address` turns
no address into ``"local"`` (unless ``RAY_ADDRESS`` names one, as a Ray job
does), and checks that an address given is Ray's, all within
:data:`PROBE_SECONDS` (name lookup included), else one ``ValueError`` naming
it: a TCP connection to its host and port, then one gRPC call that a Ray head
answers (its GCS, or the Ray Client server for ``ray://``).  A port where
something else listens (a web server, a proxy, another gRPC service) or nothing
answers in time would leave ``ray.init`` retrying for minutes.  The call asks
for no data Ray guards: a head that wants an authentication token answers
``UNAUTHENTICATED``, which says as well that Ray is there; but Ray sends its
token only with ``RAY_AUTH_MODE=token``, so without it such a head is refused
at once, saying so (``ray.init`` would retry, then fail without a reason).  With
``RAY_USE_TLS`` set (a cluster whose gRPC needs certificates) only the TCP
connection is checked.

Once connected, ``ray.wait`` with no timeout waits forever for a task whose
node died with its raylet (a raylet ends with one of its agents, say one that
could not bind its port): :func:`wait_first` waits in slices and, between
them, asks the cluster whether any node is still alive.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.params import clip

#: Seconds an address has to be found, accept a TCP connection and answer as Ray.
PROBE_SECONDS = 5.0
#: A method of a Ray head's GCS (``host:port``) and of the Ray Client server (``ray://``).
GCS_METHOD = "/ray.rpc.NodeInfoGcsService/GetClusterId"
CLIENT_METHOD = "/ray.rpc.RayletDriver/ClusterInfo"
#: gRPC status codes with which a Ray server answers a bare request (no token, no
#: fields): it knows the method, so Ray is there.
RAY_ANSWERS = ("OK", "UNAUTHENTICATED", "PERMISSION_DENIED", "INVALID_ARGUMENT")
#: Ray's default port (the GCS of a head started by ``ray start --head``).
DEFAULT_PORT = 6379
#: Ray Client's default port (``ray://head``).
CLIENT_PORT = 10001
#: Seconds :func:`wait_first` waits for a result before checking the cluster is alive.
LIVENESS_SECONDS = 15.0


class RayClusterLost(RuntimeError):
    """The cluster has no live node: the results waited for will never come."""


def wait_first(refs: Sequence[Any], liveness_seconds: float = LIVENESS_SECONDS) -> Any:
    """The first of ``refs`` (Ray object refs) to finish, as ``ray.wait`` gives it.

    Raises :class:`RayClusterLost` when a wait of ``liveness_seconds`` ends with
    nothing ready and no node of the cluster is alive.
    """
    import ray

    while True:
        ready, _ = ray.wait(list(refs), num_returns=1, timeout=liveness_seconds)
        if ready:
            return ready[0]
        if not any(node.get("Alive") for node in ray.nodes()):
            raise RayClusterLost(
                "the Ray cluster has no live node left (its raylet died: see its logs "
                "under /tmp/ray/session_latest/logs); the games in progress are lost"
            )


def ray_address(address: str | None, option: str = "--address") -> str:
    """The address to give ``ray.init``: ``"local"`` for none, else one that answers.

    ``auto`` is the cluster this machine joined (``RAY_ADDRESS``, else Ray's
    cluster file).  Raises ``ValueError`` naming ``option`` and the address
    when nothing answers there, or when ``auto`` finds no cluster.
    """
    if address is None or not address.strip():
        address = os.environ.get("RAY_ADDRESS", "").strip() or "local"
        option = "RAY_ADDRESS" if address != "local" else option
    if address == "local":
        return address
    bootstrap = _cluster_file_address() if address == "auto" else address
    if bootstrap is None:
        raise ValueError(
            f"{option} 'auto': cannot connect to Ray: no cluster found on this machine "
            "(start one, or give no address for a local Ray)"
        )
    host, port = _host_port(bootstrap)
    shown = repr(address[:80]) + ("" if bootstrap == address else f" ({bootstrap[:80]})")
    deadline = time.monotonic() + PROBE_SECONDS
    try:
        target = _connect(host, port, deadline)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ValueError(
            f"{option} {shown}: cannot connect to Ray: nothing answers at {host}:{port} "
            f"({why}) within {PROBE_SECONDS:g} s; give no address for a local Ray"
        ) from None
    method = CLIENT_METHOD if bootstrap.strip().startswith("ray://") else GCS_METHOD
    status, details = _ask(target, method, deadline)
    if status in RAY_ANSWERS and not details.startswith("Received http2 header"):
        token_mode = os.environ.get("RAY_AUTH_MODE", "").strip().lower() == "token"
        if status == "UNAUTHENTICATED" and not token_mode:
            raise ValueError(
                f"{option} {shown}: cannot connect to Ray: the Ray head at {host}:{port} "
                "asks for an authentication token, which this process sends only with "
                "RAY_AUTH_MODE=token (the token in RAY_AUTH_TOKEN or ~/.ray/auth_token)"
            )
        return address
    if status == "DEADLINE_EXCEEDED":
        what = f"no gRPC answer within {PROBE_SECONDS:g} s"
    else:
        details = details.rpartition(f"{target}: ")[2]  # gRPC's own words, not its preamble
        what = f"gRPC {status}: {clip(details, 160)}" if details else f"gRPC {status}"
    raise ValueError(
        f"{option} {shown}: cannot connect to Ray: {host}:{port} answers, but not as "
        f"Ray does ({what}); give no address for a local Ray"
    )


def _connect(host: str, port: int, deadline: float) -> str:
    """The gRPC target (``ipv4:A:P``, ``ipv6:[A]:P``) of the first address of ``host``
    that accepts a TCP connection before ``deadline``; OSError otherwise."""
    found: list[Any] = []

    def lookup() -> None:  # getaddrinfo takes no timeout: it waits in a thread of its own
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            found.append(exc)

    thread = threading.Thread(target=lookup, name="ray-address-lookup", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if not found:
        raise TimeoutError(f"no address found for {host!r}")
    if isinstance(found[0], OSError):
        raise found[0]
    error: OSError = TimeoutError("no address")
    for family, kind, protocol, _, sockaddr in found[0]:
        try:
            with socket.socket(family, kind, protocol) as sock:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                sock.connect(sockaddr)
        except OSError as exc:
            error = exc
            continue
        ip = sockaddr[0]
        return f"ipv6:[{ip}]:{port}" if family == socket.AF_INET6 else f"ipv4:{ip}:{port}"
    raise error


def _ask(target: str, method: str, deadline: float) -> tuple[str, str]:
    """The gRPC status name and details of a bare call of ``method`` at ``target``
    (``("OK", "")`` where it cannot be asked: see the module docstring)."""
    if os.environ.get("RAY_USE_TLS", "").strip().lower() in ("1", "true"):
        return "OK", ""  # Ray's TLS needs its certificates: the TCP answer is all that is checked
    try:
        import grpc
    except ImportError:  # no gRPC means no Ray either: the import of Ray says so
        return "OK", ""
    channel = grpc.insecure_channel(target, options=[("grpc.enable_http_proxy", 0)])
    try:
        channel.unary_unary(method)(b"", timeout=max(0.05, deadline - time.monotonic()))
    except grpc.RpcError as exc:
        code = getattr(exc, "code", lambda: None)()
        details = " ".join(str(getattr(exc, "details", lambda: "")() or "").split())
        return getattr(code, "name", "no status"), details
    finally:
        channel.close()
    return "OK", ""


def _cluster_file_address() -> str | None:
    """The address ``ray.init(address="auto")`` would use, if any."""
    from_env = os.environ.get("RAY_ADDRESS", "").strip()
    if from_env and from_env not in ("auto", "local"):
        return from_env
    temp = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"  # as Ray looks
    try:
        text = (Path(temp) / "ray" / "ray_current_cluster").read_text(errors="replace")
    except OSError:
        return None
    return text.strip().splitlines()[0].strip() if text.strip() else None


def _host_port(address: str) -> tuple[str, int]:
    """``host`` and ``port`` of ``host:port``, ``ray://host[:port]`` or ``[v6]:port``."""
    rest = address.strip()
    port = DEFAULT_PORT
    if rest.startswith("ray://"):
        rest, port = rest[len("ray://") :], CLIENT_PORT
    rest = rest.split("/", 1)[0]
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        text = tail.removeprefix(":")
    else:
        host, _, text = rest.rpartition(":") if ":" in rest else (rest, "", "")
    if text:
        if not (text.isascii() and text.isdigit() and 0 < int(text) < 65536):
            raise ValueError(
                f"Ray address {address[:80]!r}: cannot connect to Ray: bad port {text[:10]!r}"
            )
        port = int(text)
    if not host:
        raise ValueError(f"Ray address {address[:80]!r} names no host")
    return host, port
