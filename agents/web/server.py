"""The web app's HTTP server: the page, its assets and a JSON API over the games.

Standard library only (:mod:`http.server`, made bounded by
:mod:`agents.web.httpd`): the app serves one person or a few, agents think on
a bounded pool (:mod:`agents.web.jobs`), and the page polls, so nothing here
needs an async framework.

Threat model
------------
The server binds to ``127.0.0.1`` unless told otherwise (``--host``), but it
is written for a client that is hostile: any web page the person visits (it
can send requests to localhost), or anyone who can reach the port when it is
bound further.  What a client may do:

* **play and analyse**, with ``"human"`` or an agent it names by spec; a spec
  is built only if :class:`~agents.web.policy.AgentPolicy` admits it: the
  built-in agents ``random``, ``greedy``, ``alphabeta``, ``mcts`` and
  ``pretrained`` with numeric keys within bounds (at most
  :data:`~agents.web.policy.MAX_SIMS` simulations, and every decision or
  analysis stopped after :data:`~agents.web.policy.MAX_SECONDS` seconds), or
  exactly the specs the server was started with (``--opponent``,
  ``--allow``, the page's defaults), to which it may add a bounded ``sims``
  or ``time``;
* **load positions and records** it pastes (parsed with the engine's bounded
  parsers), and download its games' records.

What a client may not do, whatever it sends:

* **start a program or touch a file**: ``engine:`` (runs a command), any key
  naming a file (``path=``, ``log=``, ...), and every agent or key not on the
  whitelist are refused with 403 before anything is built; files are served
  only from the page's own five names (:data:`STATIC`);
* **start unbounded work**: every search a client starts has a ceiling of
  simulations and seconds, and is cancelled (its search stops at the next
  simulation) when it is replaced (undo, load, new players, a new analysis)
  or its game is closed or evicted; a game review stops after
  :data:`~agents.web.reviews.REVIEW_SECONDS` seconds (:mod:`agents.web.reviews`);
  agents think on a pool of
  :data:`~agents.web.jobs.THINK_WORKERS` threads; the server keeps at most
  :data:`~agents.web.store.MAX_GAMES` games (see below; a game closed goes
  with its jobs) and handles connections on a bounded pool with read
  timeouts, request deadlines, a body limit and bounded JSON
  (:mod:`agents.web.httpd`);
* **get a 500 or an echo of its input**: refusals are 4xx (400 malformed,
  403 not permitted, 404, 405, 409, 411, 413, 415) with a short JSON error
  quoting at most :data:`~agents.web.http_errors.ECHO_LIMIT` characters of any
  value; every method on every path answers JSON, except the page's files;
* **reach the API across sites**: requests whose ``Host`` names the server
  by a name it was not started with are refused (DNS rebinding: a page of
  ``evil.example``, its name pointed at this machine, would otherwise be the
  server's own origin).  Taken: the loopback names, the address bound, an IP
  address when bound to all of them (``--host 0.0.0.0``: no DNS is involved),
  and each name given with ``--allow-host`` (:attr:`AppConfig.allow_hosts`);
  every request that may change
  state (any method but GET, HEAD and OPTIONS) must say
  ``Content-Type: application/json``, body or not, and is refused if its
  ``Origin`` is not the server's own or its ``Sec-Fetch-Site`` is not
  ``same-origin`` or ``none`` (no cross-site form posts or no-cors fetches;
  browsers preflight JSON, and no CORS header is ever sent)
  (:mod:`agents.web.clients`);
* **change another client's games**: each client is known by a random
  token, which the page sends in an ``X-Yinsh-Client`` header (kept in the
  browser's local storage), else by a ``SameSite=Strict`` cookie set on its
  first answer (scripts keep it: ``curl -b jar -c jar``); a game belongs to
  the client that made it: any other client gets 403 if it tries to change
  or close it, and lists only its own games.  Game ids are 64 random bits,
  and whoever knows one may look at the game (the page's download links
  carry no token).  The
  store is shared: when it holds :data:`~agents.web.store.MAX_GAMES` games,
  a new game closes the same client's least recently used one, else a game
  nobody has asked about for :data:`~agents.web.store.IDLE_SECONDS` seconds
  (an open page asks every few seconds), else it is refused with 503: a
  flood of new games can keep others from starting one, never close one in
  use.

Out of scope: availability under a flood (the limits bound what the server
holds; they do not share it fairly), and secrecy of the traffic (plain HTTP).

API (JSON in and out; errors are ``{"error": message}`` with a 4xx status,
and change nothing):

=======  ==============================  ==================================================
method   path                            does
=======  ==============================  ==================================================
GET      ``/api/info``                   agents offered, defaults, limits, board geometry
GET      ``/api/games``                  ids of this client's open games
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
POST     ``/api/games/ID/review``        review the game so far with ``spec`` (default: the
                                         analyst), or ``{"cancel": true}`` to stop it
GET      ``/api/games/ID/record``        the record: ``?format=yinsh`` (default) or ``sgf``
=======  ==============================  ==================================================
"""

