"""Another site cannot change anything, and no client can touch or evict another's games.

The probes of the hardening issue: 64 ``POST /api/games`` with an empty body,
no ``Content-Type`` and ``Origin: https://evil.example`` (what a no-cors
``fetch`` or an empty form sends) evicted a person's game from the 64-game store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from web_client import Client, serving

from agents.play.play_cli import build_parser
from agents.web import AppConfig, SessionStore, YinshServer
from agents.web.clients import COOKIE, HEADER

EVIL = "https://evil.example"


@pytest.fixture
def server() -> Iterator[YinshServer]:
    with serving(AppConfig(black="random")) as running:
        yield running


def _own(server: YinshServer) -> dict[str, str]:
    return {"Origin": f"http://127.0.0.1:{server.server_address[1]}"}


def test_64_cross_site_posts_change_nothing(server: YinshServer) -> None:
    person = Client(server)
    game = person.new(white="human", black="random")
    site = Client(server, cookie=False)
    for _ in range(64):
        sent = {"Origin": EVIL, "Content-Type": None}
        status, _, _ = site.exchange("POST", "/api/games", raw=b"", headers=sent)
        assert status in (403, 415), status
    assert len(server.store) == 1
    assert person.view(game)["id"] == game["id"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": None}, 415),  # a no-cors fetch with no body
        ({"Content-Type": "text/plain"}, 415),  # a no-cors fetch with a text body
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),  # a form
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
        ({"Content-Type": "application/json", "Origin": EVIL}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),  # a sandboxed frame
        ({"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "text/plain", "Origin": EVIL, "Sec-Fetch-Site": "cross-site"}, 403),
    ],
)
def test_a_state_changing_request_not_from_the_page_is_refused(
    server: YinshServer, headers: dict[str, str | None], status: int
) -> None:
    person = Client(server)
    game = person.new(white="human", black="human")
    person.act(game, "E5")
    paths = ["/api/games", f"/api/games/{game['id']}", f"/api/games/{game['id']}/undo"]
    for method in ("POST", "DELETE", "PUT", "PATCH"):
        for path in paths:
            answer, _, text = person.exchange(method, path, raw=b"{}", headers=dict(headers))
            assert answer == status, (method, path, text)
    assert person.view(game)["position"]["text"] == person.view(game, 1)["position"]["text"]
    assert person.view(game)["live_ply"] == 1 and len(server.store) == 1


def test_the_pages_own_requests_are_taken(server: YinshServer) -> None:
    person = Client(server)
    sent = {**_own(server), "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}
    status, _, text = person.exchange("POST", "/api/games", raw=b"{}", headers=sent)
    assert status == 201, text
    game_id = person.ok("GET", "/api/games")["games"][0]
    status, _, text = person.exchange("POST", f"/api/games/{game_id}/undo", headers=sent)
    assert status == 409 or status == 200, text  # nothing to undo, or undone: not refused
    status, _, text = person.exchange("DELETE", f"/api/games/{game_id}", headers=sent)
    assert status == 200, text


def test_a_client_gets_a_strict_cookie_once(server: YinshServer) -> None:
    person = Client(server, cookie=False)
    person.exchange("GET", "/")
    cookie = person.last_headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    person.exchange("GET", "/", headers={"Cookie": cookie.split(";")[0]})
    assert "set-cookie" not in person.last_headers


def _answers(client: Client, game: dict[str, Any], headers: dict[str, str]) -> list[int]:
    path = f"/api/games/{game['id']}"
    return [
        client.exchange("POST", f"{path}/action", {"action": "F6"}, headers=headers)[0],
        client.exchange("POST", f"{path}/undo", headers=headers)[0],
        client.exchange("POST", f"{path}/load", {"text": ""}, headers=headers)[0],
        client.exchange("POST", f"{path}/players", {"white": "random"}, headers=headers)[0],
        client.exchange("DELETE", path, headers=headers)[0],
    ]


@pytest.mark.parametrize("who", ["no cookie", "another cookie", "a forged cookie", "a header"])
def test_another_client_cannot_change_or_close_a_game(server: YinshServer, who: str) -> None:
    person = Client(server)
    game = person.new(white="human", black="human")
    person.act(game, "E5")
    other = Client(server, cookie=who == "another cookie")
    headers = {
        "a forged cookie": {"Cookie": f"{COOKIE}={'0' * 32}"},
        "a header": {HEADER: "ab" * 16},
    }.get(who, {})
    assert _answers(other, game, headers) == [403] * 5
    status, _, text = other.exchange("GET", "/api/games", headers=headers)
    assert (status, text) == (200, '{"games": []}')
    # an id is a read capability: the page's download links carry no token
    assert other.request("GET", f"/api/games/{game['id']}")[0] == 200
    assert other.request("GET", f"/api/games/{game['id']}/record")[0] == 200
    assert person.ok("GET", "/api/games") == {"games": [game["id"]]}
    assert person.view(game)["live_ply"] == 1


def test_the_client_header_names_a_client_as_the_page_sends_it(server: YinshServer) -> None:
    page = Client(server, cookie=False)
    mine = {HEADER: "0123456789abcdef" * 2}
    status, _, text = page.exchange("POST", "/api/games", {"delay": 0}, headers=mine)
    assert status == 201 and "set-cookie" not in page.last_headers, text
    game_id = json.loads(text)["id"]
    status, _, text = page.exchange(
        "POST", f"/api/games/{game_id}/action", {"action": "E5"}, headers=mine
    )
    assert status == 200, text
    status, _, text = page.exchange("GET", "/api/games", headers=mine)
    assert json.loads(text) == {"games": [game_id]}
    for bad in ("0123", "Z" * 32, "0123456789abcdef" * 2 + " x"):
        status, _, text = page.exchange("GET", "/api/games", headers={HEADER: bad})
        assert status == 400 and HEADER in text, text


def test_a_flood_of_new_games_never_evicts_a_game_in_use() -> None:
    with serving(AppConfig(black="random", max_games=4)) as server:
        person = Client(server)
        game = person.new(white="human", black="human")
        statuses = [Client(server).request("POST", "/api/games", {})[0] for _ in range(10)]
        assert statuses == [201] * 3 + [503] * 7, statuses
        assert person.view(game)["id"] == game["id"]
        # the person's own new games take the place of the person's older ones
        second = person.new(white="human", black="human")
        assert person.ok("GET", "/api/games") == {"games": [second["id"]]}
        # and a flooding client's own games make room for its next ones
        flood = Client(server)
        assert [flood.request("POST", "/api/games", {})[0] for _ in range(3)] == [503] * 3


def test_a_full_store_lets_idle_games_go_but_keeps_games_in_use() -> None:
    store = SessionStore(max_games=2, idle_seconds=3600)
    first = store.create({}, owner="a")
    store.create({}, owner="b")
    with pytest.raises(ValueError, match="in use by other clients") as full:
        store.create({}, owner="c")
    assert getattr(full.value, "status", None) == 503
    third = store.create({}, owner="a")  # a's own oldest game makes room
    assert store.ids("a") == [third.id] and first.id not in store.ids("a")
    store.idle_seconds = 0  # every game now counts as idle
    fourth = store.create({}, owner="c")
    assert store.ids("c") == [fourth.id] and len(store) == 2
    store.close()


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/api/games", "GET, POST, HEAD"),
        ("POST", "/api/info", "GET, HEAD"),
        ("POST", "/", "GET, HEAD"),
        ("GET", "/api/games/{id}/action", "POST"),
        ("POST", "/api/games/{id}", "GET, DELETE, HEAD"),
        ("POST", "/api/games/{id}/record", "GET, HEAD"),
        ("BREW", "/api/info", "GET, HEAD"),
    ],
)
def test_a_405_says_what_is_allowed(
    server: YinshServer, method: str, path: str, allow: str
) -> None:
    person = Client(server)
    game = person.new(white="human", black="human")
    status, _, text = person.exchange(method, path.format(id=game["id"]), raw=b"{}")
    assert status == 405, text
    assert person.last_headers["allow"] == allow


@pytest.fixture
def on_every_address() -> Iterator[YinshServer]:
    """A server bound to 0.0.0.0 (``--host 0.0.0.0 --allow-host yinsh.lan``)."""
    server = YinshServer("0.0.0.0", 0, AppConfig(black="random", allow_hosts=("yinsh.lan",)))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("evil.example", 403),  # a page of evil.example, its name pointed at this machine
        ("yinsh.lan.evil.example", 403),
        ("yinsh.lan", 200),  # allowed by name
        ("localhost", 200),
        ("127.0.0.1", 200),
        ("192.168.1.5", 200),  # an address: no DNS, nothing to rebind
        ("[fe80::1]", 200),
    ],
)
def test_bound_to_every_address_only_allowed_names_reach_the_api(
    on_every_address: YinshServer, host: str, status: int
) -> None:
    # Bound to 0.0.0.0 the server took any Host header: DNS rebinding reached it.
    port = on_every_address.server_address[1]
    got, data = Client(on_every_address).request(
        "GET", "/api/info", headers={"Host": f"{host}:{port}"}
    )
    assert got == status, data


def test_allow_host_takes_names_and_refuses_anything_else() -> None:
    parser = build_parser()
    args = parser.parse_args(["--web", "--allow-host", "Yinsh.LAN", "--allow-host", "a-b.c"])
    assert args.allow_host == ["yinsh.lan", "a-b.c"]
    for bad in ("yinsh.lan:8000", "evil.example/x", "-x.lan", ""):
        with pytest.raises(SystemExit) as caught:
            parser.parse_args(["--web", "--allow-host", bad])
        assert caught.value.code == 2
