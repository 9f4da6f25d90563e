"""Train a masked policy with RLlib's PPO on the multi-agent YINSH environment.

Needs the optional extra: ``pip install -e ".[rllib]"``.  Examples::

    python -m train.libraries.rllib_example --iterations 20                    # self-play
    python -m train.libraries.rllib_example --minutes 60 --snapshots 5 --eval-every 20
    python -m train.libraries.rllib_example --iterations 20 --opponent greedy  # a baseline
    python -m train.libraries.rllib_example --minutes 14 --opponent random --save runs/rllib
    python -m train.libraries.rllib_example --iterations 50 --env-runners 4 --address auto
    python -m train.libraries.rllib_example --recipe configs/rllib.yaml --seed 4

``--save DIR`` writes the learner's module, which the agent spec
``rllib:path=DIR`` plays (:mod:`agents.learned.rllib_agent`).  Normal output is the
example's own lines; ``--verbose`` keeps Ray's and RLlib's logs.

The adapter, step by step:

* **Environment.**  RLlib's ``PettingZooEnv`` wraps the AEC environment
  (:func:`yinsh_env.env`) as a ``MultiAgentEnv``: each step returns the
  observation of the agent to act next only (the same agent again while it
  removes rows and rings), and at the end every agent's last observation and
  reward (+1 / -1 / 0).
* **Observations.**  Each agent's observation is the environment's dict,
  unchanged: ``"observation"``, the (11, 11, 17) float planes from the acting
  player's side (:mod:`yinsh_env.envs.observation`), and ``"action_mask"``, the
  int8 legal-action mask over the 2142 actions.  RLlib keeps the dict
  structure through its connectors, so the module receives both as tensors.
* **Masking.**  :class:`MaskedPolicyModule` reads the planes with a small
  convolutional trunk, and before returning the action-distribution inputs
  sets the logits of illegal actions to the lowest float: sampling and the
  greedy choice only ever pick legal actions, and PPO's log-probabilities and
  entropy are those of the distribution over legal actions.  Rows without a
  legal action (the final observations, which choose nothing) keep their
  logits, so that no distribution is degenerate.
* **Self-play.**  Both agents map to one shared module (``learner``), which
  works because observations are written from the acting player's side.
  ``--snapshots L`` adds a league: ``L`` frozen copies of the learner, one
  taken every ``--snapshot-every`` iterations, meet it in all episodes but
  ``--self-share`` of them (:mod:`train.libraries.rllib_league`); ``--league-opponents
  random`` adds fixed agents met in ``--league-share`` of the episodes.  Self-play's mean
  return is 0 by symmetry, so ``--eval-every K`` prints the policy's score
  against ``--eval-opponent`` every ``K`` iterations: the run's progress.
  With ``--opponent SPEC`` the learner instead plays a fixed baseline agent
  (:class:`BaselineModule` wraps any agent spec: ``random``, ``greedy``,
  ``alphabeta:depth=1``), on alternating sides, and only the learner trains.

After training, the policy plays ``--eval-games`` greedy games against
``--eval-opponent`` on the plain PettingZoo environment, every move checked
legal.  This is a baseline for RLlib users, not the project's trainer (see
:mod:`train.trainer` for the AlphaZero-style one).
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from agents import Agent, make_agent
from agents.infra.cli_args import agent_spec, build_agents, int_in, number_in, output_dir
from agents.infra.ray_address import ray_address
from agents.learned.library_agent import save_variant
from agents.learned.rllib_models import LEARNER, MaskedPolicyModule, model_settings
from agents.params import MAX_THREADS
from train.libraries.match_results import Evaluation
from train.libraries.progress import (
    RunProgress,
    add_tensorboard_arguments,
    check_tensorboard_arguments,
    tensorboard_dir,
)
from train.libraries.recipe import add_recipe_option, parse_with_recipe
from train.libraries.rllib_league import SnapshotLeague, fixed_ids, league_mapping, snapshot_ids
from yinsh_env import env as make_aec_env
from yinsh_env.engine.errors import IllegalActionError
from yinsh_env.envs.env_base import AGENTS, ARENA_OPENING_PLIES, MAX_OPENING_PLIES

try:
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'the RLlib example needs Ray RLlib, an optional extra: pip install -e ".[rllib]"'
    ) from exc

ENV_NAME = "yinsh_pettingzoo"
BASELINE = "baseline"


def make_env(env_config: dict[str, Any] | None = None) -> PettingZooEnv:
    """The YINSH AEC environment as an RLlib ``MultiAgentEnv``."""
    env_config = env_config or {}
    return PettingZooEnv(
        make_aec_env(
            rings_to_win=int(env_config.get("rings_to_win", 3)),
            opening_plies=int(env_config.get("opening_plies", 0)),
        )
    )


class BaselineModule(RLModule):
    """A fixed opponent: any agent spec (``model_config["spec"]``), never trained.

    It reads each observation back into a position (the agents' own
    ``act_observation``) and returns the agent's action directly.
    """

    def setup(self) -> None:
        settings = model_settings(self.model_config)
        self.agent: Agent = make_agent(
            str(settings.get("spec", "random")), seed=settings.get("seed")
        )

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        planes, masks = _numpy(obs["observation"]), _numpy(obs["action_mask"])
        actions = [
            self.agent.act_observation({"observation": p, "action_mask": m})
            for p, m in zip(planes, masks)
        ]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("the baseline opponent is not trained")


def _numpy(value: Any) -> np.ndarray:
    return value.cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def quiet_ray(level: int = logging.ERROR) -> None:
    """Ray's and RLlib's loggers at ``level``: by default only errors reach the output.

    At INFO/WARNING they print, on every run, notices about their own
    defaults and internals (token authentication, "running PPO on the new API
    stack", a deprecation RLlib's ``RLModule`` constructor raises against its
    own code), none of which the user can act on.
    """
    for name in ("ray", "ray.rllib", "ray.tune"):
        logging.getLogger(name).setLevel(level)


def learner_side(episode: Any) -> str:
    """The agent the learner plays in ``episode`` against a baseline: alternates by episode."""
    return AGENTS[zlib.crc32(str(episode.id_).encode()) % 2]


def build_config(
    opponent: str = "self",
    rings_to_win: int = 3,
    seed: int = 0,
    env_runners: int = 0,
    envs: int = 8,
    batch_size: int = 2000,
    minibatch_size: int = 256,
    epochs: int = 4,
    lr: float = 5e-4,
    channels: int = 16,
    hidden: int = 128,
    entropy: float = 0.01,
    snapshots: int = 0,
    league_opponents: Sequence[str] = (),
    league_share: float = 0.25,
    gamma: float = 1.0,
    opening_plies: int = 0,
) -> Any:
    """The PPO config: masked module(s), self-play or a baseline opponent.

    ``gamma``: the discount (1.0 by default: one reward, at the end of a bounded game).
    ``opening_plies``: each game opens with that many random ring placements, as the
    arena's do (:data:`~yinsh_env.envs.env_base.ARENA_OPENING_PLIES`).

    ``snapshots`` (self-play only) adds that many untrained slots of the
    learner's class for :class:`~train.libraries.rllib_league.SnapshotLeague`; until
    it fills one, every episode is pure self-play.  ``league_opponents`` (agent
    specs, self-play only) join the league from the start as fixed modules, met in
    ``league_share`` of the episodes.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    model_config = {"channels": channels, "hidden": hidden}
    specs = {LEARNER: RLModuleSpec(module_class=MaskedPolicyModule, model_config=model_config)}
    if (snapshots or league_opponents) and opponent != "self":
        raise ValueError(f"a league is for self-play, not against {opponent!r}")
    for slot in snapshot_ids(snapshots):
        specs[slot] = RLModuleSpec(module_class=MaskedPolicyModule, model_config=model_config)
    fixed = fixed_ids(len(league_opponents))
    for i, (module_id, spec) in enumerate(zip(fixed, league_opponents)):
        make_agent(spec)  # a bad spec fails here, before Ray starts anything
        specs[module_id] = RLModuleSpec(
            module_class=BaselineModule, model_config={"spec": spec, "seed": seed + 1 + i}
        )
    if opponent == "self":
        mapping = league_mapping(LEARNER, [], 1.0, fixed=fixed, fixed_share=league_share)
    else:
        make_agent(opponent)  # a bad spec fails here, before Ray starts anything
        specs[BASELINE] = RLModuleSpec(
            module_class=BaselineModule, model_config={"spec": opponent, "seed": seed}
        )

        def mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
            return LEARNER if agent_id == learner_side(episode) else BASELINE

    return (
        PPOConfig()
        # RLlib's environment check steps with unmasked random actions, which
        # end YINSH games as illegal moves (with a warning); the environment
        # passes PettingZoo's own API test instead (tests/yinsh_env/envs/test_aec_env.py).
        .environment(
            ENV_NAME,
            env_config={"rings_to_win": rings_to_win, "opening_plies": opening_plies},
            disable_env_checking=True,
        )
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs)
        .learners(num_learners=0)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=batch_size,
            minibatch_size=minibatch_size,
            num_epochs=epochs,
            lr=lr,
            gamma=gamma,
            lambda_=0.95,
            entropy_coeff=entropy,
        )
        .debugging(seed=seed, log_sys_usage=False)  # needs GPUtil, and warns without it
    )