from __future__ import annotations

import ipaddress
import re
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agents.web.board_geometry import board_geometry
from agents.web.clients import check_same_origin, client_token, cookie_header, new_token
from agents.web.http_errors import SessionError, clip
from agents.web.httpd import BoundedHTTPServer, JSONRequestHandler
from agents.web.jobs import THINK_WORKERS
from agents.web.policy import MAX_SECONDS, MAX_SIMS, AgentPolicy
from agents.web.session import HUMAN, GameSession
from agents.web.store import MAX_GAMES, SessionStore

#: The page's files: URL name -> (package file, content type).  Nothing else is served.
STATIC = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "review.js": ("review.js", "text/javascript; charset=utf-8"),
    "style.css": ("style.css", "text/css; charset=utf-8"),
}
_GAME = re.compile(r"/api/games/([0-9a-f]{1,32})(?:/([a-z]{1,16}))?")
_PLY = re.compile(r"[0-9]{1,9}")
#: A Host header: a name or IPv4 address, or a bracketed IPv6 one, then an optional port.
_HOST = re.compile(r"(?:\[([0-9a-f:.]+)\]|([a-z0-9.-]+))(?::[0-9]{1,5})?")
#: Longest decision in notation (``xE10-K10`` and the like are far shorter).
_MAX_ACTION = 32


@dataclass
class AppConfig:
    """What the server offers: the page's defaults, the specs it allows, its limits.

    ``white``, ``black`` and ``analyst`` are the page's defaults; they and
    ``allow`` are the operator's specs, which clients may use as written
    (:class:`~agents.web.policy.AgentPolicy`).
    """

    white: str = HUMAN
    black: str = "random"
    analyst: str = "mcts:sims=200"
    think_timeout: float = 120.0
    allow: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    max_games: int = MAX_GAMES
    workers: int = THINK_WORKERS

    def trusted(self) -> list[str]:
        """The operator's specs: ``allow`` and the non-human defaults."""
        defaults = (self.white, self.black, self.analyst)
        return [*self.allow, *(spec for spec in defaults if spec.strip() not in ("", HUMAN))]


