"""Named configs: ``yinsh-train --config quick`` finds ``configs/quick.yaml`` anywhere.

``configs/`` at the project root is the one source of the shipped configs.  A
wheel installs the same files as ``train/configs/`` (a setuptools
``package-dir`` mapping in ``pyproject.toml``, no copy in the tree), so a name
resolves both in a checkout and in an installed package; a path to a file
always wins.  The RL libraries' recipes beside them (``configs/ppo.yaml``, a
``recipe:`` key naming their script: :mod:`train.libraries.recipe`) are no
trainer configs: left out of the names, and refused by name with the command
that runs them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from train.config import Config, ConfigError, load_config
from train.libraries.recipe import RECIPE_DIRS, recipe_for

#: Where named configs are looked up: installed package first, then a checkout (the
#: folders that hold the shipped recipes too).
CONFIG_DIRS = RECIPE_DIRS


def config_names() -> list[str]:
    """The names of the shipped configs (``quick``, ``default``, ...)."""
    found = {p for d in CONFIG_DIRS if d.is_dir() for p in d.glob("*.yaml")}
    return sorted({p.stem for p in found if recipe_for(p) is None})


def resolve_config(name_or_path: str | Path) -> Path:
    """The config file meant by a path (used as given) or a name (``quick``, ``quick.yaml``)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if path.parent == Path(".") and path.suffix in ("", ".yaml"):
        for directory in CONFIG_DIRS:
            candidate = directory / f"{path.stem}.yaml"
            script = recipe_for(candidate) if candidate.is_file() else None
            if script is not None:
                raise ConfigError(
                    f"{str(name_or_path)!r} is a recipe of {script}, not a trainer config: "
                    f"python -m {script} --recipe {candidate}"
                )
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
