"""The web app's JSON API: every decision kind, agents off the request path, bad requests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import pieces, position_text, random_game
from web_client import PATIENCE, Client, serving, wait_until

from agents import Agent, register_agent
from agents.web import AppConfig, YinshServer
from yinsh_env import GameRecord, State, read_record, read_sgf, write_record, write_sgf

#: White's E5-E8 flips E6 and E7 and makes two rows (numbers 6 and 7); White has
#: removed two rings.
TWO_ROWS = position_text(
    pieces(R="E5 A2 B1", r="K10", M="C6 D6 F6 G6 C7 D7 F7 G7", m="E6 E7"), "w move - 2-0 41 0 3"
)
#: G4-G6 flips G5: a run of six, C5..H5.
SIX_RUN = position_text(
    pieces(R="G4 A2", r="K10", M="C5 D5 E5 F5 H5", m="G5"), "w move - 0-0 45 0 3"
)
#: F4-H6 flips G5: rows C5-G5 and G2-G6 cross there.
CROSSING = position_text(
    pieces(R="F4 A2", r="K10", M="C5 D5 E5 F5 G2 G3 G4 G6", m="G5"), "w move - 0-0 42 0 3"
)
#: White's only ring is boxed in: White must pass.
MUST_PASS = position_text(pieces(R="A2", r="B2 A3 B3"), "w move - 0-0 51 0 3")


class CrashAgent(Agent):
    def act(self, state: State) -> int:
        raise RuntimeError("boom")


#: Open unless a test holds the slow agent back (the ``held`` fixture).
GATE = threading.Event()
GATE.set()


class SlowAgent(Agent):
    """Thinks until the test opens :data:`GATE`: slow for as long as a test needs."""

    def act(self, state: State) -> int:
        GATE.wait(PATIENCE)
        return state.legal_actions()[0]


register_agent("test-crash", CrashAgent)
register_agent("test-slow", SlowAgent)


#: The operator's own specs: built as written, with no wall-clock ceiling on
#: their searches, so a loaded machine cannot cut one short.
ALLOWED = ("test-crash", "test-slow", "mcts:sims=60")


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    # Agents have all the time they need: no test here races the think timeout.
    with serving(AppConfig(think_timeout=2 * PATIENCE, allow=ALLOWED)) as srv:
        yield srv


@pytest.fixture
def held() -> Iterator[threading.Event]:
    """The slow agent thinks until the test opens the gate (or ends)."""
    GATE.clear()
    yield GATE
    GATE.set()


@pytest.fixture
def client(server: YinshServer) -> Client:
    return Client(server)


def test_the_page_and_its_assets_are_served_from_the_package(client: Client) -> None:
    status, page = client.request("GET", "/")
    assert status == 200 and '<script src="app.js">' in page
    for name, marker in (("app.js", "function clickPoint"), ("style.css", "#board")):
        status, text = client.request("GET", f"/{name}")
        assert status == 200 and marker in text
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched
    info = client.ok("GET", "/api/info")
    offered = {"human", "random", "greedy", "alphabeta", "mcts", "pretrained", "test-slow"}
    assert offered <= set(info["agents"]) and not {"engine", "net", "sb3"} & set(info["agents"])
    assert info["limits"]["sims"] >= 1000 and 0 < info["limits"]["seconds"] <= 10
    geometry = info["geometry"]
    assert len(geometry["points"]) == 85 and len(geometry["labels"]) == 22
    assert 'class="grid"' in geometry["static_svg"]


def test_placement_then_the_other_side(client: Client) -> None:
    game = client.new()
    assert game["legal"] and len(game["legal"]) == 85 and game["human_to_act"]
    view = client.act(game, "e5")
    assert view["position"]["rings"]["white"] == ["E5"]
    assert view["position"]["to_act"] == "black" and "E5" not in view["legal"]
    assert view["moves"] == [{"side": "W", "action": "E5"}]
    assert view["last"]["kind"] == "place" and view["last"]["points"] == ["E5"]


def test_ring_move_marks_the_flipped_markers(client: Client) -> None:
    game = client.new(text=TWO_ROWS)
    view = client.act(game, "E5-E8")
    assert view["last"]["kind"] == "move" and view["last"]["points"] == ["E5", "E8"]
    assert sorted(view["last"]["flipped"]) == ["E6", "E7"]
    assert "E5" in view["position"]["markers"]["white"]  # the origin marker, not flipped


def test_row_then_ring_removal_wins(client: Client) -> None:
    game = client.new(text=TWO_ROWS)
    view = client.act(game, "E5-E8")
    assert view["position"]["phase"] == "row"
    assert sorted(r["action"] for r in view["position"]["rows"]) == ["xC6-G6", "xC7-G7"]
    assert view["legal"] == ["xC6-G6", "xC7-G7"]
    view = client.act(game, "xC7-G7")
    assert view["position"]["phase"] == "ring" and view["last"]["kind"] == "row"
    assert view["legal"] == ["xA2", "xB1", "xE8"]
    view = client.act(game, "xB1")
    position = view["position"]
    assert position["over"] and position["winner"] == "white" and position["end_reason"] == "rings"
    assert view["legal"] == [] and not view["human_to_act"]


def test_a_run_of_six_offers_both_fives(client: Client) -> None:
    game = client.new(text=SIX_RUN)
    view = client.act(game, "G4-G6")
    assert view["legal"] == ["xC5-G5", "xD5-H5"]
    view = client.act(game, "xD5-H5")
    assert "C5" in view["position"]["markers"]["white"]
    assert view["position"]["phase"] == "ring"


def test_crossing_rows_offer_either(client: Client) -> None:
    game = client.new(text=CROSSING)
    view = client.act(game, "F4-H6")
    rows = {r["action"]: r["points"] for r in view["position"]["rows"]}
    assert set(rows) == {"xC5-G5", "xG2-G6"} and "G5" in rows["xC5-G5"] and "G5" in rows["xG2-G6"]
    view = client.act(game, "xG2-G6")
    assert view["position"]["phase"] == "ring"


def test_pass_only_when_it_is_the_only_move(client: Client) -> None:
    game = client.new(text=MUST_PASS)
    assert game["legal"] == ["pass"]
    view = client.act(game, "pass")
    assert view["position"]["to_act"] == "black" and view["last"]["kind"] == "pass"
    other = client.new(text=TWO_ROWS)
    status, data = client.request("POST", f"/api/games/{other['id']}/action", {"action": "pass"})
    assert status == 400 and "pass" in data["error"]


def test_the_agent_replies_off_the_request_path(client: Client) -> None:
    game = client.new(white="human", black="random")
    client.act(game, "E5")
    view = client.wait(game, lambda v: v["live_ply"] == 2)
    assert view["moves"][1]["side"] == "B" and view["human_to_act"] and view["thinking"] is None


def test_the_agent_moves_first_when_it_has_white(client: Client) -> None:
    game = client.new(white="random", black="human")
    view = client.wait(game, lambda v: v["live_ply"] == 1)
    assert view["human_to_act"] and view["position"]["to_act"] == "black"


def test_two_agents_play_a_whole_game(client: Client) -> None:
    game = client.new(white="random", black="greedy", rings_to_win=1, seed=3)
    view = client.wait(game, lambda v: v["position"]["over"])
    record = read_record(client.ok("GET", f"/api/games/{game['id']}/record"))
    assert record.replay().to_text() == view["position"]["text"]
    assert (record.white, record.black) == ("random", "greedy")


def test_undo_goes_back_to_the_persons_previous_decision(client: Client) -> None:
    game = client.new(white="human", black="random")
    status, data = client.request("POST", f"/api/games/{game['id']}/undo", {})
    assert status == 409 and "nothing to undo" in data["error"]
    client.act(game, "E5")
    client.wait(game, lambda v: v["live_ply"] == 2)
    client.act(game, "F6")
    after = client.wait(game, lambda v: v["live_ply"] == 4)
    view = client.ok("POST", f"/api/games/{game['id']}/undo", {})
    assert view["live_ply"] == 2 and view["human_to_act"]
    assert view["moves"] == after["moves"][:2]
    view = client.ok("POST", f"/api/games/{game['id']}/undo", {})
    assert view["live_ply"] == 0


def test_two_people_undo_one_decision_each(client: Client) -> None:
    game = client.new(text=TWO_ROWS)
    client.act(game, "E5-E8")
    client.act(game, "xC6-G6")
    view = client.ok("POST", f"/api/games/{game['id']}/undo", {})
    assert view["live_ply"] == 1 and view["position"]["phase"] == "row"


def test_a_past_position_is_shown_by_its_ply(client: Client) -> None:
    game = client.new()
    for action in ("E5", "F6", "G7"):
        client.act(game, action)
    view = client.view(game, 1)
    assert view["ply"] == 1 and view["live_ply"] == 3
    assert view["position"]["rings"] == {"white": ["E5"], "black": []}
    assert view["legal"] == []  # nothing to decide in the past


def played_record() -> GameRecord:
    return GameRecord.from_state(random_game(5, rings_to_win=1, stop=14), "a", "b")


@pytest.mark.parametrize("fmt", ["yinsh", "sgf"])
def test_load_a_record_and_download_it_again(client: Client, fmt: str) -> None:
    record = played_record()
    text = write_record(record) if fmt == "yinsh" else write_sgf(record)
    game = client.new(white="human", black="human")
    view = client.ok("POST", f"/api/games/{game['id']}/load", {"text": text})
    assert [m["action"] for m in view["moves"]] == record.actions
    assert view["position"]["rings_to_win"] == 1 and view["from_start"]
    back = client.ok("GET", f"/api/games/{game['id']}/record?format={fmt}")
    again = read_record(back) if fmt == "yinsh" else read_sgf(back)
    assert again.actions == record.actions
    assert (again.white, again.black) == ("human", "human")


def test_load_a_position_text_and_a_new_game_from_it(client: Client) -> None:
    game = client.new()
    client.act(game, "E5")
    view = client.ok("POST", f"/api/games/{game['id']}/load", {"text": SIX_RUN})
    assert view["position"]["text"] == SIX_RUN and view["moves"] == [] and not view["from_start"]
    status, data = client.request("GET", f"/api/games/{game['id']}/record")
    assert status == 409 and "position text" in data["error"]
    other = client.new(text=SIX_RUN)
    assert other["position"]["text"] == SIX_RUN


def test_analysis_by_mcts_gives_visits_and_a_value(client: Client) -> None:
    game = client.new(text=TWO_ROWS)
    view = client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": "mcts:sims=60"})
    assert view["analysis"]["status"] in ("running", "done")
    view = client.wait(game, lambda v: v["analysis"]["status"] != "running")
    analysis = view["analysis"]
    assert analysis["status"] == "done", analysis
    assert analysis["best"] == analysis["moves"][0]["action"]
    assert 0.5 < analysis["value"] <= 1  # White wins with several moves here
    visits = [m["visits"] for m in analysis["moves"]]
    assert len(visits) == 8 and all(v >= 1 for v in visits) and sum(visits) <= 60
    assert view["live_ply"] == 0  # analysis plays nothing


def test_analysis_of_a_past_position_by_any_agent(client: Client) -> None:
    game = client.new()
    client.act(game, "E5")
    client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": "random", "ply": 0})
    analysis = client.wait(game, lambda v: v["analysis"]["status"] != "running")["analysis"]
    assert analysis["status"] == "done" and analysis["ply"] == 0
    assert analysis["value"] is None and analysis["best"] != ""


def test_analysis_by_a_network_gives_priors_and_value(
    server: YinshServer, client: Client, tiny_run_dir: Path
) -> None:
    spec = f"net:path={tiny_run_dir}"
    status, data = client.request("POST", "/api/games", {"white": spec})
    assert status == 403 and "not offered" in data["error"]  # until the operator allows it
    server.policy.allow(spec)
    game = client.new(text=TWO_ROWS)
    for sims, with_visits in ((0, False), (8, True)):
        spec = f"net:path={tiny_run_dir},sims={sims}"
        client.ok("POST", f"/api/games/{game['id']}/analysis", {"spec": spec})
        analysis = client.wait(game, lambda v: v["analysis"]["status"] != "running")["analysis"]
        assert analysis["status"] == "done", analysis
        priors = [m["prior"] for m in analysis["moves"]]
        assert all(0 <= p <= 1 for p in priors) and len(priors) == 8
        assert -1 <= analysis["value"] <= 1
        assert (analysis["moves"][0]["visits"] is not None) == with_visits
        if not with_visits:
            assert priors == sorted(priors, reverse=True)


def test_a_crashing_agent_is_reported_and_the_game_stays_playable(client: Client) -> None:
    game = client.new(white="human", black="test-crash")
    client.act(game, "E5")
    view = client.wait(game, lambda v: v["error"] is not None)
    assert "boom" in view["error"] and view["error_side"] == "black"
    assert view["live_ply"] == 1 and view["thinking"] is None
    view = client.ok("POST", f"/api/games/{game['id']}/players", {"black": "human"})
    assert view["error"] is None and view["human_to_act"]
    view = client.act(game, "F6")
    assert view["live_ply"] == 2


@pytest.mark.slow
def test_a_slow_agent_times_out_and_can_be_undone(held: threading.Event) -> None:
    with serving(AppConfig(think_timeout=0.5, allow=ALLOWED)) as impatient:
        client = Client(impatient)
        game = client.new(white="human", black="test-slow")
        client.act(game, "E5")
        view = client.wait(game, lambda v: v["error"] is not None)
        assert "timed out" in view["error"] and view["live_ply"] == 1
        view = client.ok("POST", f"/api/games/{game['id']}/undo", {})
        assert view["live_ply"] == 0 and view["error"] is None
        held.set()  # the stuck agent answers at last: its late answer must not land
        wait_until(lambda: impatient.store.workers.running == 0, "the stuck agent to return")
        assert client.view(game)["live_ply"] == 0


def test_several_games_at_once(client: Client) -> None:
    first, second = client.new(), client.new()
    client.act(first, "E5")
    client.act(second, "F6")
    assert client.view(first)["position"]["rings"]["white"] == ["E5"]
    assert client.view(second)["position"]["rings"]["white"] == ["F6"]
    assert {first["id"], second["id"]} <= set(client.ok("GET", "/api/games")["games"])
    client.ok("DELETE", f"/api/games/{second['id']}")
    status, _ = client.request("GET", f"/api/games/{second['id']}")
    assert status == 404


BAD_REQUESTS = [
    # (name, method, path template, json body or None, raw body, headers, status, message)
    (
        "illegal move",
        "POST",
        "/api/games/{id}/action",
        {"action": "E5-E8"},
        None,
        {},
        400,
        "illegal",
    ),
    ("bad notation", "POST", "/api/games/{id}/action", {"action": "Z99"}, None, {}, 400, "Z99"),
    ("action missing", "POST", "/api/games/{id}/action", {}, None, {}, 400, "action"),
    ("action not text", "POST", "/api/games/{id}/action", {"action": 5}, None, {}, 400, "notation"),
    (
        "unknown field",
        "POST",
        "/api/games/{id}/action",
        {"action": "E5", "x": 1},
        None,
        {},
        400,
        "x",
    ),
    (
        "stale ply",
        "POST",
        "/api/games/{id}/action",
        {"action": "E5", "ply": 3},
        None,
        {},
        409,
        "saw",
    ),
    (
        "malformed JSON",
        "POST",
        "/api/games/{id}/action",
        None,
        b"{oops",
        {"Content-Type": "application/json"},
        400,
        "malformed JSON",
    ),
    (
        "JSON not an object",
        "POST",
        "/api/games/{id}/action",
        None,
        b"[1]",
        {"Content-Type": "application/json"},
        400,
        "object",
    ),
    (
        "not JSON",
        "POST",
        "/api/games/{id}/action",
        None,
        b"action=E5",
        {"Content-Type": "application/x-www-form-urlencoded"},
        415,
        "JSON",
    ),
    (
        "too large",
        "POST",
        "/api/games/{id}/load",
        None,
        b"x",
        {"Content-Type": "application/json", "Content-Length": str(2 << 20)},
        413,
        "over",
    ),
    ("unknown game", "GET", "/api/games/ffffffff", None, None, {}, 404, "no game"),
    (
        "unknown game action",
        "POST",
        "/api/games/ffffffff/action",
        {"action": "E5"},
        None,
        {},
        404,
        "no game",
    ),
    ("unknown verb", "POST", "/api/games/{id}/resign", {}, None, {}, 404, "no such API"),
    ("unknown API", "GET", "/api/nothing", None, None, {}, 404, "no such API"),
    ("path trick", "GET", "/../pyproject.toml", None, None, {}, 404, "no such page"),
    ("encoded path trick", "GET", "/%2e%2e/%2e%2e/etc/passwd", None, None, {}, 404, "no such page"),
    ("static path trick", "GET", "/static/../server.py", None, None, {}, 404, "no such page"),
    ("game id trick", "GET", "/api/games/..%2f..%2fetc", None, None, {}, 404, "no such API"),
    ("wrong method", "GET", "/api/games/{id}/action", None, None, {}, 405, "POST"),
    ("put", "PUT", "/api/games/{id}", None, None, {}, 405, "PUT"),
    ("bad ply", "GET", "/api/games/{id}?ply=x", None, None, {}, 400, "ply"),
    ("ply outside", "GET", "/api/games/{id}?ply=9", None, None, {}, 400, "outside"),
    ("bad spec", "POST", "/api/games/{id}/players", {"black": "nosuch"}, None, {}, 400, "nosuch"),
    (
        "bad spec key",
        "POST",
        "/api/games/{id}/players",
        {"black": "mcts:sim=3"},
        None,
        {},
        400,
        "sim",
    ),
    (
        "bad position",
        "POST",
        "/api/games/{id}/load",
        {"text": "4/7/8 w place"},
        None,
        {},
        400,
        "cannot load",
    ),
    (
        "bad record",
        "POST",
        "/api/games/{id}/load",
        {"text": '[Variant "x"]\n1. E5'},
        None,
        {},
        400,
        "cannot load",
    ),
    ("empty load", "POST", "/api/games/{id}/load", {"text": " "}, None, {}, 400, "nothing"),
    ("bad record format", "GET", "/api/games/{id}/record?format=pgn", None, None, {}, 400, "pgn"),
    (
        "analysis by a person",
        "POST",
        "/api/games/{id}/analysis",
        {"spec": "human"},
        None,
        {},
        400,
        "agent spec",
    ),
    (
        "analysis bad spec",
        "POST",
        "/api/games/{id}/analysis",
        {"spec": "nosuch"},
        None,
        {},
        400,
        "nosuch",
    ),
    (
        "foreign host",
        "GET",
        "/api/games/{id}",
        None,
        None,
        {"Host": "evil.example:8000"},
        403,
        "Host",
    ),
    (  # was read as 127.0.0.1: everything before the last ':' taken as the name
        "foreign host after a loopback prefix",
        "GET",
        "/api/games/{id}",
        None,
        None,
        {"Host": "127.0.0.1:1@evil.example"},
        403,
        "Host",
    ),
]


@pytest.mark.parametrize(
    "method, path, body, raw, headers, status, message",
    [case[1:] for case in BAD_REQUESTS],
    ids=[case[0] for case in BAD_REQUESTS],
)
def test_bad_requests_get_a_4xx_with_a_message_and_change_nothing(
    client: Client,
    method: str,
    path: str,
    body: Any,
    raw: bytes | None,
    headers: dict[str, str],
    status: int,
    message: str,
) -> None:
    game = client.new(white="human", black="human")
    client.act(game, "E5")
    before = client.view(game)
    got, data = client.request(method, path.format(id=game["id"]), body, raw, headers)
    assert got == status, data
    text = data["error"] if isinstance(data, dict) else data
    assert message.lower() in text.lower(), text
    after = client.view(game)
    assert after["version"] == before["version"] and after["position"] == before["position"]


def test_bad_new_game_options_are_refused(client: Client) -> None:
    before = set(client.ok("GET", "/api/games")["games"])
    for options, message in (
        ({"white": "nosuch"}, "nosuch"),
        ({"rings_to_win": 9}, "rings_to_win"),
        ({"colour": "white"}, "colour"),
        ({"white": 3}, "white"),
        ({"text": "garbage"}, "cannot load"),
        ({"delay": -1}, "delay"),
    ):
        status, data = client.request("POST", "/api/games", options)
        assert status == 400 and message in data["error"], data
    assert set(client.ok("GET", "/api/games")["games"]) == before


def test_moves_refused_when_not_a_persons_turn_or_the_game_is_over(
    client: Client, held: threading.Event
) -> None:
    game = client.new(white="test-slow", black="human")  # thinking all through the test
    status, data = client.request("POST", f"/api/games/{game['id']}/action", {"action": "E5"})
    assert status == 409 and "not a person" in data["error"]
    won = client.new(text=TWO_ROWS)
    for action in ("E5-E8", "xC6-G6", "xA2"):
        client.act(won, action)
    status, data = client.request("POST", f"/api/games/{won['id']}/action", {"action": "xB1"})
    assert status == 409 and "over" in data["error"]


def test_yinsh_play_web_serves_until_stopped() -> None:
    import subprocess
    import sys
    import urllib.request

    root = Path(__file__).resolve().parents[3]
    command = [sys.executable, "-m", "agents.play.play_cli", "--web", "--no-open", "--port", "0"]
    allow = ["--allow", "mcts:sims=20000", "--allow", "alphabeta:depth=2"]
    proc = subprocess.Popen(
        [*command, "--opponent", "greedy", *allow], cwd=root, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" on ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/info", timeout=PATIENCE) as response:
            info = json.loads(response.read())
        assert info["defaults"] == {"white": "human", "black": "greedy", "analyst": "mcts:sims=200"}
        assert info["agents"][:2] == ["human", "mcts:sims=20000"]  # built-in ones stay bounded
    finally:
        proc.terminate()
        proc.wait(timeout=PATIENCE)


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags", [["--opponent", "nosuch"], ["--allow", "nosuch"], ["--allow", "mcts:sim=3"]]
)
def test_yinsh_play_web_refuses_a_bad_spec(
    capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    from agents.play.play_cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--web", "--no-open", *flags])
    assert exit_info.value.code == 2 and flags[1].split(":")[-1] in capsys.readouterr().err


def test_the_notebook_view_draws_the_board_and_the_numbers() -> None:
    from agents.web.notebook_app import analysis_view

    view = analysis_view(State.from_text(TWO_ROWS), "mcts:sims=40")
    html = view._repr_html_()
    assert html.count("<svg") == 1 and 'class="highlight"' in html
    assert "value for White" in html and html.count("<tr>") == 1 + len(view.analysis.moves)


def test_the_notebook_app_serves_the_page() -> None:
    import urllib.request

    from agents.web.notebook_app import play_inline

    frame = play_inline(opponent="greedy", human="black")
    with urllib.request.urlopen(frame.src + "api/info", timeout=PATIENCE) as response:
        defaults = json.loads(response.read())["defaults"]
    assert (defaults["white"], defaults["black"]) == ("greedy", "human")


def test_the_least_recently_used_game_makes_room() -> None:
    from agents.web import SessionStore

    store = SessionStore(max_games=2)
    first, second = store.create({}), store.create({})
    store.get(first.id)  # the page of the first game is still polling
    third = store.create({})
    assert set(store.ids()) == {first.id, third.id}
    with pytest.raises(ValueError, match=second.id):
        store.get(second.id)
    store.close()