class _Handler(JSONRequestHandler):
    server: YinshServer
    #: The client's token (:mod:`agents.web.clients`), set by :meth:`route`.
    client: str

    def route(self, method: str) -> None:
        host = self.headers.get("Host") or ""
        if not self.server.allowed_host(host.strip().lower()):
            raise SessionError(f"unexpected Host header {clip(host)}", 403)
        check_same_origin(method, self.headers, host.strip().lower())
        token = client_token(self.headers)
        if token is None:  # a new client: known from now on by this cookie
            token = new_token()
            self.answer_headers["Set-Cookie"] = cookie_header(token)
        self.client = token
        if not self.path.startswith("/"):
            raise SessionError(f"request target {clip(self.path)} is not a path")
        url = urlsplit(self.path)
        try:
            query = parse_qs(url.query, max_num_fields=16)
        except ValueError:
            raise SessionError("too many query fields (at most 16)") from None
        if method in ("POST", "DELETE"):
            body = self.read_json()
        else:
            self.read_body()  # read (and ignore) any body: never left for the next request
            body = {}
        if url.path.startswith("/api/"):
            self._api(method, url.path, query, body)
        else:
            self._static(method, url.path)

    # --- routes ---------------------------------------------------------------------

    def _static(self, method: str, path: str) -> None:
        _need(method, "GET", path)
        name = path[1:]
        if name not in STATIC:
            raise SessionError(f"no such page {clip(path)}", 404)
        filename, content_type = STATIC[name]
        body = resources.files("agents.web").joinpath("static", filename).read_bytes()
        self.send_body(200, body, content_type)

    def _api(
        self, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]
    ) -> None:
        store = self.server.store
        if path == "/api/info":
            _need(method, "GET", path)
            self.send_json(200, self.server.info())
            return
        if path == "/api/games":
            if method == "GET":
                self.send_json(200, {"games": store.ids(self.client)})
                return
            _need(method, "GET or POST", path)
            game = store.create(body, self.client)
            self.send_json(201, game.view())
            return
        match = _GAME.fullmatch(path)
        if not match:
            raise SessionError(f"no such API path {clip(path)}", 404)
        verb = match.group(2)
        handler = None if verb is None else _VERBS.get(verb)
        if verb is not None and handler is None:
            raise SessionError(f"no such API path {clip(path)}", 404)
        wanted = "GET or DELETE" if handler is None else handler[0]
        _need(method, wanted, path)
        game = store.get(match.group(1), self.client, read_only=method == "GET")
        if handler is None:
            if method == "DELETE":
                store.delete(game.id, self.client)
                self.send_json(200, {"deleted": game.id})
                return
            self.send_json(200, game.view(_int_param(query, "ply")))
            return
        run = handler[1]
        if wanted == "GET":
            run(self, game, query)
        else:
            _only(body, _FIELDS[verb], verb)
            run(self, game, body)

    # --- verbs -------------------------------------------------------------------------

    def _action(self, game: GameSession, body: dict[str, Any]) -> None:
        action = body.get("action")
        if not isinstance(action, str):
            raise SessionError('give the decision as {"action": "E5"} (notation)')
        if len(action) > _MAX_ACTION:
            raise SessionError(f"illegal action {clip(action)}: not a decision in notation")
        game.play(action, _ply(body))
        self.send_json(200, game.view())

    def _undo(self, game: GameSession, body: dict[str, Any]) -> None:
        game.undo()
        self.send_json(200, game.view())

    def _players(self, game: GameSession, body: dict[str, Any]) -> None:
        white, black = body.get("white", game.players[0]), body.get("black", game.players[1])
        if not isinstance(white, str) or not isinstance(black, str):
            raise SessionError("white and black must be strings ('human' or an agent spec)")
        game.set_players(white, black)
        self.send_json(200, game.view())

    def _load(self, game: GameSession, body: dict[str, Any]) -> None:
        text = body.get("text")
        if not isinstance(text, str):
            raise SessionError('give the position or record as {"text": "..."}')
        game.load(text)
        self.send_json(200, game.view())

    def _analysis(self, game: GameSession, body: dict[str, Any]) -> None:
        spec = body.get("spec", self.server.config.analyst)
        if not isinstance(spec, str):
            raise SessionError("spec must be a string (an agent spec)")
        ply = _ply(body)
        game.request_analysis(spec, ply)
        self.send_json(202, game.view(ply))

    def _review(self, game: GameSession, body: dict[str, Any]) -> None:
        cancel = body.get("cancel", False)
        if not isinstance(cancel, bool):
            raise SessionError(f"cancel must be true or false, got {clip(cancel)}")
        if cancel:
            game.cancel_review()
        else:
            spec = body.get("spec", self.server.config.analyst)
            if not isinstance(spec, str):
                raise SessionError("spec must be a string (an agent spec)")
            game.request_review(spec)
        self.send_json(202, game.view())

    def _record(self, game: GameSession, query: dict[str, list[str]]) -> None:
        fmt = (query.get("format") or ["yinsh"])[-1]
        text = game.record_text(fmt)
        name = f"yinsh-{game.id}.{fmt}"
        self.send_body(
            200,
            text.encode("utf-8", "replace"),
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
    "review": ("POST", _Handler._review),
    "record": ("GET", _Handler._record),
}
_FIELDS = {
    "action": {"action", "ply"},
    "undo": set(),
    "players": {"white", "black"},
    "load": {"text"},
    "analysis": {"spec", "ply"},
    "review": {"spec", "cancel"},
}


