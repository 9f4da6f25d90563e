"""The command line of :mod:`train.libraries.sb3_maskable_ppo`: budgets, opponents, PPO's
and the network's settings, progress and output, each checked as it is read.

Kept apart from the trainer so that its options (a recipe in ``configs/sb3.yaml`` sets
the same names) read in one place.

>>> args = parse_args(["--opponent", "random", "greedy", "--opponent-weights", "1", "3"])
>>> args.pool_strategy, args.opponent_weights
('weighted', [1.0, 3.0])
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from agents.infra.cli_args import agent_spec, build_agents, int_in, number_in, output_file
from agents.learned.precision import PRECISIONS
from agents.params import MAX_THREADS
from train.libraries.progress import EVERY, add_tensorboard_arguments, check_tensorboard_arguments
from train.libraries.recipe import add_recipe_option, parse_with_recipe
from yinsh_env.envs.env_base import ARENA_OPENING_PLIES, MAX_OPENING_PLIES, MAX_WEIGHT
from yinsh_env.envs.matchmaking import STRATEGIES

DESCRIPTION = (
    "Train sb3-contrib's MaskablePPO on YINSH against opponents or itself, then evaluate it."
)


def _zip_file(text: str) -> Path:
    """An argparse type: where the model goes, with the ``.zip`` SB3 adds, writable."""
    return output_file(parents=True)(text if text.endswith(".zip") else f"{text}.zip")


def _shipped_network(text: str) -> str:
    """An argparse type: the name of a network in ``agents/network/weights/`` (``pretrained``)."""
    from agents.network.pretrained import weights_path
    from train.run_checkpoint import CheckpointError

    try:
        weights_path(text)  # its error names the network and lists the shipped ones
    except CheckpointError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    """The example's command line: opponents and budgets, then progress, network and output."""
    parser = argparse.ArgumentParser(
        prog="python -m train.libraries.sb3_maskable_ppo", description=DESCRIPTION
    )
    add_opponent_arguments(parser)
    add_training_arguments(parser)
    add_recipe_option(parser)
    return parser


