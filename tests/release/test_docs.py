"""The documentation site builds with warnings as errors, its internal links resolve,
and its landing page and an API page render in headless Chromium.

The site is built once per test session (xdist workers share it through a lock),
or taken from ``YINSH_DOCS_SITE`` where CI (``.ci/run``) has just built it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.web.browser import find_chromium, launch

pytest.importorskip("sphinx", reason='the docs need sphinx: pip install -e ".[docs]"')
pytest.importorskip("myst_nb", reason='the docs need myst-nb: pip install -e ".[docs]"')
filelock = pytest.importorskip("filelock")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))

from site_check import broken_links, build, serve  # noqa: E402

#: The site is built once for the module (a minute or more): not in the edit loop.
pytestmark = pytest.mark.slow

#: Pages every build has, and a text each must show.
PAGES = {
    "index.html": "YINSH",
    "api/index.html": "API reference",
    "api/_generated/yinsh_env.engine.state.html": "yinsh_env.engine.state.State.apply",
    "api/_generated/train.config_schema.html": "PositiveInt",
    "guide/install.html": "installs a CPU build of PyTorch",
    "guide/protocol.html": "yinsh-engine",
    "guide/review.html": "yinsh-review",
    "guide/pretrained.html": "pretrained:time=0.1",
    "studies/shipped-networks.html": "long_curve.png",
    "studies/training-runs.html": "long2_curve.png",
    "studies/levers.html": "search_value_weight",
    "studies/distillation.html": "train.tools.distill",
    "studies/speed.html": "bench_limit",
    "api/modules.html": "Every module",
    "tutorials.html": "How they are rendered here",
    "notebooks/01_quickstart.html": "MaskablePPO",
    "notebooks/02_train_and_evaluate.html": "pretrained",
}


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("YINSH_DOCS_SITE")
    if given:
        return Path(given)
    # This run's own folder, shared by its xdist workers (their basetemps' parent);
    # never a folder earlier runs or other checkouts built a site into.
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "docs-site"
    with filelock.FileLock(str(shared / "docs-site.lock")):
        if not (out / "index.html").is_file():
            build(out)
    return out


def test_every_page_is_built_with_its_content(site: Path) -> None:
    missing = [page for page in PAGES if not (site / page).is_file()]
    assert not missing, f"pages not built: {missing}"
    for page, text in PAGES.items():
        assert text in (site / page).read_text(encoding="utf-8"), f"{page} lacks {text!r}"


def test_the_api_pages_document_every_module(site: Path) -> None:
    sources = [
        path.relative_to(ROOT).with_suffix("")
        for package in ("yinsh_env", "agents", "train")
        for path in (ROOT / package).rglob("*.py")
    ]
    names = [".".join(p.parts[:-1] if p.name == "__init__" else p.parts) for p in sources]
    missing = [n for n in names if not (site / "api" / "_generated" / f"{n}.html").is_file()]
    assert len(names) > 80
    assert not missing, f"modules without an API page: {missing}"


def test_the_notebooks_show_their_outputs(site: Path) -> None:
    for name in ("01_quickstart",):
        html = (site / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
        boards = re.findall(r'<img [^>]*src="(\.\./_images/[0-9a-f]+\.svg)"', html)
        assert len(boards) >= 3, f"{name}: the boards are missing"
        assert all((site / "notebooks" / board).is_file() for board in boards)
        assert html.count('class="cell_output') >= 5, f"{name}: the outputs are missing"


def test_no_internal_link_is_broken(site: Path) -> None:
    assert not broken_links(site)


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a> <a href="sub/page.html#gone">anchor</a>'
        ' <img src="missing.png"> <a href="https://example.org/x">outside</a> <a href="#">top</a>'
    )
    page = '<h1 id="here">x</h1><a href="../index.html">up</a>'
    (tmp_path / "sub" / "page.html").write_text(page)
    assert broken_links(tmp_path) == ["index.html: sub/page.html#gone", "index.html: missing.png"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if find_chromium() is None:
        pytest.skip("no Chromium at /usr/bin/chromium: apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the web extra")
    with sync_api.sync_playwright() as playwright:
        context = launch(playwright, tmp_path_factory.mktemp("chromium-docs"))
        context.set_default_timeout(120_000)  # generous: Chromium on a loaded machine
        yield context
        context.close()


@pytest.mark.parametrize(
    ("page", "heading"),
    [
        ("index.html", "yinsh"),
        ("api/_generated/yinsh_env.engine.state.html", "yinsh_env.engine.state"),
    ],
)
def test_pages_render_in_chromium(site: Path, browser: Any, page: str, heading: str) -> None:
    failed: list[str] = []
    tab = browser.new_page()
    tab.on("requestfailed", lambda request: failed.append(request.url))
    tab.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    tab.on("pageerror", lambda error: failed.append(str(error)))
    try:
        with serve(site) as url:
            tab.goto(url + page)
            tab.wait_for_load_state("load")
            assert tab.locator("article h1").first.inner_text().startswith(heading)
            assert tab.locator(".sidebar-tree a").count() > 5  # furo's navigation
            # The theme's stylesheet applied: the sidebar sits beside the article.
            sidebar = tab.locator(".sidebar-drawer").bounding_box()
            article = tab.locator("article").bounding_box()
            assert sidebar and article and sidebar["x"] + sidebar["width"] <= article["x"] + 1
    finally:
        tab.close()
    assert not failed, f"{page}: failed requests or script errors {failed}"
