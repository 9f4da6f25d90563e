"""A game record: what is needed to replay a game exactly and to know how it ended.

:class:`GameRecord` holds the variant, the players, the :class:`Result`, the
:class:`Termination` (why the game ended), free tags, and every decision in the
project's action notation.  Formats that read and write records build on it:
our PGN-like text (:mod:`yinsh_env.records.record_text`), boardspace ``.sgf``
(:mod:`yinsh_env.records.sgf`) and BGA ``.json`` (:mod:`yinsh_env.records.bga`);
:mod:`yinsh_env.records.formats` picks one by file suffix.

Results: ``W``, ``B``, ``draw`` or ``*`` (unfinished).  Terminations: by the
rules ``rings`` (a player removed the winning ring), ``pool`` (the marker pool
ran out), ``passes`` (two passes in a row); otherwise ``resign``, ``timeout``,
``forfeit``, ``agreement`` (a draw), ``adjudication`` or ``unfinished``.  A
game that ended by the rules must record that result; a game that did not
(resigned, timed out, forfeited, unfinished) must not claim a rules ending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, TypeVar

from yinsh_env.engine.actions import action_to_str, str_to_action
from yinsh_env.engine.errors import IllegalActionError, NotationError, RecordError
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import DEFAULT_RINGS_TO_WIN, RINGS_PER_PLAYER, Result, Termination

__all__ = [
    "RESERVED_KEYS",
    "RESULTS",
    "RULE_TERMINATIONS",
    "TERMINATIONS",
    "VARIANTS",
    "GameRecord",
    "check_tag",
    "outcome_problem",
    "parse_variant",
    "push_ply",
    "variant_name",
]

#: Every result a record may give (equal to ``'W'``, ``'B'``, ``'draw'``, ``'*'``).
RESULTS: Final = tuple(Result)
#: A UTF-8 byte order mark, as some editors write it: ignored at the start of a record.
BOM: Final = "\ufeff"
#: Ways a game ends by the rules (the replayed position shows them).
RULE_TERMINATIONS: Final = tuple(t for t in Termination if t.by_rules)
#: Every termination a record may give.
TERMINATIONS: Final = tuple(Termination)
E = TypeVar("E", bound=Enum)

VARIANTS: Final = {"standard": 3, "blitz": 1}
RESERVED_KEYS: Final = ("Variant", "White", "Black", "Result", "Termination")
_TAG_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


def variant_name(rings_to_win: int) -> str:
    """``'standard'``, ``'blitz'`` or ``'rings=N'`` for a number of rings to win."""
    for name, rings in VARIANTS.items():
        if rings == rings_to_win:
            return name
    return f"rings={rings_to_win}"


def parse_variant(text: str) -> int:
    """Rings to win named by a variant (``standard``, ``blitz``, ``rings=N``)."""
    key = text.strip().lower()
    if key in VARIANTS:
        return VARIANTS[key]
    match = re.fullmatch(r"rings\s*=\s*([0-9]+)", key)
    if match and 1 <= int(match.group(1)) <= RINGS_PER_PLAYER:
        return int(match.group(1))
    raise RecordError(
        f"unknown variant {text!r} (expected standard, blitz or rings=N with N in "
        f"1..{RINGS_PER_PLAYER})"
    )


@dataclass
class GameRecord:
    """One game: variant, players, result, termination, actions and tags.

    ``actions`` are in notation, normalised on creation (``'e5-e8'`` becomes
    ``'E5-E8'``; action indices are accepted too).  Creating a record checks
    its fields, not the game: :meth:`replay` checks that the actions are legal
    and that the result agrees with the final position.

    >>> from yinsh_env import GameRecord
    >>> record = GameRecord(white="alice", black="bob", actions=["e5", "f6"])
    >>> record.actions, record.result
    (['E5', 'F6'], <Result.UNFINISHED: '*'>)
    >>> record.replay().to_text()
    '4/7/8/9/4R5/4r4/10/9/8/7/4 w place - 0-0 51 0 3'
    """

    rings_to_win: int = DEFAULT_RINGS_TO_WIN
    white: str = "?"
    black: str = "?"
    result: Result = Result.UNFINISHED
    termination: Termination = Termination.UNFINISHED
    actions: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.rings_to_win, bool) or not isinstance(self.rings_to_win, int):
            raise RecordError(f"rings_to_win must be an integer, got {self.rings_to_win!r}")
        if not 1 <= self.rings_to_win <= RINGS_PER_PLAYER:
            raise RecordError(f"rings_to_win must be in 1..{RINGS_PER_PLAYER}")
        for role in ("white", "black"):
            if not isinstance(getattr(self, role), str):
                raise RecordError(f"{role} must be a string, got {getattr(self, role)!r}")
        # Strings are accepted (``result="W"``) and stored as the enums.
        self.result = _member(Result, self.result, "result")
        self.termination = _member(Termination, self.termination, "termination")
        self.actions = [_normalise(a, ply) for ply, a in enumerate(self.actions, 1)]
        self.tags = dict(self.tags)
        for key, value in self.tags.items():
            check_tag(key, value)

    @property
    def variant(self) -> str:
        return variant_name(self.rings_to_win)

    @classmethod
    def from_state(
        cls,
        state: State,
        white: str = "?",
        black: str = "?",
        *,
        actions: list[str] | list[int] | None = None,
        result: Result | str | None = None,
        termination: Termination | str | None = None,
        **tags: str,
    ) -> GameRecord:
        """The record of the game that led to ``state``.

        The actions are ``state.actions`` unless given: a copied state
        (``state.copy()``) has no history, so pass the list kept elsewhere.
        The result and termination default to what the position shows
        (``'unfinished'`` while playing); give them for a game that ended
        otherwise, e.g. ``result='B', termination='resign'``.  Raises
        :class:`RecordError` when the actions do not lead to ``state`` or the
        result contradicts it.

        >>> from yinsh_env import GameRecord, State
        >>> state = State().apply_all(["E5", "F6"])
        >>> GameRecord.from_state(state, "alice", "bob", result="B", termination="resign")
        GameRecord(rings_to_win=3, white='alice', black='bob', result=<Result.BLACK_WINS: 'B'>, ...)
        """
        if actions is None:
            if len(state.actions) != state.ply:
                raise RecordError(
                    f"the state holds {len(state.actions)} of its {state.ply} actions "
                    "(copy() drops the history); pass actions=[...]"
                )
            actions = state.actions
        if termination is None:
            termination = state.end_reason or Termination.UNFINISHED
        if result is None:
            result = state.result
        record = cls(
            rings_to_win=state.rings_to_win,
            white=white,
            black=black,
            result=_member(Result, result, "result"),
            termination=_member(Termination, termination, "termination"),
            actions=list(actions),  # type: ignore[arg-type]  # ints are normalised
            tags=tags,
        )
        final = record.replay()
        if final.key() != state.key():
            raise RecordError(
                f"the {len(record.actions)} actions lead to {final.to_text()!r}, "
                f"not to the given state {state.to_text()!r}"
            )
        return record

    def replay(self) -> State:
        """Replay the game with the checked rules and return the final state.

        Raises :class:`RecordError` naming the ply and the action for an
        illegal action, or naming the problem when the recorded result or
        termination contradicts the final position.
        """
        state = State(rings_to_win=self.rings_to_win)
        for ply, action in enumerate(self.actions, 1):
            push_ply(state, ply, action)
        problem = outcome_problem(self, state)
        if problem:
            raise RecordError(problem)
        return state


def _normalise(action: object, ply: int) -> str:
    try:
        if isinstance(action, str):
            return action_to_str(str_to_action(action))
        return action_to_str(action)  # type: ignore[arg-type]
    except NotationError as err:
        raise RecordError(f"ply {ply}: {err}") from None


def _member(kind: type[E], value: object, what: str) -> E:
    """``value`` as a member of the string enum ``kind``, or RecordError naming it."""
    try:
        return kind(value)
    except ValueError:
        expected = ", ".join(m.value for m in kind)
        raise RecordError(f"unknown {what} {value!r} (expected one of {expected})") from None


def check_tag(key: object, value: object) -> None:
    """Raise RecordError unless ``key``/``value`` make a free tag (not a reserved key)."""
    if not isinstance(key, str) or not _TAG_KEY.match(key):
        raise RecordError(f"bad tag name {key!r} (letters, digits, '_', '.', '-')")
    if key.lower() in (k.lower() for k in RESERVED_KEYS):
        raise RecordError(f"tag name {key!r} is reserved for the record's own fields")
    if not isinstance(value, str):
        raise RecordError(f"tag {key!r} must have a string value, got {value!r}")


def push_ply(state: State, ply: int, action: str) -> None:
    """Apply ``action`` (ply number ``ply``) or raise RecordError naming both."""
    try:
        state.push(action)
    except IllegalActionError as err:
        raise RecordError(f"ply {ply} ({action}): {err}") from None
    except NotationError as err:
        raise RecordError(f"ply {ply}: {err}") from None


def outcome_problem(record: GameRecord, state: State) -> str | None:
    """Why ``record``'s result/termination contradict the final ``state``, or None."""
    result, termination = record.result, record.termination
    if state.is_terminal:
        if termination != state.end_reason or result != state.result:
            return (
                f"the game ended by the rules ({state.end_reason}, result {state.result}) "
                f"after ply {len(record.actions)}, but the record says result {result}, "
                f"termination {termination}"
            )
        return None
    if termination.by_rules:
        return (
            f"the record says termination {termination}, but the game is not over "
            f"after ply {len(record.actions)}"
        )
    allowed = termination.results
    if result not in allowed:
        expected = tuple(str(r) for r in allowed)
        return f"result {result} does not fit termination {termination} (expected {expected})"
    return None