def add_opponent_arguments(parser: argparse.ArgumentParser) -> None:
    """The budgets and the opponents: baselines, self-play's pool, a curriculum."""
    count = int_in(1, 1_000_000_000)
    parser.add_argument("--timesteps", type=count, default=20_000, help="learner decisions")
    parser.add_argument(
        "--minutes",
        type=number_in(0, 1e6),
        default=0.0,
        help="stop training after this long (0: no limit)",
    )
    parser.add_argument(
        "--cpu-minutes",
        type=number_in(0, 1e6),
        default=0.0,
        help="stop training once the process has used this much CPU time (0: no limit)",
    )
    parser.add_argument(
        "--opponent",
        type=agent_spec,
        nargs="+",
        default=None,
        help="agent specs of the opponents (default: random unless --self-play/--curriculum)",
    )
    parser.add_argument(
        "--self-play", action="store_true", help="snapshots of the learner join the pool"
    )
    parser.add_argument("--snapshot-every", type=count, default=20_000, help="learner steps")
    parser.add_argument("--pool-size", type=int_in(1, 10_000), default=10, help="snapshots kept")
    parser.add_argument(
        "--pool-strategy",
        choices=(*STRATEGIES, "weighted"),
        default="pfsp",
        help="how the pool picks (default pfsp; --opponent-weights makes it weighted)",
    )
    parser.add_argument(
        "--opponent-weights",
        type=number_in(0, 1e6),
        nargs="+",
        default=None,
        help="a fixed mix: each --opponent's weight (the single-file PPO's recipe)",
    )
    parser.add_argument(
        "--self-share",
        type=number_in(0, 1e6),
        default=None,
        help="with --self-play and weights: the snapshots' weight, all together (default 1)",
    )
    parser.add_argument(
        "--curriculum", type=agent_spec, nargs="+", default=[], help="graded opponents"
    )
    parser.add_argument("--promote-at", type=number_in(0, 1, above=True), default=0.7)
    parser.add_argument("--promote-window", type=int_in(1, 1_000_000), default=100)
    parser.add_argument(
        "--curriculum-share",
        type=number_in(0, 1),
        default=0.5,
        help="episodes given to the curriculum when there is a pool too",
    )


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """Progress and checks, the variant, PPO's and the network's settings, the output."""
    count = int_in(1, 1_000_000_000)
    parser.add_argument(
        "--report-every",
        type=int_in(0, 1_000_000_000),
        default=0,
        help="a progress line every this many steps too (0: by time only)",
    )
    parser.add_argument(
        "--progress-every",
        type=number_in(0, 1e6),
        default=EVERY,
        help="seconds between progress lines",
    )
    parser.add_argument(
        "--eval-every",
        type=int_in(0, 1_000_000_000),
        default=0,
        help="steps between checks against --eval-opponent in the progress lines (0: none)",
    )
    parser.add_argument(
        "--eval-every-games", type=int_in(1, 100_000), default=20, help="games of each check"
    )
    add_tensorboard_arguments(parser, "sb3")
    parser.add_argument(
        "--eval-opponent",
        type=agent_spec,
        default=None,
        help="agent spec to evaluate against (default: the first opponent, else greedy)",
    )
    parser.add_argument("--rings-to-win", type=int_in(1, 5), default=3, help="3 standard, 1 Blitz")
    parser.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    parser.add_argument("--envs", type=int_in(1, 4096), default=64, help="games stepped together")
    parser.add_argument("--n-steps", type=count, default=32, help="rollout length per game")
    parser.add_argument("--batch-size", type=count, default=256)
    parser.add_argument("--n-epochs", type=int_in(1, 10_000), default=4)
    parser.add_argument(
        "--lr", type=number_in(0, 10, above=True), default=3e-4, help="learning rate"
    )
    parser.add_argument("--ent-coef", type=number_in(0, 10), default=0.01, help="entropy bonus")
    parser.add_argument("--gamma", type=number_in(0, 1, above=True), default=1.0, help="discount")
    parser.add_argument("--gae-lambda", type=number_in(0, 1), default=0.95, help="GAE's lambda")
    parser.add_argument("--vf-coef", type=number_in(0, 10), default=0.5, help="x value MSE")
    parser.add_argument(
        "--dense-reward", type=number_in(0, MAX_WEIGHT), default=0.0, help="rings-removed shaping"
    )
    parser.add_argument(
        "--threat-reward",
        type=number_in(0, MAX_WEIGHT),
        default=0.0,
        help="rows-threatened shaping",
    )
    parser.add_argument(
        "--opening-plies",
        type=int_in(0, MAX_OPENING_PLIES),
        default=0,
        help=f"random ring placements opening each game (the arena's: {ARENA_OPENING_PLIES})",
    )
    parser.add_argument(
        "--anneal-lr",
        action="store_true",
        help="decay the learning rate to 0 over the --cpu-minutes/--minutes budget",
    )
    parser.add_argument(
        "--network",
        choices=("cnn", "ppo"),
        default="cnn",
        help="cnn: the small CNN with dense heads; ppo: the single-file PPO's network "
        "(--channels, --blocks), its convolutional policy head",
    )
    parser.add_argument(
        "--blocks", type=int_in(0, 64), default=2, help="residual blocks (--network ppo)"
    )
    parser.add_argument("--channels", type=int_in(1, 4096), default=16, help="conv filters")
    parser.add_argument(
        "--features", type=int_in(1, 65536), default=128, help="units of the dense layer"
    )
    parser.add_argument(
        "--hidden", type=int_in(1, 65536), nargs="*", default=[], help="extra layers of each head"
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="the network's numbers in training: auto (bf16 where the CPU has it natively: "
        "AMX), fp32, bf16; saved models play in fp32",
    )
    parser.add_argument(
        "--warm-start",
        nargs="?",
        const="pretrained",
        default=None,
        type=_shipped_network,
        metavar="NETWORK",
        help="start from a shipped network (default pretrained, as pretrained:sims=0 plays it;"
        " anchor-v1: the first one) instead of the small CNN",
    )
    parser.add_argument("--eval-games", type=int_in(0, 1_000_000), default=20)
    parser.add_argument(
        "--threads", type=int_in(1, MAX_THREADS), default=1, help="torch CPU threads"
    )
    parser.add_argument(
        "--save", type=_zip_file, default=None, help="where to save the model (.zip)"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The arguments, the opponents' defaults filled in, every agent spec built once."""
    parser = build_parser()
    args = parse_with_recipe(parser, argv, "train.libraries.sb3_maskable_ppo")
    check_tensorboard_arguments(parser, args)
    if args.opponent is None:
        args.opponent = [] if args.self_play or args.curriculum else ["random"]
    args.eval_opponent = args.eval_opponent or (args.opponent or ["greedy"])[0]
    build_agents(parser, {*args.opponent, *args.curriculum, args.eval_opponent})
    if args.opponent_weights is not None:
        if len(args.opponent_weights) != len(args.opponent):
            parser.error(
                f"--opponent-weights: {len(args.opponent_weights)} weight(s) for "
                f"{len(args.opponent)} --opponent(s): give one each"
            )
        if sum(args.opponent_weights) <= 0 and not args.self_play:
            parser.error("--opponent-weights: every weight is 0: no opponent could be met")
        args.pool_strategy = "weighted"
    elif args.pool_strategy == "weighted":
        parser.error("--pool-strategy weighted needs --opponent-weights")
    if args.self_share is not None and args.pool_strategy != "weighted":
        parser.error("--self-share weighs the snapshots in a fixed mix: give --opponent-weights")
    return args