def _need(method: str, wanted: str, path: str) -> None:
    """Refuse ``method`` unless ``wanted`` (``"GET or DELETE"``) names it: 405 with ``Allow``."""
    allowed = wanted.split(" or ")
    if method not in allowed:
        methods = ", ".join([*allowed, "HEAD"] if "GET" in allowed else allowed)
        raise SessionError(
            f"method {clip(method)} not allowed on {clip(path)} (use {wanted})",
            405,
            {"Allow": methods},
        )


def _only(body: dict[str, Any], allowed: set[str], verb: str) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise SessionError(
            f"unknown field(s) {clip(unknown)} for {verb} (allowed: {sorted(allowed)})"
        )


def _ply(body: dict[str, Any]) -> int | None:
    ply = body.get("ply")
    if ply is not None and (isinstance(ply, bool) or not isinstance(ply, int)):
        raise SessionError(f"ply must be an integer, got {clip(ply)}")
    return ply


def _int_param(query: dict[str, list[str]], key: str) -> int | None:
    values = query.get(key)
    if not values:
        return None
    if not _PLY.fullmatch(values[-1]):
        raise SessionError(f"{key} must be a whole number, got {clip(values[-1])}")
    return int(values[-1])


class YinshServer(BoundedHTTPServer):
    """The app's server: a store of games, the policy on agents, and the handler above."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        config: AppConfig | None = None,
        verbose: bool = False,
    ) -> None:
        self.config = config or AppConfig()
        self.policy = AgentPolicy(self.config.trusted())
        self.store = SessionStore(
            think_timeout=self.config.think_timeout,
            max_games=self.config.max_games,
            policy=self.policy,
            workers=self.config.workers,
        )
        self.verbose = verbose
        try:
            super().__init__((host, port), _Handler)
        except OSError:
            self.store.close()
            raise
        self._thread: threading.Thread | None = None

    def configure(self, config: AppConfig) -> None:
        """New defaults and allowed specs (games already open keep their players)."""
        self.policy.reset(config.trusted())
        self.config = config

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else str(host)
        return f"http://{shown}:{port}/"

    def allowed_host(self, host: str) -> bool:
        """Loopback names always, the address bound, an IP address when bound to all,
        and the names of ``config.allow_hosts``; no other name, wherever it is bound
        (a name is what DNS rebinding sends).

        ``host`` is ``name``, ``name:port`` or ``[v6]:port``; anything else
        (``127.0.0.1:1@evil.com``, a port that is no number) is refused.
        """
        match = _HOST.fullmatch(host)
        if match is None:
            return False
        name = match.group(1) or match.group(2)
        bound = str(self.server_address[0])
        if name in ("127.0.0.1", "localhost", "::1", bound) or name in self.config.allow_hosts:
            return True
        return bound in ("0.0.0.0", "::", "") and _is_address(name)

    def info(self) -> dict[str, Any]:
        return {
            "agents": [HUMAN, *self.policy.offered()],
            "defaults": {
                "white": self.config.white,
                "black": self.config.black,
                "analyst": self.config.analyst,
            },
            "limits": {
                "sims": MAX_SIMS,
                "seconds": MAX_SECONDS,
                "games": self.store.max_games,
                "think_timeout": self.store.think_timeout,
            },
            "geometry": board_geometry(),
        }

    def start(self) -> YinshServer:
        """Serve on a background thread (notebooks, tests); returns self."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True, name="yinsh-web")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end the connections, cancel every game's work."""
        self.shutdown()
        self.server_close()
        self.store.close()
        if self._thread is not None:
            self._thread.join(timeout=10)


def _is_address(name: str) -> bool:
    """Whether ``name`` is an IP address (no DNS name: nothing to rebind)."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


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
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.store.close()
    return 0
