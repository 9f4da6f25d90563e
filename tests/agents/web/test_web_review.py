"""A game review started through the web API: admitted, bounded, cancellable, dropped if stale."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import THROWN_AWAY
from web_client import Client, serving

from agents.web import AppConfig, YinshServer
from agents.web import reviews as web_reviews
from yinsh_env import load_record, read_record, write_record

BGA = Path(__file__).parents[2] / "data" / "games" / "bga" / "bga_862307561.json"


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    with serving(AppConfig(analyst="mcts:sims=20")) as srv:
        yield srv


@pytest.fixture
def client(server: YinshServer) -> Client:
    return Client(server)


def finished(view: dict[str, Any]) -> bool:
    return view["review"] is not None and view["review"]["status"] != "running"


@pytest.mark.slow
def test_a_review_of_a_loaded_record_marks_the_blunder(client: Client) -> None:
    game = client.new(text=THROWN_AWAY, white="human", black="human")
    view = client.ok("POST", f"/api/games/{game['id']}/review", {"spec": "mcts:sims=100"})
    assert view["review"]["status"] in ("running", "done")
    review = client.wait(game, finished, patience=120)["review"]
    assert review["status"] == "done" and review["complete"], review
    plies = len(read_record(THROWN_AWAY).actions)
    assert [d["ply"] for d in review["decisions"]] == list(range(1, plies + 1))
    assert len(review["values"]) == plies + 1 and review["done"] == plies + 1
    assert review["decisions"][-1]["mark"] == "blunder"
    assert set(review["summary"]) == {"white", "black"} and review["spec"] == "mcts:sims=100"


def test_the_default_analyst_reviews_the_game_played(client: Client) -> None:
    game = client.new(white="human", black="human")
    for action in ("E5", "F6", "D4"):
        client.act(game, action)
    client.ok("POST", f"/api/games/{game['id']}/review", {})
    review = client.wait(game, finished, patience=120)["review"]
    assert review["status"] == "done" and review["spec"] == "mcts:sims=20"
    assert [d["action"] for d in review["decisions"]] == ["E5", "F6", "D4"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"spec": "engine:cmd=yinsh-engine random"}, 403, "not offered"),
        ({"spec": "net:path=/etc/passwd"}, 403, "not offered"),
        ({"spec": "mcts:sims=999999"}, 403, "outside what the web app allows"),
        ({"spec": "nosuchagent"}, 400, "unknown agent"),
        ({"spec": 7}, 400, "spec must be a string"),
        ({"cancel": "yes"}, 400, "cancel must be true or false"),
        ({"cancel": True}, 409, "no review is running"),
        ({"spec": "mcts", "ply": 3}, 400, "unknown field"),
    ],
)
def test_refused_reviews_start_nothing(
    client: Client, body: dict[str, Any], status: int, words: str
) -> None:
    game = client.new(white="human", black="human")
    client.act(game, "E5")
    got, answer = client.request("POST", f"/api/games/{game['id']}/review", body)
    assert got == status and words in answer["error"], answer
    assert client.view(game)["review"] is None


def test_nothing_to_review_and_an_agent_without_values(client: Client) -> None:
    game = client.new(white="human", black="human")
    got, answer = client.request("POST", f"/api/games/{game['id']}/review", {"spec": "mcts"})
    assert got == 409 and "nothing to review" in answer["error"]
    client.act(game, "E5")
    client.ok("POST", f"/api/games/{game['id']}/review", {"spec": "random"})
    review = client.wait(game, finished)["review"]
    assert review["status"] == "error" and "gives no value" in review["error"]


def test_a_cancelled_review_keeps_what_it_reviewed(client: Client) -> None:
    game = client.new(text=write_record(load_record(BGA)), white="human", black="human")
    client.ok("POST", f"/api/games/{game['id']}/review", {"spec": "mcts:sims=400"})
    client.wait(game, lambda v: v["review"]["done"] >= 2 or finished(v), patience=120)
    client.ok("POST", f"/api/games/{game['id']}/review", {"cancel": True})
    review = client.wait(game, finished, patience=120)["review"]
    assert review["status"] == "stopped" and review["stopped"]["reason"] == "cancelled"
    assert len(review["decisions"]) == review["stopped"]["ply"] - 1 >= 1


def test_one_reviews_work_is_bounded_by_its_time_limit(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_reviews, "REVIEW_SECONDS", 0.0)
    game = client.new(text=THROWN_AWAY, white="human", black="human")
    client.ok("POST", f"/api/games/{game['id']}/review", {"spec": "mcts:sims=100"})
    review = client.wait(game, finished)["review"]
    assert review["status"] == "stopped" and review["stopped"]["ply"] == 1
    assert "time limit" in review["stopped"]["reason"] and review["decisions"] == []


def test_undo_or_load_drops_the_review(client: Client) -> None:
    game = client.new(white="human", black="human")
    client.act(game, "E5")
    client.act(game, "F6")
    client.ok("POST", f"/api/games/{game['id']}/review", {"spec": "mcts:sims=10"})
    assert client.wait(game, finished)["review"]["status"] == "done"
    assert client.ok("POST", f"/api/games/{game['id']}/undo", {})["review"] is None
    client.ok("POST", f"/api/games/{game['id']}/review", {"spec": "mcts:sims=10"})
    view = client.ok("POST", f"/api/games/{game['id']}/load", {"text": THROWN_AWAY})
    assert view["review"] is None and client.view(game)["review"] is None
