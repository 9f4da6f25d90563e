"""Named configs: ``yinsh-train --config quick`` finds ``configs/quick.yaml`` anywhere.

``configs/`` at the project root is the one source of the shipped configs.  A
wheel installs the same files as ``train/configs/`` (a setuptools
``package-dir`` mapping in ``pyproject.toml``, no copy in the tree), so a name
resolves both in a checkout and in an installed package; a path to a file
always wins.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from train.config import Config, ConfigError, load_config

_PACKAGE = Path(__file__).resolve().parent
#: Where named configs are looked up: installed package first, then a checkout.
CONFIG_DIRS = (_PACKAGE / "configs", _PACKAGE.parent / "configs")


def config_names() -> list[str]:
    """The names of the shipped configs (``quick``, ``default``, ...)."""
    return sorted({p.stem for d in CONFIG_DIRS if d.is_dir() for p in d.glob("*.yaml")})


def resolve_config(name_or_path: str | Path) -> Path:
    """The config file meant by a path (used as given) or a name (``quick``, ``quick.yaml``)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if path.parent == Path(".") and path.suffix in ("", ".yaml"):
        for directory in CONFIG_DIRS:
            candidate = directory / f"{path.stem}.yaml"
            if candidate.is_file():
                return candidate
    names = ", ".join(config_names()) or "none found"
    raise ConfigError(f"no config file {str(name_or_path)!r} (named configs: {names})")


def config_or_exit(
    parser: argparse.ArgumentParser, name_or_path: str | Path, overrides: Sequence[str] = ()
) -> Config:
    """The config a command line names, with its overrides; a one-line parser error if bad."""
    try:
        return load_config(resolve_config(name_or_path), list(overrides))
    except ConfigError as exc:
        parser.error(str(exc))
