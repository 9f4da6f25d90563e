"""The web app's page in a real headless Chromium, driven by Playwright: every decision by clicks.

Needs the system's Chromium (``apt-get install chromium``; ``.ci/install`` installs
it) and the ``playwright`` Python package (the ``web`` extra).  Playwright's own
browser download is never used.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import THROWN_AWAY, pieces, position_text

from agents import Agent, register_agent
from agents.web import AppConfig, YinshServer
from agents.web.browser import find_chromium, launch
from yinsh_env import GameRecord, State, write_record

CHROMIUM = find_chromium()
sync_api = pytest.importorskip(
    "playwright.sync_api", reason='the browser tests need playwright: pip install -e ".[web]"'
)
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium at /usr/bin/chromium: apt-get install chromium"
    ),
    pytest.mark.slow,  # a browser per test: not in the edit loop
]

#: White (two rings removed) wins with E5-E8, a row and a ring, whatever Black's ring on
#: J10 does first.
ROW_WIN = position_text(
    pieces(R="E5 A2 B1", r="J10", M="C6 D6 F6 G6 C7 D7 F7 G7", m="E6 E7"), "w move - 2-0 41 0 3"
)
#: F4-H6 flips G5: rows C5-G5 and G2-G6 cross there.
CROSSING = position_text(
    pieces(R="F4 A2", r="K10", M="C5 D5 E5 F5 G2 G3 G4 G6", m="G5"), "w move - 0-0 42 0 3"
)
#: White's only ring is boxed in: White must pass.
MUST_PASS = position_text(pieces(R="A2", r="B2 A3 B3"), "w move - 0-0 51 0 3")


#: Seconds any wait here may take: generous, a loaded machine is slow, not stuck.
BOUND = 120
#: Open unless a test holds the slow agent back (the ``held`` fixture).
GATE = threading.Event()
GATE.set()


class SlowAgent(Agent):
    """Thinks until the test opens :data:`GATE`: the page shows it thinking meanwhile."""

    def act(self, state: State) -> int:
        GATE.wait(BOUND)
        return state.legal_actions()[-1]


class CrashAgent(Agent):
    def act(self, state: State) -> int:
        raise RuntimeError("boom in the browser")


register_agent("browser-slow", SlowAgent)
register_agent("browser-crash", CrashAgent)


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    config = AppConfig(
        white="human",
        black="random",
        analyst="mcts:sims=40",
        think_timeout=BOUND,
        allow=("browser-slow", "browser-crash"),
    )
    srv = YinshServer("127.0.0.1", 0, config).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
        context.set_default_timeout(BOUND * 1000)
        yield context
        context.close()


@pytest.fixture
def held() -> Iterator[threading.Event]:
    """The slow agent thinks until the test opens the gate (or ends)."""
    GATE.clear()
    yield GATE
    GATE.set()


@pytest.fixture
def page(browser_context: Any, server: YinshServer) -> Iterator[Any]:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.url)
    page.wait_for_function("() => window.yinsh.view !== null && window.yinsh.view !== undefined")
    yield page
    page.close()
    assert not errors, errors


def click(page: Any, point: str) -> None:
    page.click(f'#layer-hits [data-point="{point}"]', force=True)


def wait_for(page: Any, condition: str, arg: Any = None) -> None:
    page.wait_for_function(
        f"(arg) => {{ const v = window.yinsh.view; return {condition}; }}", arg=arg
    )


def load(page: Any, text: str) -> None:
    page.fill("#load-text", text)
    page.click("#load")
    wait_for(page, "v.moves.length === 0 || arg.includes('[')", text)


def test_a_whole_game_against_random_by_clicks(page: Any) -> None:
    load(page, ROW_WIN)
    wait_for(page, "v.position.text === arg", ROW_WIN)
    click(page, "B1")  # select the ring: its destinations light up
    moves = [a for a in State.from_text(ROW_WIN).legal_action_names() if a.startswith("B1-")]
    assert page.locator("#layer-targets .destination").count() == len(moves) > 0
    click(page, "B2")
    wait_for(page, "v.live_ply === 2 && v.human_to_act")  # random answered
    click(page, "E5")
    click(page, "E8")
    wait_for(page, "v.position.phase === 'row'")
    assert page.locator("#layer-rows .pending-row").count() == 2
    assert sorted(
        page.eval_on_selector_all(".flipped", "els => els.map(e => e.dataset.point)")
    ) == [
        "E6",
        "E7",
    ]
    click(page, "C6")  # only one row runs through C6: it is taken
    wait_for(page, "v.position.phase === 'ring'")
    assert page.locator("#layer-targets .target").count() == 3
    click(page, "A2")
    wait_for(page, "v.position.over")
    assert "White wins" in page.inner_text("#status")
    view = page.evaluate("window.yinsh.view")
    assert [m["action"] for m in view["moves"][2:]] == ["E5-E8", "xC6-G6", "xA2"]


def test_crossing_rows_are_told_apart_by_pointing(page: Any) -> None:
    load(page, CROSSING)
    click(page, "F4")
    click(page, "H6")
    wait_for(page, "v.position.phase === 'row'")
    click(page, "G5")  # on both rows: the page asks which
    assert page.is_visible("#row-box")
    assert page.locator("#row-buttons button").all_inner_texts() == ["xC5-G5", "xG2-G6"]
    click(page, "C5")  # only on the first
    wait_for(page, "v.position.phase === 'ring'")
    assert page.evaluate("window.yinsh.view.moves.map(m => m.action)") == ["F4-H6", "xC5-G5"]


def test_pass_is_offered_only_when_it_is_legal(page: Any) -> None:
    assert not page.is_visible("#pass-box")
    load(page, MUST_PASS)
    wait_for(page, "v.legal.length === 1")
    assert page.is_visible("#pass-box")
    page.click("#pass")
    wait_for(page, "v.moves.length >= 1 && v.moves[0].action === 'pass'")


def test_undo_and_the_move_list(page: Any) -> None:
    click(page, "E5")
    wait_for(page, "v.live_ply === 2 && v.human_to_act")
    click(page, "F6")
    wait_for(page, "v.live_ply === 4 && v.human_to_act")
    page.click("#moves a[data-ply='1']")  # the position after the first move
    wait_for(page, "v.ply === 1")
    assert page.is_visible("#history-bar")
    assert page.locator("#layer-pieces .ring").count() == 1
    page.click("#live")
    wait_for(page, "v.ply === 4")
    page.click("#undo")
    wait_for(page, "v.live_ply === 2")
    assert page.locator("#layer-pieces .ring").count() == 2
    assert page.evaluate("window.yinsh.view.human_to_act")


def test_loading_a_record_then_downloading_it(page: Any) -> None:
    state = State()
    for action in ("E5", "F6", "G7", "H8"):
        state.push(action)
    text = write_record(GameRecord.from_state(state, "x", "y"))
    page.fill("#load-text", text)
    page.click("#load")
    wait_for(page, "v.moves.length === 4")
    assert page.locator("#moves li").count() == 4
    href = page.get_attribute("#dl-yinsh", "href")
    record = page.evaluate("(url) => fetch(url).then(r => r.text())", href)
    assert "1. W E5" in record and "4. B H8" in record
    # A malformed text is explained and changes nothing.
    page.fill("#load-text", "not a position")
    page.click("#load")
    page.wait_for_selector("#message:not([hidden])")
    assert "cannot load" in page.inner_text("#message")
    assert page.evaluate("window.yinsh.view.moves.length") == 4


def test_analysis_overlay_and_flip(page: Any) -> None:
    load(page, ROW_WIN)
    page.check("#overlay")
    page.wait_for_selector("#layer-overlay .analysis", state="attached")
    assert "value for White" in page.inner_text("#analysis-out")
    box = page.locator('#layer-hits [data-point="A2"]').bounding_box()
    page.click("#flip")
    flipped = page.locator('#layer-hits [data-point="A2"]').bounding_box()
    assert flipped["x"] > box["x"] + 200  # A2 went to the other side
    assert json.loads(page.evaluate("JSON.stringify(window.yinsh.flipped)")) is True


def new_game(page: Any, white: str, black: str) -> None:
    page.click("#new-toggle")
    page.fill("#new-white", white)
    page.fill("#new-black", black)
    page.click("#start")
    wait_for(page, "v.players.white === arg[0] && v.players.black === arg[1]", [white, black])


def test_thinking_is_shown_and_a_crash_is_reported_with_the_game_still_playable(
    page: Any, held: threading.Event
) -> None:
    new_game(page, "human", "browser-slow")
    click(page, "E5")
    page.wait_for_selector("#thinking:not([hidden])")
    assert "browser-slow" in page.inner_text("#thinking")
    held.set()  # it answers
    wait_for(page, "v.live_ply === 2 && v.human_to_act")
    assert page.is_hidden("#thinking")
    new_game(page, "human", "browser-crash")
    click(page, "E5")
    page.wait_for_selector("#error:not([hidden])")
    assert "boom in the browser" in page.inner_text("#error")
    page.click("#takeover")  # play Black yourself
    wait_for(page, "v.error === null && v.human_to_act && v.players.black === 'human'")
    click(page, "F6")
    wait_for(page, "v.live_ply === 2")


def test_a_networks_priors_visits_and_value_on_the_board(
    page: Any, server: YinshServer, tiny_run_dir: Path
) -> None:
    server.policy.allow(f"net:path={tiny_run_dir}")  # yinsh-play --web --allow net:path=...
    load(page, ROW_WIN)
    page.fill("#analyst", f"net:path={tiny_run_dir},sims=8")
    page.check("#overlay")
    wait_for(page, "window.yinsh.game.analysis && window.yinsh.game.analysis.status === 'done'")
    labels = page.locator("#layer-overlay text.analysis").all_text_contents()
    assert len(labels) == 5 and all(label.rstrip().endswith("%") for label in labels)
    table = page.inner_text("#analysis-out table")
    assert table.count("%") >= 8  # a prior for every listed move
    assert "value for White" in page.inner_text("#analysis-out")


def test_a_review_draws_its_graph_marks_the_moves_and_a_click_goes_there(page: Any) -> None:
    load(page, THROWN_AWAY)
    wait_for(page, "v.moves.length === 48")
    page.fill("#analyst", "mcts:sims=100")
    page.click("#review")
    page.wait_for_selector("#review-graph .review-mark", timeout=120_000)
    assert page.evaluate("window.yinsh.game.review.status") == "done"
    assert page.is_visible("#review-graph")
    assert "reviewed by mcts:sims=100" in page.inner_text("#review-status")
    last = page.locator('#moves a[data-ply="48"]')
    assert "mark-blunder" in (last.get_attribute("class") or "") and "??" in last.inner_text()
    assert page.locator("#review-graph polyline").count() == 1
    assert page.locator("#review-graph .review-mark.mark-blunder").count() >= 1
    assert "accuracy" in page.inner_text("#review-summary")
    box = page.locator("#review-graph").bounding_box()
    page.mouse.click(box["x"] + box["width"] * 12 / 48, box["y"] + box["height"] / 2)
    wait_for(page, "v.ply === 12")
    assert page.is_checked("#overlay")
    page.wait_for_selector("#layer-overlay .analysis", state="attached")
    page.click('#moves a[data-ply="30"]')
    wait_for(page, "v.ply === 30")
    assert "30. B E1-F2: " in page.inner_text("#review-summary")
