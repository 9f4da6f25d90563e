"""``yinsh-eval``: play a match or a round robin between agents and rate them.

Examples::

    yinsh-eval greedy random --games 100 --workers 2
    yinsh-eval random greedy alphabeta mcts --games 40 --json elo.json --records games/
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .arena import DEFAULT_OPENING_PLIES, plot_elo, run_arena, save_json
from .protocol import positive_seconds
from .spec import available_agents
from .worker_pool import exit_on_signals


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
    parser.add_argument("--games", "-n", type=int, required=True, help="games per pairing")
    parser.add_argument("--workers", "-w", type=int, default=1, help="worker processes")
    parser.add_argument("--seed", type=int, default=0, help="seed of openings and agents")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--records", metavar="DIR", help="save every game as a .yinsh record")
    parser.add_argument("--plot", metavar="PATH", help="Elo bar chart (needs matplotlib)")
    parser.add_argument(
        "--opening-plies",
        type=int,
        default=DEFAULT_OPENING_PLIES,
        help=f"random ring placements opening each game (default {DEFAULT_OPENING_PLIES})",
    )
    parser.add_argument(
        "--rings-to-win", type=int, default=3, help="3 for the standard game, 1 for Blitz"
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
    print(result.report())
    if args.json:
        save_json(result, args.json)
        print(f"\nresults written to {args.json}")
    if args.records:
        print(f"game records in {args.records}")
    if args.plot:
        if plot_elo(result, args.plot):
            print(f"Elo plot written to {args.plot}")
        else:
            print("matplotlib is not installed: no plot written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
