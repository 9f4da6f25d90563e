"""``yinsh-eval``: matches, round robins, sequential tests, and ratings on the fixed scale.

Examples::

    yinsh-eval greedy random --games 100 --workers 2
    yinsh-eval random greedy alphabeta mcts --games 40 --json elo.json --records games/
    yinsh-eval net:path=runs/b net:path=runs/a --sprt elo0=0,elo1=30 --workers 2
    yinsh-eval --rate net:path=runs/b,sims=0 --workers 2 --db games.sqlite
    yinsh-eval mine=net:path=runs/x/checkpoints/iter_000472.pt,sims=64 greedy --games 20

An agent given as ``NAME=SPEC`` is shown by its name in the tables and the
ratings, and stored with its spec (:mod:`agents.evaluation.names`).

Ratings are printed on the fixed scale (:mod:`agents.evaluation.scale`)
whenever one of its anchors takes part, and the output says which scale a
number is on.

Every argument is checked before the first game (:mod:`agents.infra.cli_args`):
the ``--json`` and ``--plot`` files must be writable in an existing folder
(``--plot`` with an extension matplotlib writes), ``--records`` must be a
folder or not exist yet (it is created, parents too), ``--sprt`` must name
valid hypotheses, ``--db`` must be a results database or a new file, and the
specs must build.  The exit status is 0 when every game was played out, 1
when a game was forfeited because an agent failed (crashed, an engine died,
an illegal action; the results are still printed and written, and a last
line says which), 2 for bad arguments, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.evaluation.arena import DEFAULT_OPENING_PLIES, plot_elo, run_arena, save_json
from agents.evaluation.games import GameResult
from agents.evaluation.rate import DEFAULT_CI_WIDTH, DEFAULT_RATE_GAMES, rate_agent
from agents.evaluation.results_db import check_db
from agents.evaluation.runners import WorkerDied
from agents.evaluation.scale import Scale, load_scale
from agents.evaluation.settings import BACKENDS, MatchSettings
from agents.evaluation.sprt import Sprt, SprtSettings
from agents.infra.cli_args import image_file, input_file, int_in, number_in, output_dir, output_file
from agents.infra.ray_address import ray_address
from agents.infra.worker_pool import exit_on_signals
from agents.params import MAX_SECONDS, MAX_SEED
from agents.spec import available_agents

#: Most games of an SPRT match when ``--games`` is not given.
DEFAULT_SPRT_GAMES = 1000
#: Most games per pairing, and worker processes, a command line may ask for.
MAX_GAMES = 1_000_000
MAX_WORKERS = 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yinsh-eval",
        description=(
            "Play games between agents (two specs: a match, more: a round robin), colours "
            "alternated over a seeded opening set, and print the score table with 95% "
            "intervals, Elo ratings and time per move.  --sprt makes a match a sequential "
            "test; --rate SPEC places one agent on the fixed rating scale."
        ),
        epilog=(
            f"agents: {', '.join(available_agents())}; spec form name:key=value,...; "
            "your own agent: py:MODULE:CALLABLE[,key=value...] (see agents.byo)"
        ),
    )
    parser.add_argument(
        "specs",
        nargs="*",
        metavar="SPEC",
        help="agent specs, e.g. mcts:sims=800; NAME=SPEC shows the agent as NAME",
    )
    parser.add_argument(
        "--games",
        "-n",
        type=int_in(1, MAX_GAMES),
        help=(
            "games per pairing (the most, with --sprt: default "
            f"{DEFAULT_SPRT_GAMES}; with --rate: default {DEFAULT_RATE_GAMES})"
        ),
    )
    parser.add_argument(
        "--workers",
        "-w",
        type=int_in(1, MAX_WORKERS),
        help="worker processes (default 1), or Ray actors (default: one per CPU of the cluster)",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local: this machine's processes; ray: Ray actors (pip install -e '.[ray]')",
    )
    parser.add_argument(
        "--address",
        help="with --backend ray: the cluster (auto, ray://head:10001; default a local Ray)",
    )
    parser.add_argument(
        "--seed", type=int_in(0, MAX_SEED), default=0, help="seed of openings and agents"
    )
    parser.add_argument(
        "--sprt",
        metavar="elo0=E0,elo1=E1[,alpha=A,beta=B]",
        help="stop the match when a sequential test on game pairs decides (logistic Elo)",
    )
    parser.add_argument(
        "--rate", metavar="SPEC", help="rate one agent on the fixed scale (SPEC or NAME=SPEC)"
    )
    parser.add_argument(
        "--ci-width",
        type=number_in(0, 10_000, above=True),
        default=DEFAULT_CI_WIDTH,
        metavar="ELO",
        help=f"--rate stops when the 95%% interval is narrower (default {DEFAULT_CI_WIDTH:g})",
    )
    parser.add_argument(
        "--scale",
        metavar="FILE",
        type=input_file,
        help="a rating scale file (default: the shipped one)",
    )
    parser.add_argument(
        "--db", metavar="FILE", help="append every finished game to this SQLite results database"
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
        type=number_in(0, MAX_SECONDS, above=True),
        metavar="SECONDS",
        help="forfeit an agent that thinks longer than this on one decision",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _check_arguments(
    args: argparse.Namespace,
) -> tuple[MatchSettings, SprtSettings | None, Scale | None]:
    """What the options ask for, checked before any game; ValueError naming the option."""
    if args.rate is not None:
        if args.specs:
            raise ValueError("--rate rates one agent: give no other specs")
        if args.sprt is not None:
            raise ValueError("--rate and --sprt do not mix")
        if args.plot or args.records:
            raise ValueError("--plot and --records go with matches, not --rate")
    elif len(args.specs) < 2:
        raise ValueError("give at least two agent specs (or --rate SPEC)")
    elif args.games is None and args.sprt is None:
        raise ValueError("--games is needed (games per pairing)")
    if args.workers is None:
        args.workers = 0 if args.backend == "ray" else 1
    if args.address is not None and args.backend != "ray":
        raise ValueError("--address goes with --backend ray")
    if args.backend == "ray":
        ray_address(args.address)  # one line for an address that is not Ray's, before Ray loads
    settings = MatchSettings(
        seed=args.seed,
        workers=args.workers,
        opening_plies=args.opening_plies,
        rings_to_win=args.rings_to_win,
        move_time_limit=args.move_time_limit,
        backend=args.backend,
        address=args.address,
    )
    sprt = SprtSettings.parse(args.sprt) if args.sprt is not None else None
    if sprt is not None and len(args.specs) != 2:
        raise ValueError(f"--sprt compares two agents, got {len(args.specs)} specs")
    scale = load_scale(args.scale) if args.scale is not None else None
    if args.db is not None:
        check_db(args.db)
        written = {"--json": args.json, "--plot": args.plot, "--scale": args.scale}
        for option, path in written.items():
            if path is not None and Path(path).resolve() == Path(args.db).resolve():
                raise ValueError(f"{option} {path} is the --db file itself")
    return settings, sprt, scale


def _print_pair(test: Sprt) -> None:
    if test.pairs <= 10 or test.pairs % 10 == 0 or test.decision != "none":
        print(test.status(), flush=True)


def _print_round(games: int, elo: float, ci95: tuple[float, float]) -> None:
    print(f"after {games} games: Elo {elo:.0f} [{ci95[0]:.0f}, {ci95[1]:.0f}]", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings, sprt, scale = _check_arguments(args)
    except ValueError as exc:
        print(f"yinsh-eval: {exc}", file=sys.stderr)
        return 2
    exit_on_signals()  # SIGTERM, SIGHUP: unwind like Ctrl-C, stopping the workers
    result: Any
    try:
        if args.rate is not None:
            result = rate_agent(
                args.rate,
                scale,
                settings,
                ci_width=args.ci_width,
                max_games=args.games or DEFAULT_RATE_GAMES,
                on_round=_print_round,
                db=args.db,
            )
        else:
            result = run_arena(
                args.specs,
                args.games or DEFAULT_SPRT_GAMES,
                settings,
                records_dir=args.records,
                progress=not args.no_progress and sprt is None,
                sprt=sprt,
                on_pair=_print_pair,
                scale=scale,
                db=args.db,
                db_event="yinsh-eval --sprt" if sprt is not None else "yinsh-eval",
            )
    except ValueError as exc:  # bad specs and settings, reported before any game
        print(f"yinsh-eval: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("yinsh-eval: interrupted", file=sys.stderr)
        return 130
    except WorkerDied as exc:  # a worker gone where no agent's turn explains it
        print(f"yinsh-eval: stopped: {exc}", file=sys.stderr)
        return 1
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
    return _forfeit_status(result.games, result.agents)


def _forfeit_status(games: Sequence[GameResult], names: Sequence[str]) -> int:
    """1, with a line on stderr, when an agent failed (not for a move time limit's timeouts)."""
    failed = [g for g in games if g.termination == "forfeit"]
    if not failed:
        return 0
    first = failed[0]
    who = "?" if first.forfeiter is None else names[first.forfeiter]
    print(
        f"yinsh-eval: {len(failed)} of {len(games)} game(s) forfeited because an agent "
        f"failed; first: game {first.task.index}, {who}: {first.reason[:200]}",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
