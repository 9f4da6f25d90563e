"""Check a pip constraints file, line by line, before pip reads it.

``.ci/install`` runs this first: pip meets a malformed line (``numpy==2.4.6 ;
python_version >``) with its internal ``InvalidMarker`` traceback, naming no
line.  This names the file, the line number and the line, in one line on
stderr, and exits 1; a file it can read is left to pip (exit 0).

It runs in the bare Python that ``.ci/install`` installs into, before anything
is installed, so it needs no package: it uses ``packaging`` where that Python
has it, else the copy pip carries, else a careful parse of what a constraints
file holds (``NAME[extras] SPECIFIERS ; MARKER``, or ``NAME @ URL``).

Usage: ``python3 .ci/check_constraints.py .ci/constraints.txt``
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

#: A comment as pip reads one: ``#`` at the start of a line or after a space.
COMMENT = re.compile(r"(^|\s+)#.*$")
#: What pip's copy of ``packaging``, or ``packaging``, would answer: None or the problem.
Check = Callable[[str], "str | None"]


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(number of the first physical line, the line), comments and backslash joins done."""
    start = 0
    parts: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        if raw.endswith("\\") and not COMMENT.search(raw):
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        line = COMMENT.sub("", "".join(parts)).strip()
        parts = []
        if line:
            yield start, line
    if parts:
        line = COMMENT.sub("", "".join(parts)).strip()
        if line:
            yield start, line


def requirement_part(line: str) -> str:
    """The requirement of a line, without pip's options (``--hash=...``); '' for an option line."""
    words = line.split()
    for i, word in enumerate(words):
        if word.startswith("-"):
            return " ".join(words[:i])
    return line


def packaging_check() -> Check | None:
    """A check by ``packaging`` (or pip's copy of it); None where neither imports."""
    for name in ("packaging.requirements", "pip._vendor.packaging.requirements"):
        try:
            requirements: Any = importlib.import_module(name)
            break
        except ImportError:
            continue
    else:
        return None

    def check(text: str) -> str | None:
        try:
            requirement = requirements.Requirement(text)
            if requirement.marker is not None:
                requirement.marker.evaluate({"extra": ""})
        except requirements.InvalidRequirement as exc:
            return str(exc).splitlines()[0] if str(exc) else "not a requirement"
        except Exception as exc:  # a marker that parses but cannot be evaluated
            return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else exc!r}"
        return None

    return check


# --- the careful parse, for a Python without packaging or pip --------------------------

NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
SPECIFIER = r"(?:===|~=|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"
REQUIREMENT = re.compile(
    rf"\s*{NAME}\s*(?:\[\s*(?:{NAME}(?:\s*,\s*{NAME})*)?\s*\])?\s*"
    rf"(?:@\s*\S+\s*|\(?\s*(?:{SPECIFIER}(?:\s*,\s*{SPECIFIER})*)?\s*\)?)\s*"
)
MARKER_VARIABLES = {
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
    "os.name",
    "sys.platform",
    "platform.version",
    "platform.machine",
    "platform.python_implementation",
    "python_implementation",
}
MARKER_TOKEN = re.compile(
    r"\s*(?:(?P<string>'[^']*'|\"[^\"]*\")|(?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)"
    r"|(?P<paren>[()])|(?P<bool>and\b|or\b)|(?P<word>[A-Za-z_][A-Za-z0-9_.]*))"
)


def _marker_tokens(text: str) -> list[tuple[str, str]]:
    tokens, at = [], 0
    while text[at:].strip():
        match = MARKER_TOKEN.match(text, at)
        if match is None or match.lastgroup is None:
            raise ValueError(f"unexpected {text[at:].strip()[:20]!r} in the marker")
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        at = match.end()
    return tokens


def _marker(tokens: list[tuple[str, str]], at: int) -> int:
    """Parse ``atom (and|or atom)*`` from ``tokens[at]``; the index after it."""
    at = _marker_atom(tokens, at)
    while at < len(tokens) and tokens[at][0] == "bool":
        at = _marker_atom(tokens, at + 1)
    return at


def _marker_atom(tokens: list[tuple[str, str]], at: int) -> int:
    if at < len(tokens) and tokens[at] == ("paren", "("):
        at = _marker(tokens, at + 1)
        if at >= len(tokens) or tokens[at] != ("paren", ")"):
            raise ValueError("a '(' without its ')' in the marker")
        return at + 1
    for position in range(3):
        if at + position >= len(tokens):
            raise ValueError("the marker ends too soon (expected a variable or quoted string)")
        kind, value = tokens[at + position]
        if position == 1:
            if kind != "op":
                raise ValueError(f"expected a comparison in the marker, got {value!r}")
        elif kind == "word" and value not in MARKER_VARIABLES:
            raise ValueError(f"unknown marker variable {value!r}")
        elif kind not in ("word", "string"):
            raise ValueError(f"expected a marker variable or quoted string, got {value!r}")
    return at + 3


def careful_check(text: str) -> str | None:
    """The problem with a requirement line, by a parse that needs no package; None if fine."""
    requirement, semicolon, marker = text.partition(";")
    if not REQUIREMENT.fullmatch(requirement):
        return "not NAME[extras] followed by version specifiers or @ URL"
    if not semicolon:
        return None
    try:
        tokens = _marker_tokens(marker)
        if not tokens:
            raise ValueError("nothing after ';' (expected a marker)")
        if _marker(tokens, 0) != len(tokens):
            raise ValueError("unexpected text after the marker")
    except ValueError as exc:
        return str(exc)
    return None


def problems(text: str, check: Check) -> Iterator[tuple[int, str, str]]:
    """(line number, line, problem) for every line ``check`` refuses."""
    for number, line in logical_lines(text):
        requirement = requirement_part(line)
        if requirement:
            problem = check(requirement)
            if problem is not None:
                yield number, line, problem


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_constraints.py CONSTRAINTS_FILE", file=sys.stderr)
        return 2
    path = argv[0]
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{path}: cannot be read: {exc}", file=sys.stderr)
        return 1
    check = packaging_check() or careful_check
    for number, line, problem in problems(text, check):
        shown = line if len(line) <= 120 else line[:117] + "..."
        print(
            f"{path}: line {number}: {shown!r}: not a valid requirement: {problem}", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
