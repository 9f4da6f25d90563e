"""The web app's HTTP server: the page, its assets and a JSON API over the games.

Standard library only (:mod:`http.server` with a thread per request): the app
serves one person or a few on their own machine, agents think on their own
threads (:mod:`agents.web.session`), and the page polls, so nothing here needs
an async framework.  The server binds to ``127.0.0.1`` unless told otherwise,
refuses requests whose ``Host`` is not the address it serves (DNS rebinding)
and takes POST bodies only as JSON (no cross-site form posts).

API (JSON in and out; errors are ``{"error": message}`` with a 4xx status,
and change nothing):

=======  ==============================  ==================================================
method   path                            does
=======  ==============================  ==================================================
GET      ``/api/info``                   agent names, default players, board geometry
GET      ``/api/games``                  ids of the open games
POST     ``/api/games``                  new game: ``white``, ``black`` (``"human"`` or a
                                         spec), ``rings_to_win``, ``text`` (a position or a
                                         record to start from), ``seed``, ``delay``
GET      ``/api/games/ID[?ply=N]``       the game's view (the position after ply N)
DELETE   ``/api/games/ID``               close the game
POST     ``/api/games/ID/action``        a person's decision: ``action`` (notation),
                                         optional ``ply`` (actions the page saw)
POST     ``/api/games/ID/undo``          back to the person's previous decision
POST     ``/api/games/ID/players``       reseat: ``white``, ``black`` (also retries an agent)
POST     ``/api/games/ID/load``          replace the game: ``text`` (position or record)
POST     ``/api/games/ID/analysis``      ask ``spec`` about ply ``ply`` (default: now)
GET      ``/api/games/ID/record``        the record: ``?format=yinsh`` (default) or ``sgf``
=======  ==============================  ==================================================
"""

from __future__ import annotations

import json
import re
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..spec import available_agents
from .geometry import board_geometry
from .session import HUMAN, GameSession, SessionError
from .store import SessionStore

#: Largest request body accepted (a long record is a few kB).
MAX_BODY = 1 << 20
#: The page's files: URL name -> (package file, content type).  Nothing else is served.
STATIC = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "style.css": ("style.css", "text/css; charset=utf-8"),
}
_GAME = re.compile(r"^/api/games/([0-9a-f]{1,32})(?:/([a-z]+))?$")


@dataclass
class AppConfig:
    """What the server offers the page: the default players and the analysis agent."""

    white: str = HUMAN
    black: str = "random"
    analyst: str = "mcts:sims=200"
    think_timeout: float = 120.0


