"""YAML read with bounded work, for configs and command-line overrides.

``yaml.safe_load`` recurses once per nesting level (deep nesting raises
``RecursionError``) and shares aliased nodes, so a few bytes of ``&a`` /
``*a`` expand to exponentially many values when checked or printed.
Configs need neither: :func:`load_yaml` rejects aliases and nesting deeper
than :data:`MAX_DEPTH` from the event stream (iterative, linear in the text)
before building anything.  It also refuses a key given twice in one mapping,
naming it and its lines: ``safe_load`` keeps the last one without a word, so
a setting written twice would silently lose one of them.  And it refuses
the numbers YAML 1.1 reads as something other than what they look like
(``3_0`` is 30, ``1:30`` is 90, ``010`` is 8, ``0x10`` is 16), naming the
line: quote them to mean text, or write plain digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

#: Deeper than any config (sections, then lists of lists such as a temperature schedule).
MAX_DEPTH = 16


@dataclass
class _Mapping:
    """A mapping being read: the keys seen (-> their line), and whether a key comes next."""

    keys: dict[str, int] = field(default_factory=dict)
    key_next: bool = True


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``; ValueError for aliases, deep nesting or a key given
    twice in a mapping (naming the key and both lines), YAMLError if malformed."""
    stack: list[_Mapping | None] = []  # one entry per open collection (None: a sequence)
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise ValueError(f"YAML aliases ('*{event.anchor}') are not supported in configs")
        if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            _check_key(stack[-1] if stack else None, event)
        if isinstance(event, yaml.ScalarEvent) and event.style is None:
            _check_number(event)
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            stack.append(_Mapping() if isinstance(event, yaml.MappingStartEvent) else None)
            if len(stack) > MAX_DEPTH:
                raise ValueError(f"YAML nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            stack.pop()
    return yaml.safe_load(text)


#: Plain scalars YAML 1.1 reads as numbers they do not look like: digits with
#: underscores, base-60 (``1:30``), octal (``010``), hexadecimal and binary.
_SURPRISING_NUMBER = re.compile(
    r"[-+]?(?:[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?|\.[0-9_]*_[0-9_]*|[0-9][0-9_]*(?::[0-5]?[0-9])+"
    r"(?:\.[0-9_]*)?|0[0-7_]+|0x[0-9a-fA-F_]+|0b[01_]+)"
)


def _check_number(event: yaml.ScalarEvent) -> None:
    if _SURPRISING_NUMBER.fullmatch(event.value):
        read = yaml.safe_load(event.value)
        raise ValueError(
            f"{event.value[:40]!r} on line {event.start_mark.line + 1} reads as "
            f"{read!r} in YAML: write plain digits, or quote it for text"
        )


def _check_key(mapping: _Mapping | None, event: yaml.Event) -> None:
    """Note a node read in ``mapping``: a key, refused if seen before, or its value."""
    if mapping is None:
        return
    if mapping.key_next and isinstance(event, yaml.ScalarEvent):
        line = event.start_mark.line + 1
        if event.value in mapping.keys:
            first = mapping.keys[event.value]
            raise ValueError(
                f"key {event.value[:60]!r} given twice (lines {first} and {line}); keep one"
            )
        mapping.keys[event.value] = line
    mapping.key_next = not mapping.key_next
