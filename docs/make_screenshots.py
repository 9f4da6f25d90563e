"""Take the screenshots of the web app and of the documentation site with headless
Chromium (Playwright).

    python3 docs/make_screenshots.py                 # both
    python3 docs/make_screenshots.py web             # docs/images/web_*.png
    python3 docs/make_screenshots.py docs [--site SITE]   # docs/images/docs_*.png

``docs`` builds the site into a temporary folder unless ``--site`` names a build.
Needs the system's Chromium at /usr/bin/chromium and ``pip install -e ".[web,docs]"``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from site_check import build, serve  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.web import AppConfig, YinshServer  # noqa: E402
from agents.web.browser import launch  # noqa: E402
from yinsh_env import GameRecord, State, write_record  # noqa: E402

OUT = ROOT / "docs" / "images"
#: R F4 A2 ..., M C5 D5 E5 F5 G2 G3 G4 G6, m G5: F4-H6 makes two crossing rows.
CROSSING = "R3/7/4M3/4M4/4M5/2RM5/MMMmM5/9/8/7/3r w move - 0-0 42 0 3"


def midgame(plies: int, seed: int) -> str:
    """A record of a game between two greedy agents, ``plies`` decisions long."""
    state = State()
    agents = [
        make_agent("greedy:noise=0.5", seed=seed),
        make_agent("greedy:noise=0.5", seed=seed + 1),
    ]
    while state.ply < plies and not state.is_terminal:
        state.apply(agents[state.to_act].act(state))
    return write_record(GameRecord.from_state(state, "greedy", "greedy"))


def load(page: Page, text: str) -> None:
    page.fill("#load-text", text)
    page.click("#load")
    page.wait_for_timeout(400)


def click(page: Page, point: str) -> None:
    page.click(f'#layer-hits [data-point="{point}"]', force=True)
    page.wait_for_timeout(300)


def web() -> list[Path]:
    """The web app: an opening, a row choice, the analysis overlay."""
    config = AppConfig(white="human", black="alphabeta", analyst="mcts:sims=1500")
    server = YinshServer("127.0.0.1", 0, config).start()
    with sync_playwright() as p:
        context = launch(p, tempfile.mkdtemp(), width=1040, height=700)
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#layer-hits .hit")
        # The opening: a few rings placed, the legal points marked.
        for point in ("E5", "F7", "G4"):
            click(page, point)
            page.wait_for_function("() => window.yinsh.view.human_to_act")
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "web_opening.png"))
        # A row choice: two rows cross at G5; clicking G5 asks which.
        load(page, CROSSING)
        click(page, "F4")
        click(page, "H6")
        click(page, "G5")
        page.screenshot(path=str(OUT / "web_row_choice.png"))
        # The analysis overlay on a middle game position.
        load(page, midgame(34, seed=4))
        page.check("#overlay")
        page.wait_for_selector("#layer-overlay .analysis", state="attached", timeout=60_000)
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "web_analysis.png"))
        context.close()
    server.stop()
    review_shot()
    return sorted(OUT.glob("web_*.png"))


#: The bundled game the review screenshot shows (docs/guide/review.md reviews it too).
REVIEWED = (
    ROOT / "tests" / "data" / "games" / "boardspace" / "Y-BraveCombo-Dumbot-2026-03-20-0237.sgf"
)


def review_shot() -> Path:
    """A game reviewed in the page: the value graph, marked moves, a blunder's position."""
    config = AppConfig(white="human", black="human", analyst="pretrained:sims=200")
    server = YinshServer("127.0.0.1", 0, config).start()
    path = OUT / "web_review.png"
    with sync_playwright() as p:
        context = launch(p, tempfile.mkdtemp(), width=1040, height=940)
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#layer-hits .hit")
        load(page, REVIEWED.read_text(encoding="utf-8"))
        page.click("#review")
        page.wait_for_selector("#review-graph .review-mark", timeout=600_000)
        blunder = page.locator("#moves a.mark-blunder").first
        blunder.click()
        page.wait_for_selector("#layer-overlay .analysis", state="attached", timeout=60_000)
        page.wait_for_timeout(300)
        page.screenshot(path=str(path))
        context.close()
    server.stop()
    # A palette keeps the tall picture as light as the others (a quarter of the bytes).
    with Image.open(path) as picture:
        picture.convert("RGB").quantize(256).save(path, optimize=True)
    return path


#: Documentation pages and the picture of each.
DOCS_PAGES = {
    "docs_home.png": "index.html",
    "docs_api.png": "api/_generated/yinsh_env.engine.state.html",
}


def docs(site: Path | None) -> list[Path]:
    """The documentation site's landing page and an API page."""
    with tempfile.TemporaryDirectory() as folder:
        site = site or build(Path(folder) / "site")
        with sync_playwright() as p, serve(site) as url:
            context = launch(p, Path(folder) / "profile", width=1200, height=800)
            page = context.new_page()
            for name, path in DOCS_PAGES.items():
                page.goto(url + path)
                page.wait_for_load_state("load")
                page.screenshot(path=str(OUT / name))
            context.close()
    return [OUT / name for name in DOCS_PAGES]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", choices=["web", "docs"], help="default: both")
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    taken = []
    if args.what in (None, "web"):
        taken += web()
    if args.what in (None, "docs"):
        taken += docs(args.site)
    for path in taken:
        shrink(path)
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


def shrink(path: Path) -> None:
    """A palette PNG: a screenshot has few colours, and the README wants small files."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


if __name__ == "__main__":
    main()
