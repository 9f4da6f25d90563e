"""SGF syntax as boardspace.net writes it: one game of nodes of properties.

:func:`parse_nodes` splits the text into nodes (no variations), each a list of
:class:`SgfProperty` that remembers its line, so :mod:`yinsh_env.records.sgf` can name
the line of any bad command; :class:`SourceText` quotes that line.
"""

from __future__ import annotations

from dataclasses import dataclass

from yinsh_env.engine.errors import RecordError, line_error

__all__ = ["SgfProperty", "SourceText", "escape_value", "parse_nodes"]


@dataclass(frozen=True)
class SgfProperty:
    """One SGF property value and the line it starts on."""

    ident: str
    value: str
    line: int


class SourceText:
    """The file's lines, for error messages that quote them."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

    def error(self, line: int, problem: object) -> RecordError:
        quoted = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return line_error(line, quoted, problem)


def parse_nodes(text: str, src: SourceText) -> list[list[SgfProperty]]:
    """Split an SGF game into nodes of properties (one game, no variations)."""
    if "(" not in text:
        raise RecordError("line 1: not an SGF game (no '(;' found)")
    nodes: list[list[SgfProperty]] = []
    line, i, n, depth, opened = 1, 0, len(text), 0, False
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch.isspace():
            pass
        elif ch == "(":
            if opened:
                raise src.error(line, "variations are not supported")
            opened, depth = True, depth + 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise src.error(line, "unbalanced ')'")
        elif ch == ";":
            if not opened or depth == 0:
                raise src.error(line, "node outside the game's '(...)'")
            nodes.append([])
        elif ch.isalpha() and ch.isupper():
            start = i
            while i < n and text[i].isalnum():
                i += 1
            ident = text[start:i]
            if not nodes:
                raise src.error(line, f"property {ident} before the first node")
            values = 0
            while True:
                while i < n and text[i] in " \t\r":
                    i += 1
                if i >= n or text[i] != "[":
                    break
                value, i, end_line = _read_value(text, i + 1, line, src)
                nodes[-1].append(SgfProperty(ident, value, line))
                line, values = end_line, values + 1
            if not values:
                raise src.error(line, f"property {ident} without a value")
            continue
        else:
            raise src.error(line, f"unexpected character {ch!r}")
        i += 1
    if depth != 0:
        raise src.error(line, "the file ends inside the game (missing ')')")
    return nodes


def _read_value(text: str, i: int, line: int, src: SourceText) -> tuple[str, int, int]:
    """Read a property value from just after '['; returns (value, next index, line)."""
    start_line = line
    out: list[str] = []
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "]":
            return "".join(out), i + 1, line
        if ch == "\\" and i + 1 < n:
            i += 1
            ch = text[i]
            if ch == "\n":  # soft line break
                line += 1
                i += 1
                continue
        if ch == "\n":
            line += 1
        out.append(ch)
        i += 1
    raise src.error(start_line, "unterminated property value (missing ']')")


def escape_value(value: str) -> str:
    """A property value with ``\\`` and ``]`` escaped."""
    return value.replace("\\", "\\\\").replace("]", "\\]")
