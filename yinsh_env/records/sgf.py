"""boardspace.net Yinsh game files (``.sgf``): import and export.

boardspace.net saves a game as an SGF file: a root node with the game's
properties, then one node per user-interface command, ``; P0[<n> <command>]``
for the first player (White, who starts) and ``P1[...]`` for the second
(Black).  The commands say what was picked up and dropped where, so a single
engine action may take several commands, and a player may pick a piece up and
put it back before confirming with ``Done``.  :func:`read_sgf` replays those
commands into engine actions and checks, at every command, that the side that
issues it is the side the rules say is to act.

Commands understood (names are case-insensitive, a point is ``G 2`` or
``G2``, the leading command number is optional):

===========================  ===================================================
``Start White``              the first command (a game starting with Black is
                             rejected: White places first)
``place wr G 2``             place a White ring (``br``: Black) during placement
``place w G 2``              put a White marker (``b``: Black) on G2, lifting
                             the ring there: a ring move starts
``drop board H 3``           drop what is in hand on H3: the lifted ring (the
                             move G2-H3), a ring from the supply (placement) or
                             a marker from the pool (lifting the ring there);
                             dropping the lifted ring back on its point takes
                             the move back
``pick wr`` / ``pick w``     take a ring from the supply / a marker from the pool
``pick board H 3``           pick up again the piece just dropped on H3 (undo),
                             or, when a ring must be removed, lift that ring
``drop wr`` / ``drop w``     put the piece in hand back (undo)
``drop wrc``                 put the lifted ring among the removed rings (ring
                             removal, older form)
``pickb``/``dropb G 2``      short forms of ``pick board``/``drop board``
``move E 7 E 9``             a whole ring move (the form robots use)
``remove w G 2 G 6``         remove White's row with these end points (either
                             order; ``b``: Black)
``remove wr H 7``            remove White's ring on H7 (``br``: Black)
``Pass``                     pass (the player has no ring move)
``Done``                     confirm the action in progress
``Resign``                   resign (a second ``Resign`` takes it back)
``GameOverOnTime``           the game ended on time; the winner is the one
                             named by ``RE``, else the side to act (as
                             boardspace scores it)
===========================  ===================================================

An action that is complete but not confirmed is confirmed by the next command
that starts something new, or by the end of the file.  A piece still in hand
at the end of the file is ignored.

Root properties read: ``SU`` (``Yinsh`` or ``Yinsh-blitz``), ``P0``/``P1``
(``id "name"``), ``RE`` (result text, any language: the winner is the player
it names), ``DT`` (tag ``date``), ``GN`` (tag ``game``), and the final
``P0[time ...]``/``P1[time ...]`` (tags ``white_time``/``black_time``).  When
the rules did not end the game and nobody resigned, ``RE`` gives the result
and a trailing ``(forfeit)``/``(timeout)``/``(agreement)``/``(adjudication)``
in it gives the termination (``forfeit`` when it names a winner, ``agreement``
when it names a draw, otherwise the game is unfinished).

:func:`write_sgf` writes the same style (``move`` commands for ring moves)
and reads back to an equal record, except that tags other than ``date``,
``game``, ``white_time`` and ``black_time`` are not stored.
"""

from __future__ import annotations

import re
from typing import Final

from yinsh_env.engine.actions import (
    PASS_ACTION,
    PLACE_OFFSET,
    RING_OFFSET,
    action_kind,
    action_to_str,
    str_to_action,
)
from yinsh_env.engine.errors import NotationError, RecordError
from yinsh_env.engine.geometry import NAME_TO_POINT, POINT_NAMES
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import DEFAULT_RINGS_TO_WIN, Phase, Player, Result, Termination
from yinsh_env.records.game_record import BOM, GameRecord, outcome_problem, push_ply
from yinsh_env.records.sgf_syntax import SgfProperty, SourceText, escape_value, parse_nodes

