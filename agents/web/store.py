"""The web app's games by id: creating them from the page's options, finding, closing.

The store holds what the server's games share: the :class:`AgentPolicy`
that admits clients' specs and the :class:`Workers` pool the agents think on.
It keeps at most ``max_games`` games; a new one beyond that closes the least
recently used (its jobs are cancelled, its agents released).
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

from yinsh_env import State

from ..protocol import MAX_SEED
from .errors import SessionError, clip
from .jobs import THINK_WORKERS, Workers
from .policy import AgentPolicy
from .position import parse_game_text
from .session import HUMAN, GameSession

#: Games one server keeps at most.
MAX_GAMES = 64


class SessionStore:
    """The games being played, by id (a server holds one store).

    At most ``max_games`` are kept: a new game beyond that closes the game
    least recently asked about (a page left open keeps its game alive).
    """

    def __init__(
        self,
        think_timeout: float = 120.0,
        max_games: int = MAX_GAMES,
        policy: AgentPolicy | None = None,
        workers: int = THINK_WORKERS,
    ) -> None:
        if not 0 < think_timeout < float("inf"):
            raise ValueError(f"think_timeout must be a positive number of seconds: {think_timeout}")
        if max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {max_games}")
        self.think_timeout = think_timeout
        self.max_games = max_games
        self.policy = policy or AgentPolicy()
        self.workers = Workers(workers)
        self._games: dict[str, GameSession] = {}
        self._lock = threading.Lock()

    def create(self, options: dict[str, Any]) -> GameSession:
        """A new game from the page's options (``white``, ``black``, ``text``, ``rings_to_win``)."""
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
            game_id = secrets.token_hex(4)
            while game_id in self._games:
                game_id = secrets.token_hex(4)
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
        with self._lock:
            self._games[game_id] = game
            evicted = []
            while len(self._games) > self.max_games:  # the least recently used go first
                evicted.append(self._games.pop(next(iter(self._games))))
        for old in evicted:
            old.close()
        return game

    def get(self, game_id: str) -> GameSession:
        with self._lock:
            game = self._games.pop(game_id, None)
            if game is not None:
                self._games[game_id] = game  # most recently used last
        if game is None:
            raise SessionError(f"no game with id {clip(game_id)}", 404)
        return game

    def delete(self, game_id: str) -> None:
        with self._lock:
            game = self._games.pop(game_id, None)
        if game is None:
            raise SessionError(f"no game with id {clip(game_id)}", 404)
        game.close()

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._games)

    def close(self) -> None:
        """Close every game and stop the pool (jobs not started are dropped)."""
        with self._lock:
            games = list(self._games.values())
            self._games.clear()
        for game in games:
            game.close()
        self.workers.close()


def _string(options: dict[str, Any], key: str, default: str) -> str:
    value = options.get(key, default)
    if not isinstance(value, str):
        raise SessionError(f"{key} must be a string, got {clip(value)}")
    return value