class _Handler(BaseHTTPRequestHandler):
    server: YinshServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # --- plumbing ------------------------------------------------------------------

    def _send(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _body(self) -> dict[str, Any]:
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            if self.headers.get("Transfer-Encoding"):
                raise SessionError("chunked bodies are not accepted: send Content-Length", 411)
            return {}
        try:
            length = int(length_text)
        except ValueError:
            raise SessionError(f"bad Content-Length {length_text!r}") from None
        if length < 0:
            raise SessionError(f"bad Content-Length {length_text!r}")
        if length > MAX_BODY:
            self.close_connection = True
            raise SessionError(f"request body of {length} bytes is over {MAX_BODY}", 413)
        raw = self.rfile.read(length)
        if not raw:
            return {}
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise SessionError(f"send JSON (Content-Type: application/json), not {kind!r}", 415)
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SessionError(f"malformed JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SessionError(f"the body must be a JSON object, got {type(data).__name__}")
        return data

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        return self.server.allowed_host(host)

    def _dispatch(self, method: str) -> None:
        try:
            if not self._host_ok():
                raise SessionError(f"unexpected Host header {self.headers.get('Host')!r}", 403)
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path.startswith("/api/"):
                body = self._body() if method in ("POST", "DELETE") else {}
                self._api(method, url.path, query, body)
            else:
                self._static(method, url.path)
        except SessionError as exc:
            self._error(exc.status, str(exc))
        except Exception as exc:  # a bug answers 500 and leaves the server up
            self._error(500, f"internal error: {type(exc).__name__}: {exc}")

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PUT(self) -> None:
        self._error(405, "method PUT not allowed")

    def do_PATCH(self) -> None:
        self._error(405, "method PATCH not allowed")

    # --- routes ---------------------------------------------------------------------

    def _static(self, method: str, path: str) -> None:
        if method != "GET":
            raise SessionError(f"method {method} not allowed on {path!r}", 405)
        name = path[1:]
        if name not in STATIC:
            raise SessionError(f"no such page {path!r}", 404)
        filename, content_type = STATIC[name]
        body = resources.files("agents.web").joinpath("static", filename).read_bytes()
        self._send(200, body, content_type)

    def _api(
        self, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]
    ) -> None:
        store = self.server.store
        if path == "/api/info":
            self._need(method, "GET", path)
            self._json(200, self.server.info())
            return
        if path == "/api/games":
            if method == "GET":
                self._json(200, {"games": store.ids()})
                return
            self._need(method, "POST", path)
            game = store.create(body)
            self._json(201, game.view())
            return
        match = _GAME.match(path)
        if not match:
            raise SessionError(f"no such API path {path!r}", 404)
        game = store.get(match.group(1))
        verb = match.group(2)
        if verb is None:
            if method == "DELETE":
                store.delete(game.id)
                self._json(200, {"deleted": game.id})
                return
            self._need(method, "GET", path)
            self._json(200, game.view(_int_param(query, "ply")))
            return
        handler = _VERBS.get(verb)
        if handler is None:
            raise SessionError(f"no such API path {path!r}", 404)
        wanted, run = handler
        self._need(method, wanted, path)
        if wanted == "GET":
            run(self, game, query)
        else:
            _only(body, _FIELDS[verb], verb)
            run(self, game, body)

    @staticmethod
    def _need(method: str, wanted: str, path: str) -> None:
        if method != wanted:
            raise SessionError(f"method {method} not allowed on {path!r} (use {wanted})", 405)

    # --- verbs -------------------------------------------------------------------------

    def _action(self, game: GameSession, body: dict[str, Any]) -> None:
        action = body.get("action")
        if not isinstance(action, str):
            raise SessionError('give the decision as {"action": "E5"} (notation)')
        ply = body.get("ply")
        if ply is not None and (isinstance(ply, bool) or not isinstance(ply, int)):
            raise SessionError(f"ply must be an integer, got {ply!r}")
        game.play(action, ply)
        self._json(200, game.view())

    def _undo(self, game: GameSession, body: dict[str, Any]) -> None:
        game.undo()
        self._json(200, game.view())

    def _players(self, game: GameSession, body: dict[str, Any]) -> None:
        white, black = body.get("white", game.players[0]), body.get("black", game.players[1])
        if not isinstance(white, str) or not isinstance(black, str):
            raise SessionError("white and black must be strings ('human' or an agent spec)")
        game.set_players(white, black)
        self._json(200, game.view())

    def _load(self, game: GameSession, body: dict[str, Any]) -> None:
        text = body.get("text")
        if not isinstance(text, str):
            raise SessionError('give the position or record as {"text": "..."}')
        game.load(text)
        self._json(200, game.view())

    def _analysis(self, game: GameSession, body: dict[str, Any]) -> None:
        spec = body.get("spec", self.server.config.analyst)
        if not isinstance(spec, str):
            raise SessionError("spec must be a string (an agent spec)")
        ply = body.get("ply")
        if ply is not None and (isinstance(ply, bool) or not isinstance(ply, int)):
            raise SessionError(f"ply must be an integer, got {ply!r}")
        game.request_analysis(spec, ply)
        self._json(202, game.view(ply))

    def _record(self, game: GameSession, query: dict[str, list[str]]) -> None:
        fmt = (query.get("format") or ["yinsh"])[-1]
        text = game.record_text(fmt)
        name = f"yinsh-{game.id}.{fmt}"
        self._send(
            200,
            text.encode(),
            "text/plain; charset=utf-8",
            {"Content-Disposition": f'attachment; filename="{name}"'},
        )


_Verb = tuple[str, Callable[..., None]]
_VERBS: dict[str, _Verb] = {
    "action": ("POST", _Handler._action),
    "undo": ("POST", _Handler._undo),
    "players": ("POST", _Handler._players),
    "load": ("POST", _Handler._load),
    "analysis": ("POST", _Handler._analysis),
    "record": ("GET", _Handler._record),
}
_FIELDS = {
    "action": {"action", "ply"},
    "undo": set(),
    "players": {"white", "black"},
    "load": {"text"},
    "analysis": {"spec", "ply"},
}


def _only(body: dict[str, Any], allowed: set[str], verb: str) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise SessionError(f"unknown field(s) {unknown} for {verb} (allowed: {sorted(allowed)})")


def _int_param(query: dict[str, list[str]], key: str) -> int | None:
    values = query.get(key)
    if not values:
        return None
    try:
        return int(values[-1])
    except ValueError:
        raise SessionError(f"{key} must be an integer, got {values[-1]!r}") from None


class YinshServer(ThreadingHTTPServer):
    """The app's server: a store of games and the handler above."""

    daemon_threads = True

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        config: AppConfig | None = None,
        verbose: bool = False,
    ) -> None:
        self.config = config or AppConfig()
        self.store = SessionStore(think_timeout=self.config.think_timeout)
        self.verbose = verbose
        super().__init__((host, port), _Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else str(host)
        return f"http://{shown}:{port}/"

    def allowed_host(self, host: str) -> bool:
        """Loopback names always; any other only when the server was bound to it (or to all)."""
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        name = name.strip("[]")
        bound = str(self.server_address[0])
        if name in ("127.0.0.1", "localhost", "::1"):
            return True
        return bound in ("0.0.0.0", "::", "") or name == bound

    def info(self) -> dict[str, Any]:
        return {
            "agents": [HUMAN, *available_agents()],
            "defaults": {
                "white": self.config.white,
                "black": self.config.black,
                "analyst": self.config.analyst,
            },
            "geometry": board_geometry(),
        }

    def start(self) -> YinshServer:
        """Serve on a background thread (notebooks, tests); returns self."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True, name="yinsh-web")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.store.close()


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    config: AppConfig | None = None,
    open_browser: bool = True,
    verbose: bool = True,
) -> int:
    """Run the app until interrupted (``yinsh-play --web``); returns the exit status."""
    try:
        server = YinshServer(host, port, config, verbose=verbose)
    except OSError as exc:
        raise ValueError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    print(f"YINSH web app on {server.url}  (Ctrl-C to stop)", flush=True)
    if open_browser:
        threading.Timer(0.3, webbrowser.open, args=(server.url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.store.close()
    return 0
