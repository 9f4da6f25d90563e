"""The web app's games by id: creating them from the page's options, finding, closing.

The store holds what the server's games share: the :class:`AgentPolicy`
that admits clients' specs and the :class:`Workers` pool the agents think on.
Each game belongs to the client that made it (its ``owner``, a token from
:mod:`agents.web.clients`); only that client may change or close it, or find
it in its list; any client that knows its id (64 random bits) may look at it.
It keeps at most ``max_games`` games.  A new one beyond that closes the
least recently used game of the same client, else the least recently used
game nobody has asked about for ``idle_seconds`` (a page left open asks every
few seconds); else it is refused (503): no client can evict another's game
in use (a closed game's jobs are cancelled, its agents released).
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from agents.params import MAX_SEED
from agents.web.http_errors import SessionError, clip
from agents.web.jobs import THINK_WORKERS, Workers
from agents.web.policy import AgentPolicy
from agents.web.position import parse_game_text
from agents.web.session import HUMAN, GameSession
from yinsh_env import State

#: Games one server keeps at most.
MAX_GAMES = 64
#: Seconds without a request after which a game may make room for another client's.
IDLE_SECONDS = 600.0


@dataclass
class _Entry:
    game: GameSession
    owner: str | None
    used: float = field(default_factory=time.monotonic)


class SessionStore:
    """The games being played, by id, each with its owner (a server holds one store).

    At most ``max_games`` are kept; see the module's docstring for which game
    makes room.  ``owner=None`` (Python callers) is a client like any other.
    """

    def __init__(
        self,
        think_timeout: float = 120.0,
        max_games: int = MAX_GAMES,
        policy: AgentPolicy | None = None,
        workers: int = THINK_WORKERS,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        if not 0 < think_timeout < float("inf"):
            raise ValueError(f"think_timeout must be a positive number of seconds: {think_timeout}")
        if max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {max_games}")
        self.think_timeout = think_timeout
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.policy = policy or AgentPolicy()
        self.workers = Workers(workers)
        self._games: dict[str, _Entry] = {}  # the least recently used first
        self._lock = threading.Lock()

    def create(self, options: dict[str, Any], owner: str | None = None) -> GameSession:
        """A new game of ``owner`` from the page's options (``white``, ``black``, ``text``...).

        Raises :class:`SessionError` (503) when the store is full of other
        clients' games in use.
        """
        allowed = {"white", "black", "text", "rings_to_win", "seed", "delay"}
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise SessionError(f"unknown option(s) {clip(unknown)} (allowed: {sorted(allowed)})")
        white = _string(options, "white", HUMAN)
        black = _string(options, "black", HUMAN)
        rings = options.get("rings_to_win", 3)
        if isinstance(rings, bool) or not isinstance(rings, int) or not 1 <= rings <= 5:
            raise SessionError(f"rings_to_win must be an integer in 1..5, got {clip(rings)}")
        seed = options.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise SessionError(f"seed must be an integer in 0..2**63-1, got {clip(seed)}")
        delay = options.get("delay")
        if delay is not None and (
            isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 10
        ):
            raise SessionError(f"delay must be a number of seconds in 0..10, got {clip(delay)}")
        start: State | None = State(rings_to_win=rings)
        actions: list[int] = []
        text = _string(options, "text", "")
        if text:
            start, actions, _ = parse_game_text(text)
        with self._lock:
            if not self._room_for(owner)[0]:  # before any agent is built
                raise self._full()
            game_id = secrets.token_hex(8)  # not to be guessed: ids are read capabilities
            while game_id in self._games:
                game_id = secrets.token_hex(8)
        game = GameSession(
            game_id,
            white,
            black,
            policy=self.policy,
            workers=self.workers,
            start=start,
            actions=actions,
            think_timeout=self.think_timeout,
            delay=None if delay is None else float(delay),
            seed=seed,
        )
        closing = None
        with self._lock:
            room, victim = self._room_for(owner)
            if room:
                if victim is not None:
                    closing = self._games.pop(victim).game
                self._games[game_id] = _Entry(game, owner)
        if not room:
            game.close()
            raise self._full()
        if closing is not None:
            closing.close()
        return game

    def _room_for(self, owner: str | None) -> tuple[bool, str | None]:
        """Whether one more game of ``owner`` fits (under the lock), and the id that must go."""
        if len(self._games) < self.max_games:
            return True, None
        own = [key for key, entry in self._games.items() if entry.owner == owner]
        idle_since = time.monotonic() - self.idle_seconds
        idle = [key for key, entry in self._games.items() if entry.used <= idle_since]
        victims = own or idle
        return (True, victims[0]) if victims else (False, None)

    def _full(self) -> SessionError:
        return SessionError(
            f"the server holds {self.max_games} games, all in use by other clients: "
            "try again later",
            503,
            {"Retry-After": "60"},
        )

    def get(self, game_id: str, owner: str | None = None, read_only: bool = False) -> GameSession:
        """The game ``game_id`` of ``owner`` (404 if there is none, 403 if another's).

        ``read_only``: any client may look at a game whose id it knows (the
        page's download links carry no token); only its owner's requests
        count as using it.
        """
        with self._lock:
            entry = self._games.get(game_id)
            if entry is not None and entry.owner == owner:
                self._games[game_id] = self._games.pop(game_id)  # most recently used last
                entry.used = time.monotonic()
        if entry is None:
            raise SessionError(f"no game with id {clip(game_id)}", 404)
        if entry.owner != owner and not read_only:
            raise SessionError(f"game {clip(game_id)} belongs to another client", 403)
        return entry.game

    def delete(self, game_id: str, owner: str | None = None) -> None:
        """Close the game ``game_id`` of ``owner`` (404 if there is none, 403 if another's)."""
        self.get(game_id, owner)
        with self._lock:
            entry = self._games.get(game_id)
            if entry is None or entry.owner != owner:
                raise SessionError(f"no game with id {clip(game_id)}", 404)
            del self._games[game_id]
        entry.game.close()

    def ids(self, owner: str | None = None) -> list[str]:
        """The ids of ``owner``'s games, the least recently used first."""
        with self._lock:
            return [key for key, entry in self._games.items() if entry.owner == owner]

    def __len__(self) -> int:
        with self._lock:
            return len(self._games)

    def close(self) -> None:
        """Close every game and stop the pool (jobs not started are dropped)."""
        with self._lock:
            games = [entry.game for entry in self._games.values()]
            self._games.clear()
        for game in games:
            game.close()
        self.workers.close()


def _string(options: dict[str, Any], key: str, default: str) -> str:
    value = options.get(key, default)
    if not isinstance(value, str):
        raise SessionError(f"{key} must be a string, got {clip(value)}")
    return value
