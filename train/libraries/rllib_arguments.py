"""The command line of :mod:`train.libraries.rllib_example`: the run, PPO's and the
network's settings, shaping, budgets, Ray, self-play's league, each checked as it is read.

Kept apart from the trainer so that its options (a recipe in ``configs/rllib.yaml`` sets
the same names) read in one place, and so that reading them needs no Ray.

>>> args = parse_args(build_parser(), ["--network", "ppo", "--league-opponents", "random",
...     "greedy", "--league-weights", "1", "3"])
>>> args.network, args.league_weights
('ppo', [1.0, 3.0])
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch

from agents.infra.cli_args import agent_spec, build_agents, int_in, number_in, output_dir
from agents.params import MAX_THREADS
from train.libraries.dataclass_args import yes_no
from train.libraries.progress import add_tensorboard_arguments, check_tensorboard_arguments
from train.libraries.recipe import add_recipe_option, parse_with_recipe
from yinsh_env.envs.env_base import ARENA_OPENING_PLIES, MAX_OPENING_PLIES, MAX_WEIGHT

DESCRIPTION = "Train a masked policy with RLlib's PPO on the multi-agent YINSH environment."


def _opponent(text: str) -> str:
    """An argparse type: ``self`` or an agent spec."""
    return text if text == "self" else agent_spec(text)


def build_parser() -> argparse.ArgumentParser:
    """The example's command line: the run and its Ray, then self-play's league."""
    parser = argparse.ArgumentParser(
        prog="python -m train.libraries.rllib_example", description=DESCRIPTION
    )
    add_run_arguments(parser)
    add_ppo_arguments(parser)
    add_league_arguments(parser)
    add_recipe_option(parser)
    return parser


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The opponent, the games, budgets, Ray, checks and output."""
    count = int_in(1, 1_000_000_000)
    parser.add_argument("--iterations", type=count, default=10, help="PPO training iterations")
    parser.add_argument(
        "--opponent",
        type=_opponent,
        default="self",
        help="'self' (shared-policy self-play) or an agent spec",
    )
    parser.add_argument(
        "--env",
        choices=("aec", "vector"),
        default="aec",
        help="aec: the multi-agent environment, every seat a module (self-play, the league); "
        "vector: the vector environment, the opponents inside it (train.libraries.rllib_vector)",
    )
    parser.add_argument("--rings-to-win", type=int_in(1, 5), default=3, help="3 standard, 1 Blitz")
    parser.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    parser.add_argument(
        "--opening-plies",
        type=int_in(0, MAX_OPENING_PLIES),
        default=0,
        help=f"random ring placements opening each game (the arena's: {ARENA_OPENING_PLIES})",
    )
    parser.add_argument(
        "--envs",
        type=int_in(1, 1024),
        default=8,
        help="environments per env runner, stepped together",
    )
    parser.add_argument(
        "--minutes",
        type=number_in(0, 1e6),
        default=0.0,
        help="stop after the iteration that passes this",
    )
    parser.add_argument(
        "--cpu-minutes",
        type=number_in(0, 1e6),
        default=0.0,
        help="stop after the iteration that passes this much CPU time of this process "
        "(where sampling and learning run with --env-runners 0)",
    )
    parser.add_argument(
        "--env-runners",
        type=int_in(0, 1024),
        default=0,
        help="Ray actors sampling games (0: in the driver)",
    )
    parser.add_argument(
        "--address", default=None, help="Ray cluster (auto, ray://head:10001); default: local"
    )
    parser.add_argument("--cpus", type=int_in(1, 65536), default=None, help="CPUs of a local Ray")
    parser.add_argument("--eval-games", type=int_in(0, 1_000_000), default=10)
    parser.add_argument("--eval-opponent", type=agent_spec, default="random", help="agent spec")
    parser.add_argument(
        "--save",
        type=output_dir,
        default=None,
        help="directory for the learner's module (spec rllib:path=DIR)",
    )
    parser.add_argument("--verbose", action="store_true", help="keep Ray's and RLlib's own logs")
    add_tensorboard_arguments(parser, "rllib")