def evaluate(
    module: MaskedPolicyModule,
    opponent: str,
    games: int,
    rings_to_win: int = 3,
    seed: int = 1000,
    opening_plies: int = 0,
) -> Evaluation:
    """Play ``games`` games on the PettingZoo environment, the policy alternating colours,
    each opened with ``opening_plies`` random ring placements."""
    baseline = make_agent(opponent, seed=seed)
    evaluation = Evaluation()
    for game in range(games):
        env = make_aec_env(rings_to_win=rings_to_win, opening_plies=opening_plies)
        env.reset(seed=seed + game)
        baseline.reset(seed=seed + game)
        learner = AGENTS[game % 2]
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                if agent == learner:
                    evaluation.add_reward(reward)
                env.step(None)
                continue
            assert observation is not None
            if agent == learner:
                action = module.greedy_action(observation)
                if not observation["action_mask"][action]:
                    raise IllegalActionError(f"the policy chose illegal action {action}")
                evaluation.moves += 1
            else:
                action = baseline.act_observation(observation)
            env.step(action)
    return evaluation


def _opponent(text: str) -> str:
    """An argparse type: ``self`` or an agent spec."""
    return text if text == "self" else agent_spec(text)


def build_parser() -> argparse.ArgumentParser:
    """The example's command line: the run and its Ray, then self-play's league."""
    parser = argparse.ArgumentParser(
        prog="python -m train.libraries.rllib_example", description=__doc__.splitlines()[0]
    )
    add_run_arguments(parser)
    add_league_arguments(parser)
    add_recipe_option(parser)
    return parser


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The opponent, PPO's and the network's settings, budgets, Ray, checks and output."""
    count = int_in(1, 1_000_000_000)
    parser.add_argument("--iterations", type=count, default=10, help="PPO training iterations")
    parser.add_argument(
        "--opponent",
        type=_opponent,
        default="self",
        help="'self' (shared-policy self-play) or an agent spec",
    )
    parser.add_argument("--rings-to-win", type=int_in(1, 5), default=3, help="3 standard, 1 Blitz")
    parser.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    parser.add_argument("--batch-size", type=count, default=2000, help="env steps per iteration")
    parser.add_argument("--minibatch-size", type=count, default=256)
    parser.add_argument(
        "--epochs", type=int_in(1, 10_000), default=4, help="passes over each batch"
    )
    parser.add_argument("--lr", type=number_in(0, 10, above=True), default=5e-4)
    parser.add_argument(
        "--channels", type=int_in(1, 4096), default=16, help="conv filters of the trunk"
    )
    parser.add_argument(
        "--hidden", type=int_in(1, 65536), default=128, help="units of the shared layer"
    )
    parser.add_argument("--entropy", type=number_in(0, 10), default=0.01, help="entropy bonus")
    parser.add_argument("--gamma", type=number_in(0, 1, above=True), default=1.0, help="discount")
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


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, checked together; torch's threads set; every agent spec built once."""
    args = parse_with_recipe(parser, argv, "train.libraries.rllib_example")
    check_tensorboard_arguments(parser, args)
    if (args.snapshots or args.league_opponents) and args.opponent != "self":
        parser.error("--snapshots and --league-opponents need self-play (--opponent self)")
    # Small batches gain nothing from more threads, and idle threads spinning
    # on a busy CPU slow every convolution down many times.
    torch.set_num_threads(args.threads)
    build_agents(parser, {args.opponent, args.eval_opponent, *args.league_opponents} - {"self"})
    return args


