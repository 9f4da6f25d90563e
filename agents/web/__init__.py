"""Play and analyse YINSH in the browser: ``yinsh-play --web``.

Every decision is made by pointing: click a point to place a ring; a ring,
then one of its highlighted destinations; a marker of the row to take (where
rows cross or a run is six or longer, the page asks for a second marker or
offers the rows as buttons); a ring to remove.  A Pass button appears only
when passing is the one legal move.  The page also has undo (back to your
previous decision), new game (``human`` or an offered agent on each side),
flip, the move list, the position text, loading a position or a
``.yinsh``/``.sgf`` record, downloads, and analysis: a hint from an offered
agent, and the top candidates with value, priors, visits and Q drawn on the
board; and a review of the whole game (a value graph under the moves, marked
moves, :mod:`agents.review`).  Agents think on a bounded pool of threads, never in a request; one
that crashes or runs past its time limit is reported with *Retry* and *Play
that side myself*.

What a web client may and may not ask for (the threat model) is written in
:mod:`agents.web.server`; in short: only whitelisted agents with bounded
budgets, or the specs the server was started with; never a program, a file
path or a log; every search it starts has a ceiling and is cancelled when
stale; every answer is JSON with a short error.

* :mod:`agents.web.server`: the HTTP server, its JSON API and the threat model.
* :mod:`agents.web.httpd`: bounded HTTP plumbing (thread pool, timeouts, body and JSON limits).
* :mod:`agents.web.policy`: which agent specs a client may have built (the whitelist).
* :mod:`agents.web.jobs`: agents' work on a bounded pool, each job cancellable.
* :mod:`agents.web.session`: one game (history, players, its agents' jobs).
* :mod:`agents.web.store`: the games by id (at most ``MAX_GAMES``).
* :mod:`agents.web.clients`: who is asking: only the page may change state; each
  client has its own games.
* :mod:`agents.web.position`: the position as the page draws it; pasted text read.
* :mod:`agents.web.http_errors`: refusals with their status, quoting bounded slices.
* :mod:`agents.web.reviews`: a game review as one bounded, cancellable job.
* :mod:`agents.web.position_analysis`: an agent's view of a position (value, priors, visits).
* :mod:`agents.web.board_geometry`: the board layout, from :mod:`yinsh_env.render`.
* :mod:`agents.web.browser`: headless Chromium for the tests and screenshots.
* :mod:`agents.web.notebook_app`: the app inside a notebook.
* ``static/``: the page (HTML, JavaScript, CSS; no external assets).
"""

from __future__ import annotations

from agents.web.http_errors import SessionError
from agents.web.policy import AgentPolicy
from agents.web.position_analysis import Analysis, MoveInfo, analyse
from agents.web.server import AppConfig, YinshServer, serve
from agents.web.session import HUMAN, GameSession
from agents.web.store import SessionStore

__all__ = [
    "HUMAN",
    "AgentPolicy",
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