_VARIANTS: Final = {"yinsh": 3, "yinsh-blitz": 1}
#: What boardspace writes in ``GM`` for Yinsh (SGF gives each game a number; 1 is Go).
_GAME_CODES: Final = ("24", "yinsh")
#: Tags stored in an sgf file (tag -> root property; the times go in the last node).
_SGF_TAGS: Final = {"date": "DT", "game": "GN"}
_TIME_TAGS: Final = ("white_time", "black_time")
_RE_SUFFIX: Final = re.compile(r"\((\w+)\)\s*$")


# --- replaying boardspace commands -------------------------------------------


#: A piece in hand: ("ring", -1) from the supply, ("marker", -1) from the pool,
#: ("lifted", origin) a ring being moved, ("removing", point) a ring to remove.
_Hand = tuple[str, int]
#: What ``pick board <point>`` takes back from a pending action: (point, hand).
_Undo = tuple[int, _Hand]
#: A turn in progress, kept while a resignation may be taken back.
_Turn = tuple[_Hand | None, int | None, int, _Undo | None]


class _Replay:
    """Turns boardspace's pick/drop/confirm commands into engine actions."""

    def __init__(self, rings_to_win: int, src: SourceText) -> None:
        self.src = src
        self.state = State(rings_to_win=rings_to_win)
        self.actions: list[str] = []
        self.hand: _Hand | None = None
        #: A complete action awaiting ``Done``, the line that gave it, and what
        #: ``pick board`` takes back from it.
        self.pending: int | None = None
        self.pending_line = 0
        self.undo: _Undo | None = None
        #: (RESIGN or TIMEOUT, the player to act) once announced.
        self.ending: tuple[Termination, Player] | None = None
        self.before_resign: _Turn | None = None
        self.finished = False
        self.started = False

    # -- helpers --

    def fail(self, prop: SgfProperty, problem: str) -> RecordError:
        return self.src.error(prop.line, problem)

    def commit(self) -> None:
        """Apply the pending action (``Done``, or implied by the next command)."""
        if self.pending is None:
            return
        name = action_to_str(self.pending)
        try:
            push_ply(self.state, len(self.actions) + 1, name)
        except RecordError as err:
            raise self.src.error(self.pending_line, err) from None
        self.actions.append(name)
        self.pending = None
        self.undo = None

    def set_pending(self, prop: SgfProperty, action: int, undo: _Undo | None) -> None:
        self.pending, self.pending_line, self.undo, self.hand = action, prop.line, undo, None

    def own_colour(self, prop: SgfProperty, letter: str, what: str) -> None:
        player = self.state.to_act
        if letter != player.letter.lower():
            raise self.fail(prop, f"{player.label} is to act but the command names a {what}")

    def need_phase(self, prop: SgfProperty, *phases: int) -> None:
        if self.state.phase not in phases:
            phase = self.state.phase_name
            raise self.fail(prop, f"this command does not fit the {phase} phase")

    def own_ring_at(self, prop: SgfProperty, point: int) -> None:
        player = self.state.to_act
        if self.state.piece_at(point) != "Rr"[player]:
            raise self.fail(prop, f"no {player.label} ring on {POINT_NAMES[point]}")

    def points(self, prop: SgfProperty, words: list[str], count: int) -> list[int]:
        """Exactly ``count`` points from words such as ``G 2 H 3`` or ``G2 H3``."""
        names: list[str] = []
        i = 0
        while i < len(words):
            word = words[i]
            if len(word) == 1 and i + 1 < len(words) and words[i + 1].isdigit():
                word, i = word + words[i + 1], i + 1
            names.append(word.upper())
            i += 1
        if len(names) != count:
            raise self.fail(prop, f"expected {count} point(s) such as 'G 2', got {len(names)}")
        for name in names:
            if name not in NAME_TO_POINT:
                raise self.fail(prop, f"{name!r} is not a board point")
        return [NAME_TO_POINT[name] for name in names]

    # -- the commands --

    def command(self, player: int, prop: SgfProperty) -> None:
        """Carry out one ``P0``/``P1`` command, checking the side that gives it."""
        if "\n" in prop.value.strip():
            raise self.fail(prop, "command runs past its line (missing ']'?)")
        words = prop.value.split()
        if words and words[0].isdigit():
            words = words[1:]
        if not words:
            raise self.fail(prop, "empty command")
        op, obj, args = words[0].lower(), "", words[1:]
        if op in ("pickb", "dropb"):
            op, obj = op[:-1], "board"
        elif op in ("place", "pick", "drop", "remove"):
            if not args:
                raise self.fail(prop, f"{words[0]} what? (e.g. 'w', 'wr', 'board')")
            obj, args = args[0].lower(), args[1:]
        if self.finished:
            raise self.fail(prop, "command after the game ended by resignation or time")
        if op == "start":
            if self.started or self.actions or [a.lower() for a in args] != ["white"]:
                raise self.fail(prop, "only 'Start White' at the start of the game is supported")
            self.started = True
            return
        if op == "gameoverontime":
            self.commit()
            self.ending = (Termination.TIMEOUT, self.state.to_act)
            self.finished = True
            return
        # A command that starts something new confirms an action still awaiting
        # Done; the same player's pick/place/resign may instead take it back or
        # replace it.
        keeps = op in ("done", "pick", "resign") or (op == "place" and obj in ("wr", "br"))
        if op != "done" and (player != self.state.to_act or not keeps):
            self.commit()
        if self.state.is_terminal:
            raise self.fail(prop, f"command after the end of the game ({self.state.end_reason})")
        to_act = self.state.to_act
        if player != to_act:
            raise self.fail(
                prop, f"P{player} gives this command but P{to_act} ({to_act.label}) is to act"
            )
        handler = getattr(self, f"_do_{op}", None)
        if handler is None:
            raise self.fail(prop, f"unknown command {words[0]!r}")
        handler(prop, obj, args)

    def _do_done(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        if self.ending is not None:
            self.finished = True
            return
        if self.hand is not None:
            raise self.fail(prop, "Done with a piece still in hand")
        if self.pending is None:
            raise self.fail(prop, "Done without an action to confirm")
        self.commit()

    def _do_resign(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        if self.ending is not None and self.before_resign is not None:
            # A second Resign takes the first back.
            self.hand, self.pending, self.pending_line, self.undo = self.before_resign
            self.ending = self.before_resign = None
            return
        self.before_resign = (self.hand, self.pending, self.pending_line, self.undo)
        self.hand = self.pending = self.undo = None
        self.ending = (Termination.RESIGN, self.state.to_act)

    def _do_pass(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        self.need_phase(prop, Phase.MOVE)
        self.set_pending(prop, PASS_ACTION, None)

    def _do_place(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        (point,) = self.points(prop, args, 1)
        if obj in ("wr", "br"):
            self.need_phase(prop, Phase.PLACE)
            self.own_colour(prop, obj[0], "ring of the other colour")
            self.set_pending(prop, PLACE_OFFSET + point, (point, ("ring", -1)))
        elif obj in ("w", "b"):
            self.need_phase(prop, Phase.MOVE)
            self.own_colour(prop, obj, "marker of the other colour")
            self.own_ring_at(prop, point)
            self.hand = ("lifted", point)
        else:
            raise self.fail(prop, f"cannot place {obj!r}")

    def _do_pick(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        if obj == "board":
            (point,) = self.points(prop, args, 1)
            if self.undo is not None and self.undo[0] == point:
                self.hand, self.pending, self.undo = self.undo[1], None, None
            elif self.state.phase == Phase.RING and self.hand is None and self.pending is None:
                self.own_ring_at(prop, point)
                self.hand = ("removing", point)
            else:
                raise self.fail(prop, f"nothing to pick up on {POINT_NAMES[point]}")
            return
        self.points(prop, args, 0)
        if obj in ("wr", "br"):
            self.need_phase(prop, Phase.PLACE)
            self.own_colour(prop, obj[0], "ring of the other colour")
            self.hand, self.pending, self.undo = ("ring", -1), None, None
        elif obj in ("w", "b"):
            self.need_phase(prop, Phase.MOVE)
            self.own_colour(prop, obj, "marker of the other colour")
            if self.pending is not None:
                raise self.fail(prop, "a marker picked while another action awaits Done")
            self.hand = ("marker", -1)
        else:
            raise self.fail(prop, f"cannot pick {obj!r}")

    def _do_drop(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        hand = self.hand
        if hand is None:
            raise self.fail(prop, "nothing in hand to drop")
        kind, origin = hand
        if obj == "board":
            (point,) = self.points(prop, args, 1)
            if kind == "ring":
                self.set_pending(prop, PLACE_OFFSET + point, (point, hand))
            elif kind == "marker":
                self.own_ring_at(prop, point)
                self.hand = ("lifted", point)
            elif point == origin:  # a lifted ring put back where it was
                self.hand = None
            elif kind == "lifted":
                move = _parse_action(self, prop, f"{POINT_NAMES[origin]}-{POINT_NAMES[point]}")
                self.set_pending(prop, move, (point, hand))
            else:
                raise self.fail(prop, "a ring being removed goes to the removed rings")
            return
        self.points(prop, args, 0)
        if obj in ("wr", "br", "w", "b") and kind in ("ring", "marker", "lifted"):
            self.hand = None  # the piece goes back to the supply or the pool
        elif obj in ("wrc", "brc") and kind == "removing":
            self.own_colour(prop, obj[0], "ring of the other colour")
            self.set_pending(prop, RING_OFFSET + origin, None)
        else:
            raise self.fail(prop, f"cannot drop the piece in hand on {obj!r}")

    def _do_move(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        self.need_phase(prop, Phase.MOVE)
        origin, dest = self.points(prop, args, 2)
        move = _parse_action(self, prop, f"{POINT_NAMES[origin]}-{POINT_NAMES[dest]}")
        self.set_pending(prop, move, (dest, ("lifted", origin)))

    def _do_remove(self, prop: SgfProperty, obj: str, args: list[str]) -> None:
        if obj in ("w", "b"):
            self.need_phase(prop, Phase.ROW)
            self.own_colour(prop, obj, "row of the other colour")
            first, last = self.points(prop, args, 2)
            row = _parse_action(self, prop, f"x{POINT_NAMES[first]}-{POINT_NAMES[last]}")
            self.set_pending(prop, row, None)
        elif obj in ("wr", "br"):
            self.need_phase(prop, Phase.RING)
            self.own_colour(prop, obj[0], "ring of the other colour")
            (point,) = self.points(prop, args, 1)
            self.set_pending(prop, RING_OFFSET + point, None)
        else:
            raise self.fail(prop, f"cannot remove {obj!r}")

    def finish(self) -> None:
        """End of file: confirm what is complete, drop what is still in hand."""
        if self.ending is None:
            self.commit()
        self.hand = None


def _parse_action(replay: _Replay, prop: SgfProperty, text: str) -> int:
    try:
        return str_to_action(text)
    except NotationError as err:
        raise replay.fail(prop, str(err)) from None


# --- reading ------------------------------------------------------------------


def _named_winner(text: str, white: str, black: str) -> Player | None:
    """The player a result text names as winner (by name, else by colour)."""

    def names(word: str) -> bool:
        pattern = rf"(?<!\w){re.escape(word)}(?!\w)"
        return bool(word) and re.search(pattern, text, re.IGNORECASE) is not None

    for first, second in ((white, black), ("white", "black")):
        found = (names(first), names(second))
        if found[0] != found[1]:
            return Player.WHITE if found[0] else Player.BLACK
    return None


def read_sgf(text: str) -> GameRecord:
    """Import a boardspace.net Yinsh ``.sgf`` game (see the module docstring).

    Raises :class:`RecordError` naming the line number and the line for a
    malformed file, an unknown or illegal command, a command given by the side
    that is not to act, or a result (``RE``) that contradicts the game.
    """
    text = text.removeprefix(BOM)
    src = SourceText(text)
    nodes = parse_nodes(text, src)
    root: dict[str, SgfProperty] = {}
    names = ["?", "?"]
    tags: dict[str, str] = {}
    commands: list[tuple[int, SgfProperty]] = []
    for node in nodes:
        for prop in node:
            if prop.ident in ("P0", "P1"):
                player = int(prop.ident[1])
                head, _, rest = prop.value.strip().partition(" ")
                if head == "id":
                    match = re.fullmatch(r'\s*"(.*)"\s*', rest, re.DOTALL)
                    names[player] = match.group(1) if match else rest.strip()
                elif head == "time":
                    tags[_TIME_TAGS[player]] = rest.strip()
                else:
                    commands.append((player, prop))
            elif prop.ident not in root:
                root[prop.ident] = prop
    rings_to_win = DEFAULT_RINGS_TO_WIN
    if "GM" in root and root["GM"].value.strip().lower() not in _GAME_CODES:
        raise src.error(
            root["GM"].line,
            f"not a Yinsh game (GM[{root['GM'].value.strip()[:20]}]; Yinsh is GM[24])",
        )
    if not ({"GM", "SU"} & set(root) or commands):
        raise src.error(1, "not a Yinsh game (no GM[24], no SU[Yinsh] and no P0/P1 moves)")
    if "SU" in root:
        variant = root["SU"].value.strip().lower()
        if variant not in _VARIANTS:
            raise src.error(root["SU"].line, "not a Yinsh game (SU must be Yinsh or Yinsh-blitz)")
        rings_to_win = _VARIANTS[variant]
    for tag, ident in _SGF_TAGS.items():
        if ident in root:
            tags[tag] = root[ident].value
    replay = _Replay(rings_to_win, src)
    for player, prop in commands:
        replay.command(player, prop)
    replay.finish()
    result, termination = _outcome(replay, root, names, src)
    record = GameRecord(
        rings_to_win=rings_to_win,
        white=names[Player.WHITE],
        black=names[Player.BLACK],
        result=result,
        termination=termination,
        actions=replay.actions,
        tags=tags,
    )
    problem = outcome_problem(record, replay.state)
    if problem:
        line = root["RE"].line if "RE" in root else len(src.lines)
        raise src.error(line, problem)
    return record


def _outcome(
    replay: _Replay, root: dict[str, SgfProperty], names: list[str], src: SourceText
) -> tuple[Result, Termination]:
    """(result, termination) from the replayed game, its ending and ``RE``."""
    state = replay.state
    re_prop = root.get("RE")
    re_text = re_prop.value if re_prop else ""
    named = _named_winner(re_text, names[Player.WHITE], names[Player.BLACK]) if re_prop else None

    def check(winner: Player | None, how: str) -> None:
        if re_prop is not None and named is not None and named != winner:
            expected = "a draw" if winner is None else f"{winner.label} won"
            raise src.error(
                re_prop.line, f"RE names {named.label} as winner but {expected} ({how})"
            )

    outcome = state.outcome()
    if outcome is not None:
        check(outcome.winner, f"by {outcome.termination}")
        return outcome.result, outcome.termination
    if replay.ending is not None:
        kind, player = replay.ending
        if kind is Termination.RESIGN:
            check(player.other, f"{player.label} resigned")
            return Result.win_for(player.other), kind
        return Result.win_for(named if named is not None else player), kind
    suffix = _RE_SUFFIX.search(re_text)
    try:
        given: Termination | None = Termination(suffix.group(1).lower()) if suffix else None
    except ValueError:
        given = None
    if given is not None and given.by_rules:
        given = None
    if named is not None:
        return Result.win_for(named), given or Termination.FORFEIT
    if re.search(r"\bdraw", re_text, re.IGNORECASE):
        return Result.DRAW, given or Termination.AGREEMENT
    return Result.UNFINISHED, Termination.UNFINISHED


# --- writing ------------------------------------------------------------------


def _sgf_point(point: int) -> str:
    name = POINT_NAMES[point]
    return f"{name[0]} {name[1:]}"


def _sgf_command(action: int, player: Player) -> str:
    """The boardspace command for one engine action by ``player``."""
    kind = action_kind(action)
    colour = player.letter.lower()
    name = action_to_str(action)
    if kind == "place":
        return f"place {colour}r  {_sgf_point(action - PLACE_OFFSET)}"
    if kind == "ring":
        return f"remove {colour}r {_sgf_point(action - RING_OFFSET)}"
    if kind == "pass":
        return "Pass "
    first, last = name.lstrip("x").split("-")
    points = f"{first[0]} {first[1:]} {last[0]} {last[1:]}"
    return f"move {points}" if kind == "move" else f"remove {colour} {points}"


def _result_text(record: GameRecord) -> str | None:
    """An ``RE`` text that :func:`read_sgf` reads back to the record's outcome."""
    winner = record.result.winner
    if record.result is Result.UNFINISHED:
        return None
    termination = record.termination
    quiet = termination.by_rules or termination is Termination.RESIGN
    suffix = "" if quiet else f" ({termination})"
    if winner is None:
        return f"Game drawn{suffix}"
    name = (record.white, record.black)[winner]
    text = f"Game won by {name}"
    if _named_winner(text, record.white, record.black) != winner:
        text += f" ({winner.label})"
    if not termination.by_rules and (_named_winner(text, record.white, record.black) != winner):
        raise RecordError(
            f"cannot name the winner in RE: players {record.white!r} and {record.black!r}"
        )
    return text + suffix


def write_sgf(record: GameRecord) -> str:
    """The record as a boardspace.net style ``.sgf`` file (read back by read_sgf).

    Raises :class:`RecordError` when the record's game is not legal or cannot
    be written in that style (a variant other than standard or blitz, a
    resignation by the side not to act).

    >>> from yinsh_env import GameRecord, read_sgf, write_sgf
    >>> record = GameRecord(white="alice", black="bob", actions=["E5", "F6"])
    >>> read_sgf(write_sgf(record)) == record
    True
    """
    variant = {3: "Yinsh", 1: "Yinsh-blitz"}.get(record.rings_to_win)
    if variant is None:
        raise RecordError(
            f"boardspace has no Yinsh variant with {record.rings_to_win} rings to win"
        )
    state = State(rings_to_win=record.rings_to_win)
    commands: list[tuple[int, str]] = [(Player.WHITE, "Start White")]
    for ply, name in enumerate(record.actions, 1):
        player = state.to_act
        commands += [(player, _sgf_command(str_to_action(name), player)), (player, "Done ")]
        push_ply(state, ply, name)
    problem = outcome_problem(record, state)
    if problem:
        raise RecordError(problem)
    winner = record.result.winner
    if record.termination is Termination.RESIGN and winner is not None:
        loser = winner.other
        if loser != state.to_act:
            raise RecordError(
                f"{loser.label} resigned while {state.to_act.label} was to act: "
                "boardspace records a resignation by the side to act"
            )
        commands += [(loser, "Resign "), (loser, "Done ")]
    lines = [" (;", "GM[24]VV[2]", "CM[0,1]", "TC[None]", f"SU[{variant}]"]
    for tag, ident in _SGF_TAGS.items():
        if tag in record.tags:
            lines.append(f"{ident}[{escape_value(record.tags[tag])}]")
    result_text = _result_text(record)
    if result_text is not None:
        lines.append(f"RE[{escape_value(result_text)}]")
    lines += [f'P0[id "{escape_value(record.white)}"]', f'P1[id "{escape_value(record.black)}"]']
    lines += [f"; P{player}[{n} {escape_value(cmd)}]" for n, (player, cmd) in enumerate(commands)]
    times = [(p, record.tags[t]) for p, t in enumerate(_TIME_TAGS) if t in record.tags]
    if times:
        lines.append(";")
        lines += [f"P{p}[time {escape_value(value)} ]" for p, value in times]
    lines.append(")")
    return "\n".join(lines) + "\n"
