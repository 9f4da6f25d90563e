"""Short names for agents in a match: ``mine=net:path=runs/x/checkpoints/iter_000472.pt``.

An entry of :func:`~agents.evaluation.arena.run_arena` (and ``yinsh-eval``'s
arguments, ``--rate`` included) is a spec, or ``NAME=SPEC``: the name is what
tables, records and ratings show, the spec what is built and stored beside it
in the results database.  Tables stay as narrow as the names.

The grammar keeps every spec meaning what it meant.  A spec names its agent
before any ``=`` (``name:key=value,...``; ``py:MODULE:CALLABLE,...``), so an
entry whose first ``:`` or ``=`` is an ``=`` cannot be a spec: the text before
that ``=`` is a name.  ``net:path=a=b.pt`` is a spec (its ``:`` comes first);
``mine=net:path=a=b.pt`` names it ``mine``.  A name starts with a letter and
holds letters, digits, ``_``, ``.`` and ``-`` (:data:`NAME_PATTERN`).

Agents without a name are shown by their spec, ``#2``, ``#3`` appended to
repeats (a self-play sanity check); a name given twice, or equal to another
agent's spec, is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.params import clip

#: What a name may be: a letter, then letters, digits, ``_``, ``.``, ``-``.
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


class AgentNameError(ValueError):
    """A ``NAME=SPEC`` entry with a bad or repeated name (the message quotes the entry)."""


def split_name(entry: str) -> tuple[str | None, str]:
    """``("mine", SPEC)`` for ``"mine=SPEC"``; ``(None, entry)`` for a plain spec.

    Raises :class:`AgentNameError` for an empty or malformed name, a missing
    spec, or a spec that is itself ``NAME=SPEC``.
    """
    text = entry.strip()
    cut = re.search(r"[:=]", text)
    if cut is None or cut.group() == ":":
        return None, text
    name, spec = text[: cut.start()].strip(), text[cut.end() :].strip()
    shown = clip(repr(text), 80)
    if not name:
        raise AgentNameError(f"{shown}: no name before '=' (give NAME=SPEC, or a spec alone)")
    if not NAME_PATTERN.fullmatch(name):
        raise AgentNameError(
            f"{shown}: bad agent name {clip(repr(name), 40)} (a letter, then letters, "
            "digits, '_', '.' or '-'); a spec names its agent before any '=', as name:key=value"
        )
    if not spec:
        raise AgentNameError(f"{shown}: no spec after {name}=")
    if split_name(spec)[0] is not None:
        raise AgentNameError(f"{shown}: one name per agent (NAME=SPEC)")
    return name, spec


def agent_labels(names: Sequence[str | None], defaults: Sequence[str]) -> list[str]:
    """What each agent is shown as: its name, else its default (the spec) with ``#k``
    appended to repeats.  :class:`AgentNameError` for a name given twice or equal to
    another agent's default."""
    given = [n for n in names if n is not None]
    for k, name in enumerate(names):
        if name is None:
            continue
        if given.count(name) > 1:
            raise AgentNameError(f"agent name {name!r} is given to {given.count(name)} agents")
        others = [d for j, d in enumerate(defaults) if j != k and names[j] is None]
        if name in others:
            raise AgentNameError(f"agent name {name!r} is also another agent's spec")
    labels: list[str] = []
    for name, default in zip(names, defaults):
        label, k = name or default, 1
        while name is None and (label in labels or label in given):
            k += 1
            label = f"{default}#{k}"
        labels.append(label)
    return labels