def start_ray(args: argparse.Namespace, parser: argparse.ArgumentParser) -> bool:
    """Ray, quiet unless ``--verbose``: started here (locally or at ``--address``) unless
    it already runs; whether it was started here (and is to be shut down)."""
    import ray

    level = logging.INFO if args.verbose else logging.ERROR
    quiet_ray(level)
    if ray.is_initialized():
        return False
    try:  # no address: a local Ray, even with a stale cluster file; a dead one: refused
        address = ray_address(args.address)
    except ValueError as exc:
        parser.error(str(exc))
    ray.init(
        address=address,
        num_cpus=args.cpus,
        include_dashboard=False,
        logging_level=level,
    )
    return True


def config_of(args: argparse.Namespace) -> Any:
    """The PPO config the arguments ask for (:func:`build_config`)."""
    return build_config(
        opponent=args.opponent,
        rings_to_win=args.rings_to_win,
        seed=args.seed,
        env_runners=args.env_runners,
        envs=args.envs,
        batch_size=args.batch_size,
        minibatch_size=args.minibatch_size,
        epochs=args.epochs,
        lr=args.lr,
        channels=args.channels,
        hidden=args.hidden,
        entropy=args.entropy,
        snapshots=args.snapshots,
        league_opponents=args.league_opponents,
        league_share=args.league_share,
        gamma=args.gamma,
        opening_plies=args.opening_plies,
    )


