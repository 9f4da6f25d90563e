"""Headless Chromium for the page's tests and screenshots: the system's browser, never a download.

Playwright drives the Debian ``chromium`` package (``apt-get install chromium``;
``.ci/install`` does it); ``playwright install`` is never needed.  The flags
keep the browser from reaching the network on its own (updates, sync, QUIC).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_chromium() -> str | None:
    """The system's Chromium: ``/usr/bin/chromium``, else ``chromium`` on the PATH."""
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def launch(playwright: Any, user_data_dir: str | Path, width: int = 1100, height: int = 800) -> Any:
    """A persistent browser context in a fresh profile folder (Playwright's sync API)."""
    executable = find_chromium()
    if executable is None:
        raise ValueError("no Chromium found at /usr/bin/chromium or on the PATH")
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=executable,
        args=list(CHROMIUM_ARGS),
        headless=True,
        viewport={"width": width, "height": height},
    )
