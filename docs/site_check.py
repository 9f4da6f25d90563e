"""Build the documentation site, serve it, and find its broken internal links.

Shared by tests/release/test_docs.py and docs/make_screenshots.py.  ``build`` runs the
command CI runs (warnings are errors, every cross-reference must resolve);
``broken_links`` checks every ``href`` and ``src`` of every page that stays
inside the site, anchors included, without the network (``linkcheck`` would
fetch the outside world).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

DOCS = Path(__file__).resolve().parent
#: The build CI runs, less the output folder.
COMMAND = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html"]


def build(out: Path, timeout: float = 1800) -> Path:
    """Build the site into ``out``; RuntimeError with Sphinx's output if it fails."""
    done = subprocess.run(
        [*COMMAND, str(DOCS), str(out)], capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"sphinx failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return out


class _Page(HTMLParser):
    """The ids a page defines and the URLs it points to."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> list[str]:
    """``page: link`` for every link to a missing file or anchor inside ``site``."""
    site = site.resolve()
    pages = {path: _parse(path) for path in sorted(site.rglob("*.html"))}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site)}: {link}"
            if not target.is_file() or site.resolve() not in target.parents:
                broken.append(where)
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(where)
    return broken


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` over HTTP on a free local port; yields its base URL."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
