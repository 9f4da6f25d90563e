"""``yinsh-eval``: play a match or a round robin between agents and rate them.

Examples::

    yinsh-eval greedy random --games 100 --workers 2
    yinsh-eval random greedy alphabeta mcts --games 40 --json elo.json --records games/

Every argument is checked before the first game (:mod:`agents.cli_args`):
the ``--json`` and ``--plot`` files must be writable in an existing folder
(``--plot`` with an extension matplotlib writes), ``--records`` must be a
folder or not exist yet (it is created, parents too), and the specs must
build.  The exit status is 0 when every game was played out, 1 when a game was
forfeited because an agent failed (crashed, an engine died, an illegal
action; the results are still printed and written, and a last line says
which), 2 for bad arguments, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .arena import DEFAULT_OPENING_PLIES, ArenaResult, plot_elo, run_arena, save_json
from .cli_args import image_file, int_in, output_dir, output_file
from .protocol import MAX_SEED, positive_seconds
from .spec import available_agents
from .worker_pool import exit_on_signals

#: Most games per pairing, and worker processes, a command line may ask for.
MAX_GAMES = 1_000_000
MAX_WORKERS = 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yinsh-eval",
        description=(
            "Play N games per pairing between agents (two specs: a match, more: a round "
            "robin), colours alternated over a seeded opening set, and print the score "
            "table with 95% intervals, Elo ratings (first agent = 0) and time per move."
        ),
        epilog=f"agents: {', '.join(available_agents())}; spec form name:key=value,...",
    )
    parser.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs, e.g. mcts:sims=800")
    parser.add_argument(
        "--games", "-n", type=int_in(1, MAX_GAMES), required=True, help="games per pairing"
    )
    parser.add_argument(
        "--workers", "-w", type=int_in(1, MAX_WORKERS), default=1, help="worker processes"
    )
    parser.add_argument(
        "--seed", type=int_in(0, MAX_SEED), default=0, help="seed of openings and agents"
    )
    parser.add_argument(
        "--json", metavar="PATH", type=output_file(), help="write the results as JSON"
    )
    parser.add_argument(
        "--records",
        metavar="DIR",
        type=output_dir,
        help="save every game as a .yinsh record (the folder is created if missing)",
    )
    parser.add_argument(
        "--plot",
        metavar="PATH",
        type=image_file,
        help="Elo bar chart, .png, .svg, .pdf... (needs matplotlib)",
    )
    parser.add_argument(
        "--opening-plies",
        type=int_in(0, 10),
        default=DEFAULT_OPENING_PLIES,
        help=f"random ring placements opening each game (default {DEFAULT_OPENING_PLIES})",
    )
    parser.add_argument(
        "--rings-to-win", type=int_in(1, 5), default=3, help="3 for the standard game, 1 for Blitz"
    )
    parser.add_argument(
        "--move-time-limit",
        type=positive_seconds,
        metavar="SECONDS",
        help="forfeit an agent that thinks longer than this on one decision",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if len(args.specs) < 2:
        print("yinsh-eval: give at least two agent specs", file=sys.stderr)
        return 2
    exit_on_signals()  # SIGTERM, SIGHUP: unwind like Ctrl-C, stopping the workers
    try:
        result = run_arena(
            args.specs,
            args.games,
            workers=args.workers,
            seed=args.seed,
            records_dir=args.records,
            progress=not args.no_progress,
            opening_plies=args.opening_plies,
            rings_to_win=args.rings_to_win,
            move_time_limit=args.move_time_limit,
        )
    except ValueError as exc:  # bad specs and settings, reported before any game
        print(f"yinsh-eval: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("yinsh-eval: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a records folder that went away mid-run, a full disk
        print(f"yinsh-eval: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    print(result.report())
    try:
        if args.json:
            save_json(result, args.json)
            print(f"\nresults written to {args.json}")
        if args.records:
            print(f"game records in {args.records}")
        if args.plot and plot_elo(result, args.plot):
            print(f"Elo plot written to {args.plot}")
    except OSError as exc:
        print(f"yinsh-eval: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    return _forfeit_status(result)


def _forfeit_status(result: ArenaResult) -> int:
    """1, with a line on stderr, when an agent failed (not for a move time limit's timeouts)."""
    failed = [g for g in result.games if g.termination == "forfeit"]
    if not failed:
        return 0
    first = failed[0]
    who = result.agents[first.forfeiter] if first.forfeiter is not None else "?"
    print(
        f"yinsh-eval: {len(failed)} of {len(result.games)} game(s) forfeited because an agent "
        f"failed; first: game {first.task.index}, {who}: {first.reason[:200]}",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
