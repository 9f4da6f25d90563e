"""Play and analyse YINSH in the browser: ``yinsh-play --web``.

* :mod:`agents.web.server`: the HTTP server and its JSON API (standard library).
* :mod:`agents.web.session`: one game (history, players, agents thinking on threads).
* :mod:`agents.web.store`: the games by id.
* :mod:`agents.web.analysis`: an agent's view of a position (value, priors, visits).
* :mod:`agents.web.geometry`: the board layout, from :mod:`yinsh_env.render`.
* :mod:`agents.web.browser`: headless Chromium for the tests and screenshots.
* :mod:`agents.web.notebook`: the app inside a notebook.
* ``static/``: the page (HTML, JavaScript, CSS; no external assets).
"""

from __future__ import annotations

from .analysis import Analysis, MoveInfo, analyse
from .server import AppConfig, YinshServer, serve
from .session import HUMAN, GameSession, SessionError
from .store import SessionStore

__all__ = [
    "HUMAN",
    "Analysis",
    "AppConfig",
    "GameSession",
    "MoveInfo",
    "SessionError",
    "SessionStore",
    "YinshServer",
    "analyse",
    "serve",
]
