"""Who is asking: only the page itself may change state, and each client has its own games.

A page on another site can send requests to the app (a form, a no-cors
``fetch``) even though it cannot read the answers.  So every request that
may change something (:data:`STATE_CHANGING`: the app changes state only on
``POST`` and ``DELETE``, and answers every other method but ``GET`` and
``HEAD`` with 405) is refused unless it

* says ``Content-Type: application/json`` (a cross-site page can send that
  type only after a CORS preflight, which the app never answers with a CORS
  header), body or not;
* carries no ``Origin`` but the server's own (``http://`` + the ``Host``
  the request was sent to), and no ``Sec-Fetch-Site`` other than
  ``same-origin`` or ``none``.

Each client is known by a random token: the page makes one, keeps it in
the browser's local storage and sends it in the :data:`HEADER` header
(custom headers cannot cross sites without a CORS preflight, and unlike a
cookie it also works in a notebook's frame on another site); a request
without that header is known by the ``yinsh_client`` cookie (``HttpOnly``,
``SameSite=Strict``: scripts that keep cookies), set on the first answer to
a request that came with neither.  A game belongs to the client that made
it: others get 403 if they try to change it, and
:class:`~agents.web.store.SessionStore` never evicts a game of another client
while it is in use.
"""

from __future__ import annotations

import re
import secrets
from email.message import Message

from agents.web.http_errors import SessionError, clip

#: The cookie that names a client.
COOKIE = "yinsh_client"
#: The header that names a client (the page's requests).
HEADER = "X-Yinsh-Client"
#: Methods checked here; the server refuses every method but these and GET/HEAD (405).
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_TOKEN = re.compile(r"[0-9a-f]{32}")
#: What ``Sec-Fetch-Site`` may say of a request that changes state.
_SAME_SITE = ("same-origin", "none")


def check_same_origin(method: str, headers: Message, host: str) -> None:
    """Raise :class:`SessionError` unless a state-changing request comes from the page itself.

    ``host`` is the request's ``Host`` header (already checked), lower case.
    """
    if method not in STATE_CHANGING:
        return
    sites = headers.get_all("Sec-Fetch-Site") or []
    if any(site.strip().lower() not in _SAME_SITE for site in sites):
        raise SessionError(f"cross-site {method} refused (Sec-Fetch-Site: {clip(sites[0])})", 403)
    origins = headers.get_all("Origin") or []
    own = f"http://{host}"
    if len(origins) > 1 or any(origin.strip().lower() != own for origin in origins):
        shown = clip(origins[0]) if len(origins) == 1 else f"{len(origins)} Origin headers"
        raise SessionError(f"{method} from another origin refused (Origin: {shown})", 403)
    kinds = headers.get_all("Content-Type") or []
    kind = kinds[0].split(";")[0].strip().lower() if len(kinds) == 1 else ""
    if kind != "application/json":
        got = clip(kinds[0]) if len(kinds) == 1 else f"{len(kinds)} Content-Type headers"
        got = got if kinds else "none"
        raise SessionError(f"a {method} must say Content-Type: application/json (got {got})", 415)


def client_token(headers: Message) -> str | None:
    """The client's token: its :data:`HEADER`, else its cookie, if well-formed.

    Raises :class:`SessionError` for a malformed or repeated :data:`HEADER`.
    """
    given = headers.get_all(HEADER) or []
    if given:
        if len(given) > 1 or not _TOKEN.fullmatch(given[0].strip()):
            raise SessionError(f"{HEADER} must be one token of 32 hex digits", 400)
        return given[0].strip()
    for line in headers.get_all("Cookie") or []:
        for pair in line.split(";"):
            name, _, value = pair.strip().partition("=")
            if name == COOKIE and _TOKEN.fullmatch(value.strip()):
                return value.strip()
    return None


def new_token() -> str:
    """A fresh client token (128 random bits)."""
    return secrets.token_hex(16)


def cookie_header(token: str) -> str:
    """The ``Set-Cookie`` value that gives a client ``token``."""
    return f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
