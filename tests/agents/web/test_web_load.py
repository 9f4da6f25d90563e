"""The web app under load, through real HTTP on 127.0.0.1: no reset, no 500, no leak.

Many clients at once (a burst of 80 new games, games and analyses in
parallel, games evicting each other while their agents think), then the
server's threads are counted: the agents' pool and the connections' pool
never exceed their sizes, no timer thread is ever started, and once the
server stops every thread it started is gone.  Cancellation is checked with
the operator's unbounded search (``mcts:sims=10000000``, no ceiling): only a
cancel can stop it, so a job still running after its game is gone fails the
test.  Waits poll under generous bounds; no duration is asserted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from web_client import Client, thread_names, wait_until

from agents.web import AppConfig, YinshServer
from agents.web.httpd import REQUEST_WORKERS
from agents.web.jobs import THINK_WORKERS

#: The operator's unbounded search: only cancelling it stops it.
ENDLESS = "mcts:sims=10000000"


def start_server(**options: Any) -> YinshServer:
    config = AppConfig(think_timeout=600, allow=(ENDLESS,), **options)
    return YinshServer("127.0.0.1", 0, config).start()


@pytest.fixture
def no_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any use of threading.Timer (the issue: one per decision, never cancelled)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a threading.Timer was started")

    monkeypatch.setattr(threading, "Timer", refuse)


@pytest.fixture
def server(no_timers: None) -> Iterator[YinshServer]:
    before = thread_names()
    srv = start_server()
    yield srv
    srv.stop()
    wait_until(lambda: thread_names() <= before, "the server's threads to end")


def over(view: dict[str, Any]) -> bool:
    return bool(view["position"]["over"] or view["error"])


def test_a_burst_of_80_new_games_gets_no_reset(server: YinshServer) -> None:
    client = Client(server)
    barrier = threading.Barrier(80, timeout=60)

    def one(_: int) -> tuple[int, Any]:
        barrier.wait()
        return client.request("POST", "/api/games", {"white": "random", "black": "human"})

    with ThreadPoolExecutor(80) as pool:
        answers = list(pool.map(one, range(80)))
    assert [status for status, _ in answers] == [201] * 80, answers
    assert len(server.store) == server.store.max_games


def test_30_random_games_leave_no_thread_behind(server: YinshServer) -> None:
    client = Client(server)
    games = [client.new(white="random", black="random", seed=i) for i in range(30)]
    for game in games:
        client.wait(game, over, patience=120)
        assert client.view(game)["position"]["over"], client.view(game)
    threads = [t.name for t in threading.enumerate()]
    assert sum(name.startswith("yinsh-think") for name in threads) <= THINK_WORKERS
    assert sum(name.startswith("yinsh-http") for name in threads) <= REQUEST_WORKERS
    wait_until(lambda: server.store.workers.running == 0, "the pool to go idle")


@pytest.mark.slow
def test_games_and_analyses_in_parallel(server: YinshServer) -> None:
    client = Client(server)

    def one(i: int) -> list[int]:
        seen = []
        game = client.new(white="human", black="mcts:sims=30", seed=i)
        seen.append(200)
        for action in ("E5", "F6", "G7"):
            view = client.wait(game, lambda v: v["human_to_act"] or over(v))
            if over(view):
                break
            legal = view["legal"]
            status, _ = client.request(
                "POST",
                f"/api/games/{game['id']}/action",
                {"action": action if action in legal else legal[0]},
            )
            seen.append(status)
            status, _ = client.request(
                "POST", f"/api/games/{game['id']}/analysis", {"spec": "mcts:sims=50"}
            )
            seen.append(status)
        view = client.wait(
            game, lambda v: v["analysis"] is None or v["analysis"]["status"] != "running"
        )
        assert view["analysis"] is None or view["analysis"]["status"] == "done", view["analysis"]
        seen.append(client.request("DELETE", f"/api/games/{game['id']}")[0])
        return seen

    with ThreadPoolExecutor(24) as pool:
        statuses = [status for seen in pool.map(one, range(24)) for status in seen]
    assert all(status < 300 for status in statuses), statuses
    wait_until(lambda: server.store.workers.running == 0, "the pool to go idle")


def test_a_replaced_analysis_stops(server: YinshServer) -> None:
    client = Client(server)
    game = client.new()
    client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": ENDLESS})
    wait_until(lambda: server.store.workers.running == 1, "the endless analysis to start")
    client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": "random"})
    view = client.wait(game, lambda v: v["analysis"]["status"] != "running")
    assert view["analysis"]["spec"] == "random" and view["analysis"]["status"] == "done"
    wait_until(lambda: server.store.workers.running == 0, "the endless analysis to stop")


@pytest.mark.parametrize("how", ["delete", "undo", "players", "load"])
def test_a_thinking_agent_stops_when_its_game_moves_on(server: YinshServer, how: str) -> None:
    client = Client(server)
    game = client.new(white="human", black=ENDLESS)
    client.act(game, "E5")
    wait_until(lambda: server.store.workers.running == 1, "the endless agent to start")
    path = f"/api/games/{game['id']}"
    if how == "delete":
        client.ok("DELETE", path)
    elif how == "undo":
        client.ok("POST", path + "/undo", {})
    elif how == "players":
        client.ok("POST", path + "/players", {"black": "human"})
    else:
        client.ok("POST", path + "/load", {"text": game["position"]["text"]})
    wait_until(lambda: server.store.workers.running == 0, "the endless agent to stop")
    if how != "delete":
        view = client.view(game)
        assert view["thinking"] is None and view["live_ply"] == (1 if how == "players" else 0)


@pytest.mark.slow
def test_games_evicted_while_thinking_stop_thinking(no_timers: None) -> None:
    before = thread_names()
    server = start_server(max_games=3)
    try:
        client = Client(server)
        for _ in range(12):
            client.new(white=ENDLESS, black="human")
            client.request("POST", "/api/games", {"white": ENDLESS, "black": ENDLESS})
        assert len(server.store) == 3
        wait_until(lambda: server.store.workers.running <= 3, "evicted games' agents to stop")
        for game_id in client.ok("GET", "/api/games")["games"]:
            client.ok("DELETE", f"/api/games/{game_id}")
        wait_until(lambda: server.store.workers.running == 0, "every agent to stop")
    finally:
        server.stop()
    wait_until(lambda: thread_names() <= before, "the server's threads to end")


@pytest.mark.slow
def test_a_stopped_server_cancels_what_it_was_thinking(no_timers: None) -> None:
    before = thread_names()
    server = start_server()
    client = Client(server)
    for _ in range(4):
        game = client.new(white=ENDLESS, black=ENDLESS)
        client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": ENDLESS})
    wait_until(lambda: server.store.workers.running >= 4, "the agents to start")
    server.stop()
    wait_until(lambda: server.store.workers.running == 0, "every agent to stop")
    wait_until(lambda: thread_names() <= before, "the server's threads to end")