def add_ppo_arguments(parser: argparse.ArgumentParser) -> None:
    """PPO's settings, the network's, and the shaping of the rewards.

    The defaults are RLlib's own; ``configs/rllib.yaml`` sets the single-file PPO's.
    """
    count = int_in(1, 1_000_000_000)
    parser.add_argument("--batch-size", type=count, default=2000, help="env steps per iteration")
    parser.add_argument("--minibatch-size", type=count, default=256)
    parser.add_argument(
        "--epochs", type=int_in(1, 10_000), default=4, help="passes over each batch"
    )
    parser.add_argument("--lr", type=number_in(0, 10, above=True), default=5e-4)
    parser.add_argument(
        "--anneal-lr",
        type=yes_no,
        default=False,
        help="true: decay the learning rate linearly to 0 over the budget (--cpu-minutes, "
        "--minutes, else --iterations), as the single-file PPO does (default: false)",
    )
    parser.add_argument(
        "--channels", type=int_in(1, 4096), default=16, help="conv filters of the trunk"
    )
    parser.add_argument(
        "--hidden", type=int_in(1, 65536), default=128, help="units of the shared layer"
    )
    parser.add_argument("--entropy", type=number_in(0, 10), default=0.01, help="entropy bonus")
    parser.add_argument("--gamma", type=number_in(0, 1, above=True), default=1.0, help="discount")
    parser.add_argument(
        "--network",
        choices=("cnn", "ppo"),
        default="cnn",
        help="cnn: a small trunk and dense heads (--channels, --hidden); ppo: the single-file "
        "PPO's residual network (--channels, --blocks)",
    )
    parser.add_argument(
        "--blocks", type=int_in(0, 64), default=2, help="residual blocks (--network ppo)"
    )
    parser.add_argument(
        "--clip", type=number_in(0, 10, above=True), default=0.3, help="PPO's ratio clip"
    )
    parser.add_argument("--vf-coef", type=number_in(0, 10), default=1.0, help="value loss weight")
    parser.add_argument(
        "--grad-clip",
        type=number_in(0, 1e6),
        default=0.0,
        help="clip the gradients' global norm to this (0: no clip)",
    )
    parser.add_argument(
        "--kl-coeff",
        type=number_in(0, 10),
        default=0.2,
        help="weight of RLlib's KL penalty (0: none, as the single-file PPO)",
    )
    weight = number_in(0, MAX_WEIGHT)
    parser.add_argument(
        "--dense-reward",
        type=weight,
        default=0.0,
        help="shaping from rings removed, both seats (the environment's dense_reward)",
    )
    parser.add_argument(
        "--threat-reward",
        type=weight,
        default=0.0,
        help="shaping from rows threatened, both seats (the environment's threat_reward)",
    )


def add_league_arguments(parser: argparse.ArgumentParser) -> None:
    """Self-play's snapshots and fixed opponents; checks during the run; threads."""
    count = int_in(1, 1_000_000_000)
    parser.add_argument(
        "--snapshots",
        type=int_in(0, 1000),
        default=0,
        help="frozen copies of the learner as opponents (self-play only; 0: none)",
    )
    parser.add_argument(
        "--snapshot-every", type=count, default=10, help="iterations between snapshots"
    )
    parser.add_argument(
        "--self-share",
        type=number_in(0, 1),
        default=0.5,
        help="episodes of learner against learner once there are snapshots",
    )
    parser.add_argument(
        "--league-opponents",
        type=agent_spec,
        nargs="+",
        default=[],
        help="agent specs that join the self-play league as fixed opponents",
    )
    parser.add_argument(
        "--league-weights",
        type=number_in(0, 1e6),
        nargs="+",
        default=None,
        help="how often each of --league-opponents is met, relative (default: equally)",
    )
    parser.add_argument(
        "--league-share",
        type=number_in(0, 1),
        default=0.25,
        help="episodes against the --league-opponents",
    )
    parser.add_argument(
        "--eval-every",
        type=int_in(0, 1_000_000),
        default=0,
        help="iterations between 10-game checks against --eval-opponent (0: none)",
    )
    parser.add_argument(
        "--threads",
        type=int_in(1, MAX_THREADS),
        default=1,
        help="torch CPU threads (sampling and learning)",
    )


def budget_spent(args: argparse.Namespace, iteration: int, elapsed: float, cpu: float) -> float:
    """The share of the run's budget used: the larger of the wall-clock and CPU shares
    where ``--minutes`` or ``--cpu-minutes`` set one, else the share of ``--iterations``.

    >>> from argparse import Namespace
    >>> budget_spent(Namespace(minutes=0, cpu_minutes=10, iterations=99), 3, 900.0, 150.0)
    0.25
    >>> budget_spent(Namespace(minutes=0, cpu_minutes=0, iterations=20), 5, 1.0, 1.0)
    0.25
    """
    shares = []
    if args.minutes > 0:
        shares.append(elapsed / (args.minutes * 60))
    if args.cpu_minutes > 0:
        shares.append(cpu / (args.cpu_minutes * 60))
    return max(shares) if shares else iteration / args.iterations


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, checked together; torch's threads set; every agent spec built once."""
    args = parse_with_recipe(parser, argv, "train.libraries.rllib_example")
    check_tensorboard_arguments(parser, args)
    if args.env == "vector":
        if args.opponent == "self" and not (args.snapshots or args.league_opponents):
            parser.error("--env vector needs --opponent, --league-opponents, --snapshots")
        if args.snapshots and args.network != "ppo":
            parser.error("--env vector's snapshots are the single-file PPO's: --network ppo")
    elif (args.snapshots or args.league_opponents) and args.opponent != "self":
        parser.error("--snapshots and --league-opponents need self-play (--opponent self)")
    weights = args.league_weights
    if weights is not None and len(weights) != len(args.league_opponents):
        parser.error(
            f"--league-weights gives {len(weights)} weights for "
            f"{len(args.league_opponents)} --league-opponents"
        )
    if weights is not None and not sum(weights) > 0:
        parser.error("--league-weights must not all be 0")
    # Small batches gain nothing from more threads, and idle threads spinning
    # on a busy CPU slow every convolution down many times.
    torch.set_num_threads(args.threads)
    build_agents(parser, {args.opponent, args.eval_opponent, *args.league_opponents} - {"self"})
    return args
