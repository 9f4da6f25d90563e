"""Talking to a web app server in the tests: JSON requests, raw bytes, bounded waits.

Imported as ``from web_client import ...`` (pytest puts ``tests/`` on the path).
Every wait polls under a generous deadline and fails with what it last saw;
nothing measures how long anything took.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from agents.web import AppConfig, YinshServer

#: Seconds any wait in the web tests may last before it fails (generous: loaded machines).
PATIENCE = 60.0


@contextmanager
def serving(config: AppConfig, **limits: float) -> Iterator[YinshServer]:
    """A server on a free port of 127.0.0.1 (``limits``: e.g. a shorter ``socket_timeout``)."""
    server = YinshServer("127.0.0.1", 0, config)
    for key, value in limits.items():
        setattr(server, key, value)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Client:
    """Requests to one server, answers as (status, JSON or text), as the page sends them.

    It keeps the server's client cookie, as a browser does (so its games stay
    its own), and says ``Content-Type: application/json`` on every request but
    GET and HEAD unless ``headers`` say otherwise.  ``cookie=False``: never sends one.
    """

    def __init__(self, server: YinshServer, cookie: bool = True) -> None:
        self.host, self.port = server.server_address[:2]
        self.cookie: str | None = None
        #: The headers of the last answer (lower-case names).
        self.last_headers: dict[str, str] = {}
        self._keeps_cookie = cookie
        self._lock = threading.Lock()

    def _cookie(self) -> str | None:
        """The client cookie, asked for once (before requests that may run at once)."""
        if not self._keeps_cookie:
            return None
        with self._lock:
            if self.cookie is None:
                conn = http.client.HTTPConnection(str(self.host), int(self.port), timeout=PATIENCE)
                try:
                    conn.request("GET", "/api/info")
                    response = conn.getresponse()
                    response.read()
                finally:
                    conn.close()
                self.cookie = (response.getheader("Set-Cookie") or "").split(";")[0] or None
            return self.cookie

    def request(self, *args: Any, **kwargs: Any) -> tuple[int, Any]:
        """(status, JSON or text) of :meth:`exchange`."""
        status, kind, text = self.exchange(*args, **kwargs)
        return status, json.loads(text) if kind.startswith("application/json") else text

    def exchange(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> tuple[int, str, str]:
        """(status, content type, body text) of one request on a fresh connection.

        A header given as None is not sent (``{"Content-Type": None}``: none at all).
        """
        conn = http.client.HTTPConnection(str(self.host), int(self.port), timeout=PATIENCE)
        given = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if method not in ("GET", "HEAD") and not any(k.lower() == "content-type" for k in given):
            given["Content-Type"] = "application/json"
        cookie = self._cookie()
        if cookie is not None and not any(k.lower() == "cookie" for k in given):
            given["Cookie"] = cookie
        sent = {key: value for key, value in given.items() if value is not None}
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            text = response.read().decode("utf-8", "replace")
            self.last_headers = {key.lower(): value for key, value in response.getheaders()}
        finally:
            conn.close()
        return response.status, response.getheader("Content-Type", ""), text

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, data = self.request(method, path, body)
        assert 200 <= status < 300, (status, data)
        return data

    def new(self, **options: Any) -> dict[str, Any]:
        options.setdefault("delay", 0)
        return self.ok("POST", "/api/games", options)

    def act(self, game: dict[str, Any], action: str) -> dict[str, Any]:
        return self.ok("POST", f"/api/games/{game['id']}/action", {"action": action})

    def view(self, game: dict[str, Any], ply: int | None = None) -> dict[str, Any]:
        query = "" if ply is None else f"?ply={ply}"
        return self.ok("GET", f"/api/games/{game['id']}{query}")

    def wait(
        self,
        game: dict[str, Any],
        done: Callable[[dict[str, Any]], bool],
        patience: float = PATIENCE,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + patience
        view = self.view(game)
        while not done(view):
            assert time.monotonic() < deadline, f"timed out waiting; last view {view}"
            time.sleep(0.02)
            view = self.view(game)
        return view

    def raw(self, data: bytes, close: bool = True, patience: float = PATIENCE) -> bytes:
        """Send ``data`` as is and read until the server closes (or ``patience`` passes)."""
        with socket.create_connection((str(self.host), int(self.port)), timeout=patience) as sock:
            sock.sendall(data)
            if close:
                sock.shutdown(socket.SHUT_WR)
            return read_all(sock, patience)


def read_all(sock: socket.socket, patience: float = PATIENCE) -> bytes:
    """Everything the server sends until it closes the connection."""
    deadline = time.monotonic() + patience
    chunks = []
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """The HTTP responses in ``data``: (status, headers, body), by their Content-Length."""
    found = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"incomplete response: {data[:200]!r}"
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        found.append((status, headers, rest[:length]))
        data = rest[length:]
    return found


def wait_until(condition: Callable[[], bool], what: str, patience: float = PATIENCE) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def thread_names() -> set[str]:
    return {thread.name for thread in threading.enumerate()}
