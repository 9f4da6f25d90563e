"""The HTTP plumbing under the web app: bounded threads, bounded reads, JSON for every answer.

Standard library only (:mod:`http.server`), with the limits a server open to
other machines needs:

* connections are handled on a pool of :data:`REQUEST_WORKERS` threads
  (others wait in the pool's queue, and the kernel's listen backlog is
  :data:`LISTEN_BACKLOG`, so a burst of connections waits rather than being
  reset); past :data:`MAX_CONNECTIONS` open connections a new one is answered
  503 at once; while connections wait, keep-alive is dropped so they rotate;
* every read waits at most :data:`SOCKET_TIMEOUT` seconds, and a request
  (headers and body, however slowly they trickle in) must arrive within
  :data:`REQUEST_DEADLINE` seconds, else its connection is shut down: a
  stalled or dribbled request cannot hold a thread;
* a body is read only with a ``Content-Length`` of at most :data:`MAX_BODY`
  bytes (chunked bodies, several lengths, or a length with
  ``Transfer-Encoding`` are refused, and a refused request closes its
  connection, so no leftover bytes are read as the next request); JSON
  bodies are objects nested at most :data:`MAX_DEPTH` deep, with integers of
  at most :data:`MAX_INT_DIGITS` digits and finite numbers only;
* every answer, for every method and every failure (a malformed request line,
  headers too long, an unknown method, a bug), is JSON ``{"error": ...}``
  with a short message (:mod:`agents.web.http_errors`), except the page's own files
  and record downloads; a refusal is always 4xx (an unknown method 405, an
  unsupported HTTP version 400), and 503 only when the server is full.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from agents.web.http_errors import SessionError, clip, short

#: Threads handling connections at most.
REQUEST_WORKERS = 32
#: Connections the kernel queues before the server accepts them.
LISTEN_BACKLOG = 128
#: Open connections at most (handled or waiting for a thread); past it, 503.
MAX_CONNECTIONS = 256
#: Seconds one read on a connection may wait.
SOCKET_TIMEOUT = 10.0
#: Seconds a whole request may take to arrive (and be answered).
REQUEST_DEADLINE = 30.0
#: Largest request body accepted (a long record is a few kB).
MAX_BODY = 1 << 20
#: Deepest JSON nesting accepted (the API's bodies are flat objects).
MAX_DEPTH = 8
#: Longest JSON integer accepted, in digits.
MAX_INT_DIGITS = 20


class BoundedHTTPServer(HTTPServer):
    """An :class:`HTTPServer` whose connections run on a bounded pool, each under a deadline."""

    request_queue_size = LISTEN_BACKLOG
    #: Seconds one read may wait, and a whole request may take (tests shorten them).
    socket_timeout = SOCKET_TIMEOUT
    request_deadline = REQUEST_DEADLINE

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self._pool = ThreadPoolExecutor(REQUEST_WORKERS, thread_name_prefix="yinsh-http")
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._deadlines: dict[socket.socket, float] = {}
        self._closing = False
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            full = self._closing or len(self._open) >= MAX_CONNECTIONS
            if not full:
                self._open.add(request)
        if full:
            _refuse(request)
            self.shutdown_request(request)
            return
        self._pool.submit(self._handle, request, client_address)

    def _handle(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            with self._lock:
                self._open.discard(request)
                self._deadlines.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that broke or timed out is no news; anything else is logged."""
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handle_error(request, client_address)

    def watch(self, connection: socket.socket) -> None:
        """Start the :data:`REQUEST_DEADLINE` of the next request on ``connection``."""
        with self._lock:
            if connection in self._open:
                self._deadlines[connection] = time.monotonic() + self.request_deadline

    def crowded(self) -> bool:
        """Whether connections are waiting for a thread (then keep-alive is dropped)."""
        with self._lock:
            return len(self._open) > REQUEST_WORKERS

    def service_actions(self) -> None:
        """Shut down connections past their deadline (``serve_forever`` calls this often)."""
        now = time.monotonic()
        with self._lock:
            late = [conn for conn, deadline in self._deadlines.items() if deadline < now]
            for conn in late:
                del self._deadlines[conn]
        for conn in late:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def server_close(self) -> None:
        """Stop listening and end every connection (their threads then return)."""
        super().server_close()
        with self._lock:
            self._closing = True
            live = list(self._open)
        for conn in live:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._pool.shutdown(wait=False)