def league_of(args: argparse.Namespace) -> SnapshotLeague | None:
    """Self-play's league of snapshots and fixed opponents, if the arguments ask for one."""
    if not (args.snapshots or args.league_opponents):
        return None
    return SnapshotLeague(
        LEARNER,
        args.snapshots,
        args.snapshot_every,
        args.self_share,
        fixed=fixed_ids(len(args.league_opponents)),
        fixed_share=args.league_share,
    )


def train_iterations(
    algo: Any, args: argparse.Namespace, league: SnapshotLeague | None, progress: RunProgress
) -> None:
    """``--iterations`` of PPO (fewer once a budget is spent), a line after each."""
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(1, args.iterations + 1):
        result = algo.train()
        runners = result.get("env_runners", {})
        steps = int(result.get("num_env_steps_sampled_lifetime", 0))
        length = runners.get("episode_len_mean", float("nan"))
        line = f"iteration {i}: {steps} env steps, mean episode length {length:.1f}"
        figures = {"episode_length": length}
        if args.opponent != "self" or league is not None:
            returns = runners.get("module_episode_returns_mean", {})
            mean_return = returns.get(LEARNER, float("nan"))
            line += f", learner's mean return {mean_return:+.2f}"
            figures["episode_return"] = mean_return
        if league is not None and league.after_iteration(algo, i):
            line += f", snapshot {len(league.history)}"
        if args.eval_every and i % args.eval_every == 0:
            module = algo.get_module(LEARNER)
            check = evaluate(
                module, args.eval_opponent, 10, args.rings_to_win, i, args.opening_plies
            )
            line += f", vs {args.eval_opponent} {check.score:.2f} (10 games)"
            progress.scalar(f"check/{args.eval_opponent}", check.score, steps)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        rate = steps / elapsed if elapsed > 0 else 0.0
        figures["steps_per_second"] = rate
        progress.advance(steps)
        progress.write(f"{line}, {elapsed:.1f} s, {cpu:.0f} CPU-s, {rate:.0f} steps/s")
        for name, value in figures.items():
            progress.scalar(f"progress/{name}", value, steps)
        if args.minutes > 0 and elapsed > args.minutes * 60:
            break
        if args.cpu_minutes > 0 and cpu > args.cpu_minutes * 60:
            break


def save_and_evaluate(algo: Any, args: argparse.Namespace) -> Evaluation:
    """The learner's module saved to ``--save`` (if given), then its ``--eval-games``."""
    module = algo.get_module(LEARNER)
    assert isinstance(module, MaskedPolicyModule)
    if args.save is not None:
        module.save_to_path(os.path.abspath(args.save))
        save_variant(args.save, args.rings_to_win)
        print(f"saved {args.save}")
    return evaluate(
        module,
        args.eval_opponent,
        args.eval_games,
        args.rings_to_win,
        opening_plies=args.opening_plies,
    )


def main(argv: Sequence[str] | None = None) -> Evaluation:
    parser = build_parser()
    args = parse_args(parser, argv)
    started = start_ray(args, parser)
    try:
        algo = config_of(args).build_algo()
        league = league_of(args)
        log_dir = tensorboard_dir(args, "rllib")
        progress = RunProgress(args.iterations * args.batch_size, every=0, log_dir=log_dir)
        progress.announce()
        try:
            train_iterations(algo, args, league, progress)
            progress.close()
            evaluation = save_and_evaluate(algo, args)
        finally:
            progress.close()
            algo.stop()
    finally:
        if started:
            import ray

            ray.shutdown()
    print(evaluation.summary(args.eval_opponent))
    return evaluation


if __name__ == "__main__":
    # The importable module's main, so that saved models name train.libraries.rllib_example's
    # classes rather than copies of __main__'s.
    from train.libraries.rllib_example import main as module_main

    module_main()
