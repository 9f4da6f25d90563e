"""The code's version, as recorded with results: package version and git commit."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``yinsh 0.1.0`` plus ``+g<commit>`` (and ``.dirty``) when run from a git checkout."""
    try:
        version = importlib.metadata.version("yinsh")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    text = f"yinsh {version}"
    if not (ROOT / ".git").exists():
        return text
    try:
        commit = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return text
    return f"{text}+g{commit}{'.dirty' if dirty else ''}"


def _git(*args: str) -> str:
    """One git command's output in this checkout (bounded: 5 s)."""
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=5, check=True
    ).stdout.strip()


def machine() -> str:
    """The CPU model and core count, as recorded with measurements."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"
