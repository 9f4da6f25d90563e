"""YAML read with bounded work, for configs and command-line overrides.

``yaml.safe_load`` recurses once per nesting level (deep nesting raises
``RecursionError``) and shares aliased nodes, so a few bytes of ``&a`` /
``*a`` expand to exponentially many values when checked or printed.
Configs need neither: :func:`load_yaml` rejects aliases and nesting deeper
than :data:`MAX_DEPTH` from the event stream (iterative, linear in the text)
before building anything.
"""

from __future__ import annotations

from typing import Any

import yaml

#: Deeper than any config (sections, then lists of lists such as a temperature schedule).
MAX_DEPTH = 16


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``; ValueError for aliases or deep nesting, YAMLError if malformed."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise ValueError(f"YAML aliases ('*{event.anchor}') are not supported in configs")
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"YAML nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
    return yaml.safe_load(text)
