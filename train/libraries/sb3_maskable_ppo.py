"""Train sb3-contrib's MaskablePPO on YINSH against opponents or itself, then evaluate it.

Needs the optional extra: ``pip install -e ".[sb3]"``.  Examples::

    python -m train.libraries.sb3_maskable_ppo --timesteps 20000 --opponent random --eval-games 50
    python -m train.libraries.sb3_maskable_ppo --self-play --opponent greedy --minutes 60 \
        --timesteps 100000000 --save runs/sb3/selfplay.zip
    python -m train.libraries.sb3_maskable_ppo --curriculum random greedy --self-play --minutes 30
    python -m train.libraries.sb3_maskable_ppo --recipe configs/sb3.yaml --seed 4

The environments are ``--envs`` games of the vector environment
(:class:`yinsh_env.vector.sb3.YinshSB3VecEnv`, default 64), stepped together: each
step is one learner decision in every game, and the opponents then decide for
all their games at once (``act_batch``: one forward pass per snapshot, per
step).  The learner alternates sides between episodes.  Its opponents are
agent specs (``random``, ``greedy``, ``alphabeta:depth=1``, ...): one ``--opponent``
plays every game; several form a pool (:mod:`yinsh_env.envs.matchmaking`).
``--self-play`` adds frozen snapshots of the learner to that pool when
training starts and every ``--snapshot-every`` steps (``--pool-size`` kept,
sampled by ``--pool-strategy``: ``pfsp`` by default, meeting most the
opponents it beats least); ``--curriculum A B ...`` meets graded opponents
one at a time, moving on at a score of ``--promote-at`` over
``--promote-window`` games, and with a pool too, takes ``--curriculum-share``
of the episodes.

Progress (:mod:`train.libraries.progress`): a line every ``--progress-every``
seconds (30 by default; also every ``--report-every`` steps when given) with
the steps, steps per second, the mean episode return and the learner's score
against each opponent met since the last line; ``--eval-every`` steps adds a
check of ``--eval-every-games`` games against ``--eval-opponent``.  The same
figures, and SB3's own (losses, entropy), go to TensorBoard under
``--tensorboard`` (``runs/tensorboard`` by default; ``--no-tensorboard``: none),
and a progress bar runs where the output is a terminal.  At the end a profile
line splits the time between the environments (with the opponents' moves) and
the network, and the greedy policy plays ``--eval-games`` games against
``--eval-opponent``, many at once on the vector environment.

``--warm-start`` starts the policy from the shipped network,
``pretrained:sims=0`` (:mod:`agents.learned.sb3_models`; ``--warm-start
anchor-v1``: the first one), and fine-tunes it.  Observations are the
environment's dict; :class:`PlanesCNN`, a small convolutional features
extractor, reads the planes (the mask is not an input: it reaches the policy
through ``action_masks()``, so every move played is legal).

SB3's default for a dict observation, ``CombinedExtractor``, flattens the
planes and the 2,142-entry mask into 4,199 inputs of an MLP: about 2.8 million
weights, saved with Adam's two moment estimates each, a 34 MB model file, and
slow.  The CNN has about 0.4 million weights (a model file of about 5 MB,
Adam's state included, which SB3 always saves).  ``--save`` writes the model
that the agent spec ``sb3:path=MODEL.zip`` plays (:mod:`agents.learned.sb3_agent`).
This is a baseline for library users, not the project's trainer (see
:mod:`train` for the AlphaZero-style one).
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents import make_agent
from agents.baselines.greedy import GreedyAgent
from agents.baselines.greedy_batch import GreedyOpponent
from agents.infra.cli_args import agent_spec, build_agents, int_in, number_in, output_file
from agents.learned.library_agent import save_variant
from agents.learned.precision import PRECISIONS
from agents.learned.sb3_models import PlanesCNN, PlanesPolicy
from agents.params import MAX_THREADS
from train.libraries.match_results import Evaluation
from train.libraries.progress import (
    EVERY,
    RunProgress,
    add_tensorboard_arguments,
    check_tensorboard_arguments,
    tensorboard_dir,
)
from train.libraries.recipe import add_recipe_option, parse_with_recipe
from yinsh_env.engine.errors import IllegalActionError
from yinsh_env.envs.env_base import MAX_WEIGHT
from yinsh_env.envs.gym_env import YinshGymEnv
from yinsh_env.envs.matchmaking import STRATEGIES
from yinsh_env.util.atomic_write import write_bytes
from yinsh_env.vector.env import YinshVectorEnv

try:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.learned.sb3_masking import use_fast_masking
    from train.libraries.sb3_callbacks import CpuTimeLimit, ProgressCallback, TimeLimit
    from train.libraries.sb3_fast import BoolMaskDictRolloutBuffer, fused_adam
    from train.libraries.sb3_selfplay import (
        Profile,
        SelfPlayCallback,
        TimedVecEnv,
        build_sampler,
        snapshot_pool,
    )
    from yinsh_env.vector.sb3 import YinshSB3VecEnv
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'the MaskablePPO example needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc


def make_env(opponent: Any = "random", seed: int = 0, rings_to_win: int = 3) -> YinshGymEnv:
    """The training environment: the learner alternates sides against ``opponent``.

    ``opponent`` is an agent spec (built here, seeded with ``seed``) or
    anything :class:`~yinsh_env.envs.gym_env.YinshGymEnv` takes (an opponent sampler).
    """
    return YinshGymEnv(
        opponent=make_agent(opponent, seed=seed) if isinstance(opponent, str) else opponent,
        learner="alternate",
        rings_to_win=rings_to_win,
        illegal_reward=None,  # a masked learner never plays an illegal move: fail loudly
    )


def vector_opponent(opponent: Any, seed: int = 0) -> Any:
    """What the vector environment plays against: ``random`` as its own batched random
    player, ``greedy`` (any noise) as :class:`~agents.baselines.greedy_batch.GreedyOpponent`
    (all games' moves scored at once), another agent spec built (seeded with ``seed``),
    anything else as it is."""
    if not isinstance(opponent, str) or opponent == "random":
        return opponent
    agent = make_agent(opponent, seed=seed)
    return GreedyOpponent(agent.noise) if type(agent) is GreedyAgent else agent


def make_vec_env(
    opponent: Any = "random",
    seed: int = 0,
    rings_to_win: int = 3,
    envs: int = 64,
    dense_reward: float = 0.0,
    gamma: float = 0.99,
) -> YinshSB3VecEnv:
    """``envs`` games of the vector environment against ``opponent``, for MaskablePPO.

    ``opponent``: an agent spec, an agent, or a sampler of
    :mod:`yinsh_env.envs.matchmaking` choosing per game and episode; the learner
    alternates sides.  Seeded with ``seed``.  ``dense_reward``: the environment's
    shaping from rings removed, potential-based for the discount ``gamma`` (PPO's
    own: another discount would make the shaping change what is optimal).
    """
    env = YinshSB3VecEnv(
        num_envs=envs,
        opponent=vector_opponent(opponent, seed),
        learner="alternate",
        rings_to_win=rings_to_win,
        illegal_reward=None,  # a masked learner never plays an illegal move: fail loudly
        dense_reward=dense_reward,
        gamma=gamma,
    )
    env.seed(seed)
    return env


def build_model(
    env: Any,
    seed: int = 0,
    n_steps: int = 32,
    batch_size: int = 256,
    n_epochs: int = 4,
    channels: int = 16,
    features: int = 128,
    hidden: Sequence[int] = (),
    learning_rate: float = 3e-4,
    ent_coef: float = 0.01,
    gamma: float = 1.0,
    gae_lambda: float = 0.95,
    vf_coef: float = 0.5,
    verbose: int = 0,
    warm_start: bool | str = False,
    tensorboard: str | Path | None = None,
    precision: str = "fp32",
) -> Any:
    """A MaskablePPO model: :class:`PlanesCNN` features, then ``hidden`` layers per head.

    ``n_steps`` is the rollout length per environment (``env`` may be a VecEnv).
    ``warm_start``: the shipped network instead (:mod:`agents.learned.sb3_models`; a
    string names which, ``True`` is ``pretrained``; ``channels``, ``features`` and
    ``hidden`` do not apply).  ``tensorboard``: where SB3 writes its own scalars
    (losses, entropy); None, none.  ``precision``: the network's number format
    (:mod:`agents.learned.precision`; ``auto`` is bf16 where the CPU has it
    natively).  The masked distribution is
    :mod:`agents.learned.sb3_masking`'s.  ``vf_coef`` weighs SB3's value loss, the
    plain squared error: CleanRL's (and the single-file PPO's) ``vf_coef`` weighs
    half of it, so theirs 0.5 is SB3's 0.25 (tests/train/libraries/test_parity.py).
    """
    if warm_start:
        from agents.learned.sb3_models import PretrainedPolicy
        from agents.network.pretrained import weights_path

        name = "pretrained" if warm_start is True else str(warm_start)
        weights_path(name)  # a clear error naming it, before any model is built
        policy: Any = PretrainedPolicy
        policy_kwargs: dict[str, Any] = {"features_extractor_kwargs": {"weights": name}}
    else:
        policy = PlanesPolicy
        policy_kwargs = {
            "features_extractor_class": PlanesCNN,
            "features_extractor_kwargs": {"channels": channels, "features_dim": features},
            "net_arch": list(hidden),
            "precision": precision,
        }
    model = MaskablePPO(
        policy,
        env,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        learning_rate=learning_rate,
        ent_coef=ent_coef,
        gamma=gamma,
        gae_lambda=gae_lambda,
        vf_coef=vf_coef,
        policy_kwargs=policy_kwargs,
        seed=seed,
        device="cpu",
        verbose=verbose,
        tensorboard_log=None if tensorboard is None else str(tensorboard),
        rollout_buffer_class=BoolMaskDictRolloutBuffer,
    )
    use_fast_masking(model.policy)
    fused_adam(model.policy)
    return model


def evaluate(model: Any, env: YinshGymEnv, games: int, seed: int = 1000) -> Evaluation:
    """Play ``games`` games with the masked policy; any illegal move raises."""
    evaluation = Evaluation()
    for game in range(games):
        obs, _ = env.reset(seed=seed + game)
        done, reward = False, 0.0
        while not done:
            mask = env.action_masks()
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            action = int(action)
            if not mask[action]:
                raise IllegalActionError(f"the policy chose illegal action {action}")
            obs, reward, terminated, truncated, _ = env.step(action)
            evaluation.moves += 1
            done = terminated or truncated
        evaluation.add_reward(reward)
    return evaluation


def evaluate_batch(
    model: Any,
    opponent: Any,
    games: int,
    rings_to_win: int = 3,
    seed: int = 1000,
    envs: int = 32,
) -> Evaluation:
    """``games`` games of the greedy masked policy against ``opponent`` (an agent spec or
    an agent), up to ``envs`` at once on the vector environment, alternating sides.

    Each of the ``min(games, envs)`` environments plays its share of the games; any
    illegal move raises.
    """
    evaluation = Evaluation()
    if games <= 0:
        return evaluation
    count = min(games, envs)
    quota = np.array([games // count + (i < games % count) for i in range(count)])
    env = YinshVectorEnv(
        num_envs=count,
        opponent=vector_opponent(opponent, seed),
        learner="alternate",
        rings_to_win=rings_to_win,
        illegal_reward=None,
    )
    observations, _ = env.reset(seed=seed)
    played = np.zeros(count, dtype=np.int64)
    while (played < quota).any():
        masks = env.action_masks().astype(bool)
        actions, _ = model.predict(observations, action_masks=masks, deterministic=True)
        evaluation.moves += int((played < quota).sum())
        observations, rewards, terminated, truncated, _ = env.step(np.asarray(actions))
        for game in np.flatnonzero(terminated | truncated):
            if played[game] < quota[game]:
                evaluation.add_reward(float(rewards[game]))
                played[game] += 1
    env.close()
    return evaluation


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
        prog="python -m train.libraries.sb3_maskable_ppo", description=__doc__.splitlines()[0]
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
    parser.add_argument("--pool-strategy", choices=STRATEGIES, default="pfsp")
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
    return args


def opponents_of(args: argparse.Namespace) -> Any:
    """One agent spec (no pool needed), or the pool, curriculum or league of
    :func:`~train.libraries.sb3_selfplay.build_sampler` (matchmaking's samplers)."""
    if not (args.self_play or args.curriculum or len(args.opponent) > 1):
        return (args.opponent or [""])[0]
    return build_sampler(
        args.opponent,
        self_play=args.self_play,
        curriculum=args.curriculum,
        strategy=args.pool_strategy,
        max_snapshots=args.pool_size,
        threshold=args.promote_at,
        window=args.promote_window,
        curriculum_share=args.curriculum_share,
        seed=args.seed,
    )


def model_for(args: argparse.Namespace, env: Any, log_dir: Path | None) -> Any:
    """The MaskablePPO model the arguments ask for (:func:`build_model`)."""
    return build_model(
        env,
        seed=args.seed,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        channels=args.channels,
        features=args.features,
        hidden=args.hidden,
        learning_rate=args.lr,
        ent_coef=args.ent_coef,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        vf_coef=args.vf_coef,
        warm_start=args.warm_start or False,
        tensorboard=log_dir,
        precision=args.precision,
    )


def training_callbacks(
    args: argparse.Namespace, model: Any, sampler: Any, progress: RunProgress
) -> tuple[list[BaseCallback], list[Any]]:
    """``learn``'s callbacks (budgets, snapshots, progress) and the snapshots' list."""
    callbacks: list[BaseCallback] = []
    if args.minutes > 0:
        callbacks.append(TimeLimit(args.minutes * 60))
    if args.cpu_minutes > 0:
        callbacks.append(CpuTimeLimit(args.cpu_minutes * 60))
    snapshots: list[Any] = []
    if not isinstance(sampler, str):
        pool = snapshot_pool(sampler) if args.self_play else None
        selfplay = SelfPlayCallback(sampler, pool, args.snapshot_every, report_every=0)
        if pool is not None:
            selfplay.snapshot(model.policy, 0)  # before the environments choose opponents
        callbacks.append(selfplay)
        snapshots = selfplay.snapshots

    def check(policy_model: Any) -> tuple[str, float, int]:
        games, opponent = args.eval_every_games, args.eval_opponent
        result = evaluate_batch(policy_model, opponent, games, args.rings_to_win, args.seed)
        return opponent, result.score, result.games

    sampled = None if isinstance(sampler, str) else sampler
    callbacks.append(ProgressCallback(progress, sampled, args.report_every, args.eval_every, check))
    return callbacks, snapshots


def save_model(model: Any, path: Path, rings_to_win: int) -> None:
    """The model's zip, made whole in memory and then written by the one writer."""
    buffer = io.BytesIO()
    model.save(buffer)
    save_variant(buffer, rings_to_win)
    path.parent.mkdir(parents=True, exist_ok=True)  # --save runs/...: made when written
    write_bytes(path, buffer.getvalue())
    print(f"saved {path}")


def main(argv: Sequence[str] | None = None) -> Evaluation:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    sampler = opponents_of(args)
    vec_env = make_vec_env(
        sampler, args.seed, args.rings_to_win, args.envs, args.dense_reward, args.gamma
    )
    env = TimedVecEnv(vec_env)
    log_dir = tensorboard_dir(args, "sb3")
    model = model_for(args, env, log_dir)
    progress = RunProgress(args.timesteps, args.progress_every, log_dir)
    callbacks, snapshots = training_callbacks(args, model, sampler, progress)
    progress.announce()
    if not args.warm_start:
        print(
            f"network in {'bf16' if model.policy.bf16 else 'fp32'} (--precision {args.precision})",
            flush=True,
        )
    profile = Profile(env, snapshots)
    start = time.perf_counter()
    try:
        model.learn(total_timesteps=args.timesteps, callback=[*callbacks, profile])
    finally:
        progress.close()
    elapsed = time.perf_counter() - start
    steps = model.num_timesteps
    print(f"trained {steps} steps in {elapsed:.1f}s ({steps / elapsed:.0f}/s)")
    print(profile.summary(steps))
    if args.save is not None:
        save_model(model, args.save, args.rings_to_win)
    result = evaluate_batch(
        model, args.eval_opponent, args.eval_games, args.rings_to_win, seed=args.seed + 1000
    )
    print(result.summary(args.eval_opponent))
    return result


if __name__ == "__main__":
    # The importable module's main, so that saved models name train.libraries.sb3_maskable_ppo's
    # classes rather than copies of __main__'s.
    from train.libraries.sb3_maskable_ppo import main as module_main

    module_main()