def _refuse(request: socket.socket) -> None:
    body = json.dumps({"error": "the server is busy: try again shortly"}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        request.settimeout(1.0)
        request.sendall(head.encode() + body)


class JSONRequestHandler(BaseHTTPRequestHandler):
    """Answers in JSON, reads bodies within bounds; subclasses route (:meth:`route`)."""

    server: BoundedHTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "yinsh-web"
    sys_version = ""
    #: Headers every answer to the current request carries (:meth:`route` may add some).
    answer_headers: dict[str, str]

    def route(self, method: str) -> None:
        """Answer the request (``method`` is ``GET`` for ``HEAD``); raise SessionError to refuse."""
        raise NotImplementedError

    def setup(self) -> None:
        self.answer_headers = {}
        super().setup()
        self.connection.settimeout(self.server.socket_timeout)

    def handle_one_request(self) -> None:
        self.server.watch(self.connection)
        super().handle_one_request()
        if self.server.crowded():
            self.close_connection = True

    def _dispatch(self) -> None:
        self.answer_headers = {}
        try:
            self.route("GET" if self.command == "HEAD" else self.command)
        except SessionError as exc:
            self.send_json_error(exc.status, str(exc), exc.headers)
        except TimeoutError:
            self.send_json_error(408, "the request did not arrive in time")
        except OSError:
            self.close_connection = True  # the client went away: nobody to answer
        except Exception as exc:  # a bug answers 500 and leaves the server up
            self.send_json_error(500, f"internal error: {type(exc).__name__}: {exc}")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch

    def __getattr__(self, name: str) -> Any:
        """Any other method (``TRACE``, ``BREW``, ``get``) is routed too, to be refused."""
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    # --- answers ---------------------------------------------------------------------

    def send_body(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.close_connection:
            self.send_header("Connection", "close")
        for key, value in {**self.answer_headers, **(extra or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD" and status >= 200 and status not in (204, 304):
            self.wfile.write(body)

    def send_json(self, status: int, data: Any, extra: dict[str, str] | None = None) -> None:
        self.send_body(status, json.dumps(data).encode(), "application/json", extra)

    def send_json_error(
        self, status: int, message: str, extra: dict[str, str] | None = None
    ) -> None:
        """A refusal; the connection closes (a body left unread is never read as a request)."""
        self.close_connection = True
        self.send_json(status, {"error": short(message)}, extra)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's errors (bad request line, long headers, ...) as JSON."""
        if code == 505:  # a refusal of the client's request: 4xx, like every other
            code, message = 400, f"unsupported HTTP version {clip(self.request_version)}"
        short_text, _ = self.responses.get(code, ("error", ""))
        text = message or short_text
        if self.request_version == "HTTP/0.9":  # an unparsed request line: answer with headers
            self.request_version = "HTTP/1.0"
        with contextlib.suppress(OSError):
            self.send_json_error(code, text)

    def log_message(self, format: str, *args: Any) -> None:
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)

    # --- the body --------------------------------------------------------------------

    def read_body(self) -> bytes:
        """The request's body (``b""`` when none), read within the limits above."""
        lengths = self.headers.get_all("Content-Length") or []
        coding = self.headers.get("Transfer-Encoding")
        if coding is not None:
            if lengths:
                raise SessionError("both Content-Length and Transfer-Encoding: refused")
            raise SessionError("chunked bodies are not accepted: send Content-Length", 411)
        if not lengths:
            return b""
        if len(lengths) > 1:
            raise SessionError("several Content-Length headers: refused")
        text = lengths[0].strip()
        if not text.isascii() or not text.isdigit() or len(text) > 12:
            raise SessionError(f"bad Content-Length {clip(lengths[0])}")
        length = int(text)
        if length > MAX_BODY:
            raise SessionError(f"request body of {length} bytes is over {MAX_BODY}", 413)
        body = self.rfile.read(length)
        if len(body) < length:
            raise SessionError(f"the body ended after {len(body)} of {length} bytes")
        return body

    def read_json(self) -> dict[str, Any]:
        """The body as a JSON object (``{}`` when there is none)."""
        raw = self.read_body()
        if not raw:
            return {}
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise SessionError(f"send JSON (Content-Type: application/json), not {clip(kind)}", 415)
        return parse_json_object(raw)


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """A JSON object from ``raw``, within :data:`MAX_DEPTH` and the number limits (else 400)."""
    try:
        text = raw.decode("utf-8")
        data = json.loads(
            text, parse_int=_small_int, parse_float=_finite_float, parse_constant=_no_constant
        )
    except UnicodeDecodeError:
        raise SessionError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise SessionError(f"malformed JSON: {exc.msg} ({where})") from None
    except RecursionError:  # the decoder's own bound, far past ours
        raise SessionError(f"JSON nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # from the hooks below
        raise SessionError(f"bad JSON value: {exc}") from None
    if not isinstance(data, dict):
        raise SessionError(f"the body must be a JSON object, got {type(data).__name__}")
    if _depth(data) > MAX_DEPTH:
        raise SessionError(f"JSON nested too deeply (at most {MAX_DEPTH} levels)")
    return data


def _small_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {clip(text)} is out of range")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def _depth(data: Any) -> int:
    """Nesting depth of parsed JSON (iterative: no recursion on hostile input)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return deepest
