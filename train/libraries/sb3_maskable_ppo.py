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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents import make_agent
from agents.baselines.greedy import GreedyAgent
from agents.baselines.greedy_batch import GreedyOpponent
from agents.learned.library_agent import save_variant
from agents.learned.sb3_models import PlanesCNN, PlanesPolicy, PPONetPolicy
from train.libraries.match_results import Evaluation
from train.libraries.progress import (
    RunProgress,
    tensorboard_dir,
)
from train.libraries.sb3_arguments import parse_args
from yinsh_env.engine.errors import IllegalActionError
from yinsh_env.envs.gym_env import YinshGymEnv
from yinsh_env.util.atomic_write import write_bytes
from yinsh_env.vector.env import YinshVectorEnv

try:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.learned.sb3_masking import use_fast_masking
    from train.libraries.sb3_callbacks import (
        BudgetSchedule,
        CpuTimeLimit,
        ProgressCallback,
        TimeLimit,
    )
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
    threat_reward: float = 0.0,
    opening_plies: int = 0,
) -> YinshSB3VecEnv:
    """``envs`` games of the vector environment against ``opponent``, for MaskablePPO.

    ``opponent``: an agent spec, an agent, or a sampler of
    :mod:`yinsh_env.envs.matchmaking` choosing per game and episode; the learner
    alternates sides.  Seeded with ``seed``.  ``dense_reward``: the environment's
    shaping from rings removed, potential-based for the discount ``gamma`` (PPO's
    own: another discount would make the shaping change what is optimal); ``threat_reward``
    the same from rows threatened.  ``opening_plies``: each game opens with that many
    random ring placements (the arena's :data:`~yinsh_env.envs.env_base.ARENA_OPENING_PLIES`).
    """
    env = YinshSB3VecEnv(
        num_envs=envs,
        opponent=vector_opponent(opponent, seed),
        learner="alternate",
        rings_to_win=rings_to_win,
        illegal_reward=None,  # a masked learner never plays an illegal move: fail loudly
        dense_reward=dense_reward,
        threat_reward=threat_reward,
        gamma=gamma,
        opening_plies=opening_plies,
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
    learning_rate: float | Callable[[float], float] = 3e-4,
    ent_coef: float = 0.01,
    gamma: float = 1.0,
    gae_lambda: float = 0.95,
    vf_coef: float = 0.5,
    verbose: int = 0,
    warm_start: bool | str = False,
    tensorboard: str | Path | None = None,
    precision: str = "fp32",
    network: str = "cnn",
    blocks: int = 2,
) -> Any:
    """A MaskablePPO model: :class:`PlanesCNN` features, then ``hidden`` layers per head;
    with ``network="ppo"`` the single-file PPO's network instead
    (:class:`~agents.learned.sb3_models.PPONetPolicy`: ``channels`` and ``blocks``; no
    ``features`` or ``hidden``), so that the same recipe is the same network.

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
    elif network == "ppo":
        policy = PPONetPolicy
        policy_kwargs = {
            "features_extractor_kwargs": {"channels": channels, "blocks": blocks},
            "precision": precision,
        }
    elif network != "cnn":
        raise ValueError(f"network must be 'cnn' or 'ppo', not {network!r}")
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
    opening_plies: int = 0,
) -> Evaluation:
    """``games`` games of the greedy masked policy against ``opponent`` (an agent spec or
    an agent), up to ``envs`` at once on the vector environment, alternating sides.

    Each of the ``min(games, envs)`` environments plays its share of the games; any
    illegal move raises.  ``opening_plies``: random ring placements opening each game
    (the arena's: :data:`~yinsh_env.envs.env_base.ARENA_OPENING_PLIES`).
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
        opening_plies=opening_plies,
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
        weights=args.opponent_weights,
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
        learning_rate=(
            BudgetSchedule(args.lr, args.minutes, args.cpu_minutes) if args.anneal_lr else args.lr
        ),
        ent_coef=args.ent_coef,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        vf_coef=args.vf_coef,
        warm_start=args.warm_start or False,
        tensorboard=log_dir,
        precision=args.precision,
        network=args.network,
        blocks=args.blocks,
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
        share = 1.0 if args.self_share is None else args.self_share
        weight = share / args.pool_size if args.pool_strategy == "weighted" else 1.0
        selfplay = SelfPlayCallback(
            sampler, pool, args.snapshot_every, report_every=0, snapshot_weight=weight
        )
        if pool is not None:
            selfplay.snapshot(model.policy, 0)  # before the environments choose opponents
        callbacks.append(selfplay)
        snapshots = selfplay.snapshots

    def check(policy_model: Any) -> tuple[str, float, int]:
        games, opponent = args.eval_every_games, args.eval_opponent
        result = evaluate_batch(
            policy_model,
            opponent,
            games,
            args.rings_to_win,
            args.seed,
            opening_plies=args.opening_plies,
        )
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
        sampler,
        args.seed,
        args.rings_to_win,
        args.envs,
        args.dense_reward,
        args.gamma,
        args.threat_reward,
        args.opening_plies,
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
    steps, cpu = model.num_timesteps, time.process_time()  # the budget's clock
    print(
        f"trained {steps} steps in {elapsed:.1f}s ({steps / elapsed:.0f}/s; process CPU "
        f"{cpu / 60:.1f} min, {steps / max(cpu, 1e-9):.0f} steps per CPU-second)"
    )
    print(profile.summary(steps))
    if args.save is not None:
        save_model(model, args.save, args.rings_to_win)
    result = evaluate_batch(
        model,
        args.eval_opponent,
        args.eval_games,
        args.rings_to_win,
        seed=args.seed + 1000,
        opening_plies=args.opening_plies,
    )
    print(result.summary(args.eval_opponent))
    return result


if __name__ == "__main__":
    # The importable module's main, so that saved models name train.libraries.sb3_maskable_ppo's
    # classes rather than copies of __main__'s.
    from train.libraries.sb3_maskable_ppo import main as module_main

    module_main()
