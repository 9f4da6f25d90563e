"""``yinsh-play``: watch two agents, play one yourself in the terminal, or in the browser.

::

    yinsh-play                                  # random vs random
    yinsh-play greedy alphabeta:depth=2 --seed 7 --every 10
    yinsh-play mcts:sims=200 random --record game.yinsh --svg final.svg --quiet
    yinsh-play --human white --opponent alphabeta       # you play White in the terminal
    yinsh-play --web --opponent mcts:sims=400           # the web app (agents.web)
    yinsh-play --web --allow "net:path=runs/quick,sims=64"   # also offer this spec
    yinsh-play --web --host 0.0.0.0 --allow-host yinsh.lan   # for the network, by that name

The board is printed every ``--every`` plies and at the end (with ANSI colours
when standard output is a terminal), followed by the game record in the
project's text format (:mod:`yinsh_env.records.formats`).  Games are reproducible: the
seed is printed (chosen at random when not given), and the same specs and seed
replay the same game.  A ``py:`` agent (your own code) plays in a process of
its own (:mod:`agents.evaluation.isolated`): if it ends that process or raises
``KeyboardInterrupt``, it forfeits, as in the arena.

Exit status: 0 for a finished game, 1 when an agent failed (it forfeits, as in
the arena), 2 for bad arguments (unknown agent spec, unwritable output path),
130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agents.base import Agent
from agents.evaluation.isolated import make_player
from agents.evaluation.match import check_variant, play_match
from agents.infra.cli_args import host_name, int_in, output_file
from agents.learned import MODEL_FILES_NOTE
from agents.params import MAX_SEED
from agents.spec import AgentSpecError, available_agents, check_spec, make_agent
from yinsh_env import Player, State
from yinsh_env.records.formats import GameRecord, format_for, save_record, write_record
from yinsh_env.render import ansi_board, svg_board
from yinsh_env.util.atomic_write import write_text

#: Black's seed is derived from White's the way the arena derives it.
BLACK_SEED_XOR = 0x5EED
#: Whom a person plays when no ``--opponent`` is given: the shipped network once
#: the project ships one, else the strongest baseline.
DEFAULT_OPPONENT = "pretrained" if "pretrained" in available_agents() else "alphabeta"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yinsh-play",
        description="Play one game of YINSH between two agents and print it.",
        epilog=(
            f"Agents: {', '.join(available_agents())} (spec: name or name:key=value,...). "
            "Board symbols: R/r White/Black ring, M/m White/Black marker, . empty, "
            f"[X] last action.  {MODEL_FILES_NOTE}"
        ),
    )
    parser.add_argument("white", nargs="?", default="random", help="White's agent spec")
    parser.add_argument("black", nargs="?", default="random", help="Black's agent spec")
    parser.add_argument(
        "--seed", type=int_in(0, MAX_SEED), default=None, help="seed (default: random)"
    )
    parser.add_argument(
        "--rings-to-win",
        type=int_in(1, 5),
        default=3,
        metavar="N",
        help="rings a player removes to win: 3 standard, 1 Blitz (default 3)",
    )
    parser.add_argument(
        "--every",
        type=int_in(0, 1_000_000),
        default=20,
        metavar="N",
        help="print the board every N plies (0: only at the end; default 20)",
    )
    parser.add_argument(
        "--svg", type=output_file(), metavar="PATH", help="write the final position as SVG"
    )
    parser.add_argument(
        "--record",
        type=_record_file,
        metavar="PATH",
        help="save the game record (.yinsh or .sgf)",
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the board (auto: when stdout is a terminal and NO_COLOR is unset)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="print only the result line (files are still written)"
    )
    people = parser.add_argument_group("playing it yourself")
    people.add_argument(
        "--human",
        choices=("white", "black", "both"),
        help="play in the terminal: your colour (both: two people)",
    )
    people.add_argument(
        "--opponent",
        metavar="SPEC",
        default=None,
        help=f"the agent you play (default {DEFAULT_OPPONENT})",
    )
    people.add_argument("--web", action="store_true", help="serve the web app and open it")
    people.add_argument(
        "--host", default="127.0.0.1", help="web: address to bind (default 127.0.0.1)"
    )
    people.add_argument(
        "--port",
        type=int_in(0, 65535),
        default=8000,
        help="web: port (default 8000; 0 = any free)",
    )
    people.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=host_name,
        metavar="NAME",
        help=(
            "web: a name the page may be reached by, besides localhost and IP addresses "
            "(repeatable; any other name is refused: DNS rebinding)"
        ),
    )
    people.add_argument("--no-open", action="store_true", help="web: do not open a browser")
    people.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="SPEC",
        help=(
            "web: a spec clients may also choose, as written (repeatable; besides the "
            "opponent and the built-in agents with bounded budgets)"
        ),
    )
    return parser


def _record_file(text: str) -> Path:
    """An argparse type: a record file to write, in a format that can be written."""
    path = output_file()(text)
    fmt = format_for(path)
    if fmt.write is None:
        raise argparse.ArgumentTypeError(
            f"{str(path)!r}: {fmt.name} records ({fmt.suffix}) are read, not written; "
            "use .yinsh or .sgf"
        )
    return path


def _use_color(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and not os.environ.get("NO_COLOR")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``yinsh-play``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    if args.web:
        return _web(parser, args)
    if args.human:
        return _terminal(parser, args, out)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    agents: list[Agent] = []
    try:
        agents.append(make_player(args.white, seed=seed))
        agents.append(make_player(args.black, seed=seed ^ BLACK_SEED_XOR))
        for agent in agents:
            check_variant(agent, args.rings_to_win)
    except ValueError as exc:  # a bad spec, or an agent made for another variant
        for agent in agents:
            agent.close()
        parser.error(str(exc))
    color = _use_color(args.color, out)
    try:
        return _run(args, agents, seed, color, out)
    finally:
        for agent in agents:
            agent.close()


def _web(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from agents.web.server import AppConfig, serve

    opponent = args.opponent or DEFAULT_OPPONENT
    try:
        make_agent(opponent).close()  # a bad spec fails here, not in the page
        for spec in args.allow:
            check_spec(spec)
    except AgentSpecError as exc:
        parser.error(str(exc))
    human = args.human or "white"
    white = "human" if human in ("white", "both") else opponent
    black = "human" if human in ("black", "both") else opponent
    analyst = opponent if opponent.startswith(("net", "pretrained")) else "mcts:sims=200"
    config = AppConfig(
        white=white,
        black=black,
        analyst=analyst,
        allow=tuple(args.allow),
        allow_hosts=tuple(args.allow_host),
    )
    try:
        return serve(args.host, args.port, config, open_browser=not args.no_open)
    except ValueError as exc:
        parser.error(str(exc))
    return 2  # pragma: no cover - parser.error exits


def _terminal(parser: argparse.ArgumentParser, args: argparse.Namespace, out: TextIO) -> int:
    from agents.play.terminal import TerminalGame

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    humans = {"white": (0,), "black": (1,), "both": (0, 1)}[args.human]
    spec = args.opponent or DEFAULT_OPPONENT
    opponent = None
    if len(humans) < 2:
        try:
            opponent = make_agent(spec, seed=seed)
        except AgentSpecError as exc:
            parser.error(str(exc))
    game = TerminalGame(
        humans,
        opponent,
        hint_spec=spec,
        stdin=sys.stdin,
        stdout=out,
        color=_use_color(args.color, out),
        state=State(rings_to_win=args.rings_to_win),
    )
    try:
        return game.run()
    except KeyboardInterrupt:
        print(file=out)
        return 130
    finally:
        game.close()
        if opponent is not None:
            opponent.close()


@dataclass
class PlayedGame:
    """How a game went: the final state, and why it stopped early if it did."""

    state: State
    failure: str = ""  # why the side to act forfeited; "" if the game ran its course
    interrupted: bool = False
    think: list[float] = field(default_factory=lambda: [0.0, 0.0])  # seconds per side
    decisions: list[int] = field(default_factory=lambda: [0, 0])


def play_game(
    white: Agent,
    black: Agent,
    rings_to_win: int = 3,
    on_ply: Callable[[State], None] | None = None,
) -> PlayedGame:
    """Play one game through the arena's match loop; ``on_ply(state)`` after every action.

    An agent that raises :class:`AgentFailure`, answers an illegal action or
    crashes forfeits (the game stops with that side to act), as in the arena;
    Ctrl-C stops the game (``interrupted``).
    """
    match = play_match((white, black), rings_to_win, on_step=on_ply, interruptible=True)
    return PlayedGame(
        match.state,
        failure=match.detail,
        interrupted=match.interrupted,
        think=[float(match.think[0][0]), float(match.think[1][0])],
        decisions=[int(match.think[0][1]), int(match.think[1][1])],
    )


def _record(game: PlayedGame, names: tuple[str, str], seed: int) -> tuple[GameRecord, str]:
    """The game's record and a one-line verdict."""
    state = game.state
    if game.failure:
        side = state.to_act
        verdict = f"{side.other.label} wins: {side.label} ({names[side]}) forfeits: {game.failure}"
        record = GameRecord.from_state(
            state,
            *names,
            result="WB"[1 - side],
            termination="forfeit",
            reason=game.failure,
            seed=str(seed),
        )
        return record, verdict
    record = GameRecord.from_state(state, *names, seed=str(seed))
    if game.interrupted:
        return record, f"Interrupted after {state.ply} plies"
    return record, _verdict(state)


