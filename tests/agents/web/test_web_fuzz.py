"""An HTTP fuzzer over every endpoint of the web app (Hypothesis).

Generated requests (methods, paths made of the API's own pieces and of
junk, query strings, headers, JSON bodies of every shape and raw bytes) go
through real sockets to a running server.  Whatever is sent, the server
answers, never with a 500, always with JSON under ``/api/`` and for every
failure, quoting no more than a bounded slice of what it was sent; and it
stays up.  About 200 requests per property, the file in seconds.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_client import Client, responses, serving

from agents.web import AppConfig, YinshServer
from agents.web.http_errors import ECHO_LIMIT, MESSAGE_LIMIT

FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

METHODS = st.sampled_from(
    ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO", "get"]
)
VERBS = ["action", "undo", "players", "load", "analysis", "record", "", "x"]
JUNK = st.text(alphabet=string.printable + "éü\u2028%/.\\", max_size=20)
SPECS = st.one_of(
    st.sampled_from(
        [
            "human",
            "random",
            "greedy",
            "mcts:sims=20",
            "alphabeta:depth=1",
            "engine:cmd=touch pwned",
            "mcts:sims=100000000",
            "mcts:time=nan",
            "net:path=/etc/passwd",
        ]
    ),
    st.text(max_size=30),
)
ACTIONS = st.one_of(st.sampled_from(["E5", "F6", "E5-E8", "xE5", "pass", "xA2-A6"]), JUNK)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    ACTIONS,
    SPECS,
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JUNK, inner, max_size=3),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    ["white", "black", "text", "rings_to_win", "seed", "delay", "action", "ply", "spec", "x"]
)
BODIES = st.one_of(
    st.dictionaries(FIELDS, VALUES, max_size=4),
    VALUES,
    st.binary(max_size=60),
)


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    with serving(AppConfig(think_timeout=30, max_games=8), socket_timeout=2) as srv:
        yield srv


@pytest.fixture(scope="module")
def game_id(server: YinshServer) -> str:
    """A game for the request fuzzer (it may delete it: then its requests get 404)."""
    game = Client(server).new(white="human", black="random")
    return str(game["id"])


def path_strategy(game_id: str) -> st.SearchStrategy[str]:
    api = st.builds(
        lambda gid, verb, query: f"/api/games/{gid}" + (f"/{verb}" if verb else "") + query,
        st.sampled_from([game_id, "ffffffff", "..%2f", "0" * 40]),
        st.sampled_from(VERBS),
        st.sampled_from(["", "?ply=0", "?ply=-1", "?ply=99999999999", "?format=sgf", "?ply=x&"]),
    )
    fixed = st.sampled_from(
        ["/", "/index.html", "/app.js", "/style.css", "/api/info", "/api/games", "/api/", "/api"]
    )
    junk = JUNK.map(lambda text: "/" + text.replace(" ", "%20").replace("\n", ""))
    return st.one_of(api, fixed, junk, junk.map(lambda p: "/api" + p))


def check(status: int, headers: dict[str, str], body: bytes, path: str) -> None:
    assert status < 500, (status, body[:300])
    kind = headers.get("content-type", "")
    if path.startswith("/api") or status >= 400:
        if path.split("?")[0].endswith("/record") and status == 200:
            assert kind.startswith("text/plain")
            return
        assert kind == "application/json", (status, path, kind, body[:200])
        if body:
            data = json.loads(body)
            if status >= 400:
                assert set(data) == {"error"} and len(data["error"]) <= MESSAGE_LIMIT


def send(client: Client, method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\n".encode()
    sent = {"Host": "127.0.0.1", "Connection": "close", **headers}
    if body and "Content-Length" not in sent:
        sent["Content-Length"] = str(len(body))
    head += "".join(f"{k}: {v}\r\n" for k, v in sent.items()).encode()
    return client.raw(head + b"\r\n" + body)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_any_request_gets_a_json_answer_and_never_a_500(
    server: YinshServer, game_id: str, data: st.DataObject
) -> None:
    client = Client(server)
    method = data.draw(METHODS)
    path = data.draw(path_strategy(game_id))
    payload = data.draw(BODIES)
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = data.draw(
        st.dictionaries(
            st.sampled_from(["Content-Type", "X-Junk", "Accept", "Origin", "Cookie"]),
            st.sampled_from(["application/json", "text/plain", "", "x" * 200, "é"]),
            max_size=3,
        )
    )
    headers.setdefault("Content-Type", "application/json")
    found = responses(send(client, method, path, body, headers))
    assert len(found) == 1, found
    status, got_headers, reply = found[0]
    check(status, got_headers, reply, path)
    text = body.decode("utf-8", "replace")
    for start in range(0, max(0, len(text) - ECHO_LIMIT), 40):
        piece = text[start : start + ECHO_LIMIT + 1]
        assert len(piece) <= ECHO_LIMIT or piece not in reply.decode("utf-8", "replace")


@pytest.mark.slow
@FUZZ
@given(
    name=st.sampled_from(["white", "black"]),
    spec=SPECS,
    options=st.dictionaries(FIELDS, LEAVES, max_size=3),
)
def test_new_games_from_any_options(
    server: YinshServer, name: str, spec: str, options: dict[str, Any]
) -> None:
    client = Client(server)
    status, data = client.request("POST", "/api/games", {**options, name: spec})
    assert status in (201, 400, 403), (status, data)
    if status == 201:
        client.request("DELETE", f"/api/games/{data['id']}")
    else:
        assert set(data) == {"error"}


@pytest.mark.slow
@FUZZ
@given(verb=st.sampled_from(VERBS[:5]), body=st.dictionaries(FIELDS, LEAVES, max_size=3))
def test_any_verb_body_on_a_live_game(server: YinshServer, verb: str, body: dict[str, Any]) -> None:
    client = Client(server)
    game = client.new(white="human", black="random")
    before = client.view(game)
    status, data = client.request("POST", f"/api/games/{game['id']}/{verb}", body)
    assert status in (200, 202, 400, 403, 409), (status, data)
    view = client.view(game)  # the game is still there, and a refusal changed nothing
    if status >= 400:
        assert set(data) == {"error"} and view["position"] == before["position"]
    client.ok("DELETE", f"/api/games/{game['id']}")
