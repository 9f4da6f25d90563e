"""The web app's HTTP under abuse: every answer JSON and 4xx, never 500, never a hang.

Raw bytes on a socket where a library would fix the request up: lying or
missing lengths, chunked and smuggling-shaped bodies, stalled and dribbled
requests, oversized lines and headers, odd methods and request targets,
hostile JSON (deep, huge numbers, not UTF-8).  The issue's cases are here
as regression tests.  The server under test has short timeouts (its
production values are in :mod:`agents.web.httpd`) so that stalls resolve
quickly; the tests still only poll with generous bounds.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from web_client import Client, read_all, responses, serving

from agents.web import AppConfig, YinshServer
from agents.web.http_errors import ECHO_LIMIT, MESSAGE_LIMIT
from agents.web.httpd import MAX_BODY, MAX_DEPTH

#: Bytes of a refusal at most (a short message, headers included).
SHORT_REPLY = 1200


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    with serving(AppConfig(think_timeout=30), socket_timeout=1, request_deadline=3) as srv:
        yield srv


@pytest.fixture
def client(server: YinshServer) -> Client:
    return Client(server)


@pytest.fixture
def game(client: Client) -> Iterator[dict[str, Any]]:
    game = client.new(white="human", black="human")
    client.act(game, "E5")
    yield game
    client.request("DELETE", f"/api/games/{game['id']}")


def request_bytes(
    method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> bytes:
    sent = {"Host": "127.0.0.1", "Connection": "close", **(headers or {})}
    if body and "Content-Length" not in sent and "Transfer-Encoding" not in sent:
        sent["Content-Length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in sent.items())
    return head.encode() + b"\r\n" + body


def json_answers(data: bytes) -> list[tuple[int, Any]]:
    """Every response in ``data`` parsed, each checked to be JSON and short if a refusal."""
    found = []
    for status, headers, body in responses(data):
        assert headers["content-type"] == "application/json", (status, headers, body[:200])
        payload = json.loads(body) if body else None
        if status >= 400:
            assert len(body) < SHORT_REPLY and set(payload) == {"error"}, body[:300]
        found.append((status, payload))
    return found


def alive(client: Client) -> None:
    assert client.ok("GET", "/api/info")["limits"]["sims"] > 0


# --- the cases ----------------------------------------------------------------


def test_a_900_kb_action_gets_a_short_400(client: Client, game: dict[str, Any]) -> None:
    status, kind, text = client.exchange(
        "POST", f"/api/games/{game['id']}/action", {"action": "x" * 900_000}
    )
    assert status == 400 and kind == "application/json" and len(text) < SHORT_REPLY
    assert "x" * (ECHO_LIMIT + 1) not in text


@pytest.mark.parametrize(
    "raw, words",
    [
        (b"[" * 100_000, "nested"),
        (b'{"a":' * 100_000, "nested"),
        (b'{"a": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}", "nested"),
        (b'{"ply": ' + b"1" * 5000 + b"}", "digits"),
        (b'{"ply": -' + b"1" * 5000 + b"}", "digits"),
        (b'{"ply": 1e999}', "range"),
        (b'{"ply": NaN}', "NaN"),
        (b'{"ply": -Infinity}', "Infinity"),
        (b'{"action": "\xff\xfe"}', "UTF-8"),
        (b"\xef\xbb\xbf{}", "malformed"),
        (b'{"action": "E5"', "malformed"),
        (b'"E5"', "object"),
        (b"[]", "object"),
    ],
)
def test_hostile_json_gets_a_400(
    client: Client, game: dict[str, Any], raw: bytes, words: str
) -> None:
    for path in (f"/api/games/{game['id']}/action", "/api/games", f"/api/games/{game['id']}"):
        method = "DELETE" if path.endswith(game["id"]) else "POST"
        answers = json_answers(
            client.raw(request_bytes(method, path, raw, {"Content-Type": "application/json"}))
        )
        assert [status for status, _ in answers] == [400], answers
        assert words.lower() in answers[0][1]["error"].lower(), answers
    assert client.view(game)["live_ply"] == 1


def test_a_seed_of_minus_one_is_a_bad_seed(client: Client) -> None:
    for seed in (-1, 2**64, 1.5, True, "1"):
        status, data = client.request("POST", "/api/games", {"black": "random", "seed": seed})
        assert status == 400 and data["error"].startswith("seed "), data
        assert "spec" not in data["error"]


@pytest.mark.slow
def test_a_stalled_body_gets_a_408_and_frees_its_thread(client: Client) -> None:
    head = request_bytes(
        "POST", "/api/games", headers={"Content-Length": "100", "Content-Type": "application/json"}
    )
    head += b'{"white": '
    with socket.create_connection((client.host, client.port), timeout=60) as sock:
        sock.sendall(head)  # ... and nothing more
        answers = json_answers(read_all(sock))
    assert [status for status, _ in answers] == [408], answers
    alive(client)


@pytest.mark.slow
def test_a_dribbled_request_is_cut_off(client: Client) -> None:
    """One byte at a time, each within the read timeout: the request deadline ends it."""
    request = request_bytes("GET", "/api/info", headers={"X-Pad": "a" * 1000})
    closed = False
    with socket.create_connection((client.host, client.port), timeout=60) as sock:
        for i in range(len(request)):
            try:
                sock.sendall(request[i : i + 1])
            except OSError:
                closed = True
                break
            time.sleep(0.1)
            sock.setblocking(False)
            try:
                closed = sock.recv(1) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed = True
            sock.setblocking(True)
            if closed:
                break
    assert closed, "the server kept reading a request dribbled byte by byte"
    alive(client)


# --- lengths, encodings, smuggling shapes ----------------------------------------------


@pytest.mark.parametrize(
    "headers, body, status",
    [
        ({"Content-Length": "-1"}, b"{}", 400),
        ({"Content-Length": "abc"}, b"{}", 400),
        ({"Content-Length": "+2"}, b"{}", 400),
        ({"Content-Length": "0x2"}, b"{}", 400),
        ({"Content-Length": "\u0662"}, b"{}", 400),
        ({"Content-Length": "9" * 40}, b"{}", 400),
        ({"Content-Length": str(MAX_BODY + 1)}, b"{}", 413),
        ({"Transfer-Encoding": "chunked"}, b"2\r\n{}\r\n0\r\n\r\n", 411),
        ({"Transfer-Encoding": "chunked", "Content-Length": "2"}, b"{}", 400),
        ({"Transfer-Encoding": "identity"}, b"{}", 411),
        ({"Content-Type": "text/plain"}, b"{}", 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, b"white=x", 415),
    ],
)
def test_bad_lengths_and_encodings_are_refused(
    client: Client, headers: dict[str, str], body: bytes, status: int
) -> None:
    sent = {"Content-Type": "application/json", **headers}
    answers = json_answers(client.raw(request_bytes("POST", "/api/games", body, sent)))
    assert [got for got, _ in answers] == [status], answers
    alive(client)


def test_two_content_lengths_are_refused(client: Client) -> None:
    raw = (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"
    )
    assert [status for status, _ in json_answers(client.raw(raw))] == [400]


def test_a_short_length_never_turns_the_rest_into_a_request(client: Client) -> None:
    """The refused request closes the connection: its leftover bytes are never run."""
    before = set(client.ok("GET", "/api/games")["games"])
    smuggled = request_bytes("POST", "/api/games", b"{}", {"Content-Type": "application/json"})
    body = b'{"white": "human"}' + smuggled
    raw = request_bytes(
        "POST", "/api/games", body, {"Content-Type": "application/json", "Content-Length": "5"}
    ).replace(b"Connection: close\r\n", b"")
    answers = json_answers(client.raw(raw))
    assert [status for status, _ in answers] == [400], answers
    assert set(client.ok("GET", "/api/games")["games"]) == before


def test_a_get_with_a_body_leaves_nothing_behind(client: Client) -> None:
    """A body on GET is read and ignored; the next request on the connection is answered."""
    first = request_bytes("GET", "/api/info", b"GET /api/nothing HTTP/1.1\r\n\r\n")
    first = first.replace(b"Connection: close\r\n", b"")
    second = request_bytes("GET", "/api/games")
    answers = json_answers(client.raw(first + second))
    assert [status for status, _ in answers] == [200, 200], answers
    assert "games" in answers[1][1]


def test_keep_alive_serves_several_requests(client: Client) -> None:
    one = request_bytes("GET", "/api/info").replace(b"Connection: close\r\n", b"")
    answers = json_answers(client.raw(one * 3 + request_bytes("GET", "/api/games")))
    assert [status for status, _ in answers] == [200, 200, 200, 200]


# --- request lines, headers, methods, targets ---------------------------------------------


@pytest.mark.parametrize(
    "raw, status",
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /api/info HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", 400),
        (b"GET /api/info HTTP/1.x\r\nHost: 127.0.0.1\r\n\r\n", 400),
        (b"GET " + b"/" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET /api/info HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),
        (b"GET /api/info HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n", 431),
        (b"get /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
        (b"BREW /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
        (b"TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
        (b"GET http://127.0.0.1/api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
        (b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
        (b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
        (b"GET /api/info HTTP/1.1\r\n\r\n", 403),
        (b"GET /api/info HTTP/1.1\r\nHost: evil.example\r\n\r\n", 403),
        (b"GET /api/info HTTP/1.1\r\nHost: \xe9vil\r\n\r\n", 403),
        (b"GET /api/info?" + b"a=1&" * 100 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    ],
)
def test_malformed_requests_get_json(client: Client, raw: bytes, status: int) -> None:
    answers = json_answers(client.raw(raw))
    assert [got for got, _ in answers] == [status], answers
    message = answers[0][1]["error"]
    assert len(message) <= MESSAGE_LIMIT and "a" * (ECHO_LIMIT + 1) not in message
    alive(client)


@pytest.mark.parametrize(
    "method", ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]
)
def test_every_method_on_every_route_answers_json(
    client: Client, game: dict[str, Any], method: str
) -> None:
    gid = game["id"]
    paths = [
        "/api/info",
        "/api/games",
        f"/api/games/{gid}",
        *(f"/api/games/{gid}/{verb}" for verb in ("action", "undo", "players", "load")),
        f"/api/games/{gid}/analysis",
        f"/api/games/{gid}/record",
        "/api/games/ffffffff",
        "/api/nothing",
        "/api/",
    ]
    for path in paths:
        if method == "DELETE" and path == f"/api/games/{gid}":
            continue
        status, kind, text = client.exchange(method, path)
        if path.endswith("/record") and status == 200:  # a download: the record's text
            assert kind.startswith("text/plain") and method in ("GET", "HEAD")
            continue
        assert status < 500 and kind == "application/json", (method, path, status, text)
        if method == "HEAD":
            assert text == ""
        else:
            json.loads(text)


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc/passwd",
        "/static/../server.py",
        "//etc/passwd",
        "/./app.js",
        "/APP.JS",
        "/app.js%00.html",
        "/app.js/",
        "/index.html/../../server.py",
        "/%5c..%5cserver.py",
        "/server.py",
        "/static/app.js",
        "/api/games/..%2f..%2fetc",
        "/api/games/" + "f" * 40,
        "/api/games/FFFFFFFF",
        "/api/games/ffffffff/../../info",
        "/\u00e9",
    ],
)
def test_only_the_pages_own_files_are_served(client: Client, path: str) -> None:
    raw = request_bytes("GET", path)
    answers = json_answers(client.raw(raw))
    assert [status for status, _ in answers] == [404], answers


def test_the_page_is_served_with_a_query_string(client: Client) -> None:
    status, kind, text = client.exchange("GET", "/?x=../../etc/passwd")
    assert status == 200 and kind.startswith("text/html") and "app.js" in text
    status, kind, _ = client.exchange("HEAD", "/app.js")
    assert status == 200 and kind.startswith("text/javascript")


def test_unicode_everywhere_is_text(client: Client, game: dict[str, Any]) -> None:
    for body in (
        {"action": "\ud800"},
        {"action": "\u0000E5"},
        {"action": "\u0665\u0665"},
        {"action": "E\u2165"},
    ):
        status, data = client.request("POST", f"/api/games/{game['id']}/action", body)
        assert status == 400 and "illegal action" in data["error"], data
    status, data = client.request("POST", "/api/games", {"white": "mcts:sims=\ud800"})
    assert status == 400, data
    status, data = client.request("POST", f"/api/games/{game['id']}/load", {"text": "\ud800"})
    assert status == 400, data
    status, data = client.request("GET", f"/api/games/{game['id']}/record?format=%ff%fe")
    assert status == 400, data
    assert client.view(game)["live_ply"] == 1


def test_huge_text_fields_are_refused_briefly(client: Client, game: dict[str, Any]) -> None:
    big = "x" * 900_000
    for path, body in (
        ("/api/games", {"white": big}),
        ("/api/games", {"text": big}),
        ("/api/games", {"text": "(;" + big}),
        ("/api/games", {"text": "{" + big}),
        ("/api/games", {"text": "[" + big + "\n"}),
        ("/api/games", {big: 1}),
        (f"/api/games/{game['id']}/load", {"text": big}),
        (f"/api/games/{game['id']}/analysis", {"spec": big}),
        (f"/api/games/{game['id']}/players", {"white": big}),
    ):
        status, kind, text = client.exchange("POST", path, body)
        assert status == 400 and kind == "application/json", (path, status, text[:300])
        assert len(text) < SHORT_REPLY and "x" * (ECHO_LIMIT + 1) not in text


def test_a_record_nested_deeply_in_the_text_field_is_a_400(client: Client) -> None:
    for text in ("[" * 100_000, '{"a":' * 100_000, '{"moves": [' + "1" * 5000 + "]}"):
        status, data = client.request("POST", "/api/games", {"text": text})
        assert status == 400 and "cannot load" in data["error"], data