def _run(args: argparse.Namespace, agents: list[Agent], seed: int, color: bool, out: TextIO) -> int:
    white, black = agents
    white.reset(seed)
    black.reset(seed ^ BLACK_SEED_XOR)
    variant = "standard" if args.rings_to_win == 3 else f"{args.rings_to_win} rings to win"
    shown = -1  # the ply of the last board printed

    def show(state: State, title: str) -> None:
        nonlocal shown
        last = state.actions[-1] if state.actions else None
        print(title, file=out)
        print(ansi_board(state, color=color, last_action=last) + "\n", file=out)
        shown = state.ply

    def every(state: State) -> None:
        if state.ply % args.every == 0:
            show(state, f"after ply {state.ply}")

    if not args.quiet:
        print(f"White: {white.name}   Black: {black.name}   seed {seed}   {variant}", file=out)
        print("R/r White/Black ring, M/m White/Black marker, [X] last action\n", file=out)
    quiet = args.quiet or not args.every
    game = play_game(white, black, args.rings_to_win, on_ply=None if quiet else every)
    state = game.state
    record, verdict = _record(game, (white.name, black.name), seed)

    status = 130 if game.interrupted else 1 if game.failure else 0
    try:
        if args.svg is not None:
            last = state.actions[-1] if state.actions else None
            write_text(args.svg, svg_board(state, last_action=last))
        if args.record is not None:
            save_record(record, args.record)
    except OSError as exc:  # checked before the game, but a folder can go away meanwhile
        print(f"yinsh-play: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        status = status or 1

    if args.quiet:
        print(f"{verdict} ({state.ply} plies)", file=out)
        return status
    if shown != state.ply:
        show(state, f"final position after ply {state.ply}")
    speed = ", ".join(
        f"{Player(i).label} {1000 * game.think[i] / max(1, game.decisions[i]):.2f} ms/action"
        for i in (0, 1)
    )
    print(f"{verdict} ({state.ply} plies; {speed})\n", file=out)
    print(write_record(record), end="", file=out)
    return status


def _verdict(state: State) -> str:
    white, black = state.removed
    score = f"rings removed {white}-{black}"
    reason = {
        "rings": "removed the winning ring",
        "pool": "the pool ran out",
        "passes": "two passes",
    }
    why = reason.get(state.end_reason or "", state.end_reason or "")
    if state.winner is None:
        return f"Draw: {why}, {score}"
    return f"{state.winner.label} wins: {why}, {score}"


if __name__ == "__main__":
    sys.exit(main())
