"""Recipes: a library trainer's tuned settings in one YAML file, rl-baselines3-zoo's way.

``configs/ppo.yaml``, ``configs/sb3.yaml`` and ``configs/rllib.yaml`` each hold
one trainer's recipe, so that it is one command instead of twenty flags::

    python -m train.libraries.ppo --recipe configs/ppo.yaml --seed 4
    python -m train.libraries.ppo --recipe ppo --seed 4   # the shipped one, from anywhere

A recipe is a mapping of the script's option names (``learning_rate`` or
``learning-rate``) to values, plus ``recipe:`` naming the script it is for
(``train.libraries.ppo``): a recipe given to another script is refused, and the
AlphaZero trainer's named configs (:mod:`train.config_files`) leave it out.
Its values become the parser's defaults, so every flag on the command line
overrides them.  Each value goes through the option's own check (the same
function that reads the flag), so a recipe holds nothing the command line
would refuse; an unknown key, a key given twice, a bad value or a value of
the wrong shape (a list for a single number) is refused with one line
naming the file and the key.  Read with :func:`train.bounded_yaml.load_yaml`
(no aliases, bounded nesting, duplicate keys refused).  A bare name (``ppo``,
``sb3.yaml``) that is no file where the command runs is a shipped recipe
(:func:`recipe_file`), so a notebook or a run folder elsewhere finds it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from train.bounded_yaml import load_yaml

__all__ = [
    "RECIPE_KEY",
    "add_recipe_option",
    "apply_recipe",
    "parse_with_recipe",
    "recipe_defaults",
    "recipe_file",
    "recipe_for",
]

#: The key naming the script a recipe is for.
RECIPE_KEY = "recipe"
#: A recipe is a page of settings; anything larger is not one.
MAX_BYTES = 64 * 1024
_TRAIN = Path(__file__).resolve().parents[1]
#: Where shipped recipes are: the installed package's copy first, then a checkout's
#: ``configs/`` (where :mod:`train.config_files` looks up named configs too).
RECIPE_DIRS = (_TRAIN / "configs", _TRAIN.parent / "configs")


def recipe_file(name_or_path: str | Path) -> Path:
    """The recipe meant by a path (used as given when it is a file) or by a shipped
    recipe's name (``sb3``, ``sb3.yaml``); the path as given when neither is found,
    for :func:`read_recipe` to name.

    >>> recipe_file("sb3").name, recipe_file("sb3").parent.name
    ('sb3.yaml', 'configs')
    """
    path = Path(name_or_path)
    if path.is_file() or path.parent != Path(".") or path.suffix not in ("", ".yaml"):
        return path
    for directory in RECIPE_DIRS:
        candidate = directory / f"{path.stem}.yaml"
        if candidate.is_file():
            return candidate
    return path


def add_recipe_option(parser: argparse.ArgumentParser) -> None:
    """``--recipe FILE`` on ``parser`` (read by :func:`apply_recipe`, before the flags)."""
    parser.add_argument(
        "--recipe",
        metavar="FILE",
        default=None,
        help="YAML file of this script's settings (configs/ppo.yaml, ...; a shipped one by "
        "name: ppo, sb3, rllib, torchrl); flags override it",
    )


def read_recipe(path: Path) -> dict[str, Any]:
    """The mapping in the recipe file ``path``; ValueError naming it if it is not one."""
    if not path.is_file():
        raise ValueError(f"recipe {str(path)!r} not found")
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"recipe {str(path)!r} is over {MAX_BYTES} bytes: not a recipe")
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"recipe {str(path)!r} is not readable YAML: {problem}") from None
    except ValueError as exc:
        raise ValueError(f"recipe {str(path)!r}: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise ValueError(f"recipe {str(path)!r} is not a mapping of option names to values")
    return data


def recipe_for(path: Path) -> str | None:
    """The script the file ``path`` is a recipe for, None if it is no recipe (or unreadable)."""
    try:
        script = read_recipe(path).get(RECIPE_KEY)
    except (ValueError, OSError):
        return None
    return script if isinstance(script, str) else None


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's options by destination, ``--help`` and ``--recipe`` left out."""
    return {
        action.dest: action
        for action in parser._actions
        if action.option_strings and action.dest not in ("help", RECIPE_KEY)
    }


def _text(value: Any) -> str:
    """A YAML scalar as the command line would have written it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _one(action: argparse.Action, value: Any) -> Any:
    """One value read by the option's own type (as from the command line), choices checked."""
    if isinstance(value, (list, dict)):
        raise ValueError(f"expected one value, got {type(value).__name__}")
    read = action.type if callable(action.type) else str
    try:
        result = read(_text(value))
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        raise ValueError(str(exc) or f"invalid value {value!r}") from None
    if action.choices is not None and result not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise ValueError(f"{result!r} is not one of {choices}")
    return result


def _value(action: argparse.Action, value: Any) -> Any:
    """``value`` as the option ``action`` would hold it after parsing."""
    if action.nargs == 0:  # a switch: store_true / store_false
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value == bool(action.const)
    if value is None:
        if action.default is not None:
            raise ValueError("expected a value, got null")
        return None
    if action.nargs in ("+", "*"):
        values = value if isinstance(value, list) else [value]
        if action.nargs == "+" and not values:
            raise ValueError("expected at least one value")
        return [_one(action, item) for item in values]
    return _one(action, value)


def recipe_defaults(parser: argparse.ArgumentParser, path: Path, script: str) -> dict[str, Any]:
    """The option defaults the recipe at ``path`` sets for ``script``'s ``parser``;
    ValueError naming the file and the key for anything the command line would refuse."""
    data = read_recipe(path)
    if data.get(RECIPE_KEY) != script:
        found = data.get(RECIPE_KEY)
        what = f"is for {found!r}" if found is not None else f"has no '{RECIPE_KEY}:' key"
        raise ValueError(f"recipe {str(path)!r} {what}, not {script!r}")
    actions = _actions(parser)
    defaults: dict[str, Any] = {}
    for key, value in data.items():
        if key == RECIPE_KEY:
            continue
        dest = key.replace("-", "_")
        action = actions.get(dest)
        if action is None:
            raise ValueError(f"recipe {str(path)!r}: unknown key {key!r} (no option --{key})")
        if dest in defaults:
            raise ValueError(f"recipe {str(path)!r}: key {key!r} given twice")
        try:
            defaults[dest] = _value(action, value)
        except ValueError as exc:
            raise ValueError(f"recipe {str(path)!r}: key {key!r}: {exc}") from None
    return defaults


def apply_recipe(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, script: str
) -> str | None:
    """Set ``parser``'s defaults from the ``--recipe FILE`` of ``argv`` (the process's
    arguments when None), so that its flags override the file; one error line naming the
    file and key if the recipe is bad.  The recipe's path, or None without one."""
    found = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    found.add_argument("--recipe", default=None)
    known, _ = found.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if known.recipe is None:
        return None
    try:
        parser.set_defaults(**recipe_defaults(parser, recipe_file(known.recipe), script))
    except ValueError as exc:
        parser.error(str(exc))
    return str(known.recipe)


def parse_with_recipe(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, script: str
) -> argparse.Namespace:
    """``parser.parse_args(argv)`` over the defaults of ``argv``'s ``--recipe`` (if any)."""
    applied = apply_recipe(parser, argv, script)
    args = parser.parse_args(argv)
    if args.recipe != applied:  # an abbreviation (--rec FILE) the recipe's reader missed
        parser.error("write --recipe FILE in full")
    return args
