"""Play and analyse YINSH in the browser: ``yinsh-play --web``.

Every decision is made by pointing: click a point to place a ring; a ring,
then one of its highlighted destinations; a marker of the row to take (where
rows cross or a run is six or longer, the page asks for a second marker or
offers the rows as buttons); a ring to remove.  A Pass button appears only
when passing is the one legal move.  The page also has undo (back to your
previous decision), new game (``human`` or any agent spec on each side), flip,
the move list, the position text, loading a position or a ``.yinsh``/``.sgf``
record, downloads, and analysis: a hint from any spec, and the top candidates
with value, priors, visits and Q drawn on the board.  Agents think on their
own threads, never in a request; one that crashes or runs past its time limit
is reported with *Retry* and *Play that side myself*.

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
