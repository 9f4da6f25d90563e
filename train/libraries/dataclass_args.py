"""A command line made from a dataclass of hyper-parameters, CleanRL's way.

The single-file PPO (:mod:`train.libraries.ppo`) keeps its hyper-parameters in
one dataclass at the top of the file; this module turns it into the command
line, so that a field added there is an option, with its default shown by
``--help``, without a second list to keep in step::

    @dataclass
    class Args:
        minutes: float = option(10.0, number_in(0, 10_000, above=True), "wall-clock budget")
        opponents: tuple[str, ...] = option(("greedy", "random"), agent_spec, "agent specs")

    args = parse(Args, parser_for(Args, "prog", "what it does"), argv)

Each field ``some_name`` is the option ``--some-name``, read by the function
:func:`option` names (which checks it: :func:`agents.infra.cli_args.int_in` and
friends), a tuple default taking one or more values.  ``--recipe FILE``
(:mod:`train.libraries.recipe`) sets the defaults from a YAML file first, so
flags override it.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from train.libraries.recipe import add_recipe_option, parse_with_recipe

T = TypeVar("T")
D = TypeVar("D")


def option(default: T, read: Callable[[str], Any], text: str) -> T:
    """A field: its ``default``, the function that ``read``\\ s (and checks) a value, its help."""
    return dataclasses.field(default=default, metadata={"read": read, "help": text})


def yes_no(text: str) -> bool:
    """An argparse type: ``true``/``false`` (also 1/0, yes/no, on/off)."""
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text[:40]!r}")


def parser_for(cls: type, prog: str, description: str) -> argparse.ArgumentParser:
    """An option for every field of the dataclass ``cls``, its default in ``--help``."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    for field in dataclasses.fields(cls):
        many = isinstance(field.default, tuple)
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            type=field.metadata["read"],
            nargs="+" if many else None,
            default=list(field.default) if many else field.default,  # type: ignore[arg-type]
            help=field.metadata["help"],
        )
    add_recipe_option(parser)
    return parser


def parse(cls: type[D], parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> D:
    """The dataclass ``cls`` of the command line ``argv`` (the process's when None), over
    the defaults of its ``--recipe`` (for the script ``parser.prog`` runs, its last word)."""
    values = vars(parse_with_recipe(parser, argv, parser.prog.split()[-1]))
    values.pop("recipe")
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


__all__ = ["option", "parse", "parser_for", "yes_no"]
