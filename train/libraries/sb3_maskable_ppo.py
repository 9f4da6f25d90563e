"""Train sb3-contrib's MaskablePPO on YINSH against opponents or itself, then evaluate it.

Needs the optional extra: ``pip install -e ".[sb3]"``.  Examples::

    python -m train.libraries.sb3_maskable_ppo --timesteps 20000 --opponent random --eval-games 50
    python -m train.libraries.sb3_maskable_ppo --self-play --opponent greedy --minutes 60 \
        --timesteps 100000000 --save runs/sb3/selfplay.zip
    python -m train.libraries.sb3_maskable_ppo --curriculum random greedy --self-play --minutes 30

The learner alternates sides between episodes.  Its opponents are agent specs
(``random``, ``greedy``, ``alphabeta:depth=1``, ...): one ``--opponent``
plays every game; several form a pool (:mod:`yinsh_env.opponents`).
``--self-play`` adds frozen snapshots of the learner to that pool when
training starts and every ``--snapshot-every`` steps (``--pool-size`` kept,
sampled by ``--pool-strategy``: ``pfsp`` by default, meeting most the
opponents it beats least); ``--curriculum A B ...`` meets graded opponents
one at a time, moving on at a score of ``--promote-at`` over
``--promote-window`` games, and with a pool too, takes ``--curriculum-share``
of the episodes.  Every ``--report-every`` steps a line gives the learner's
score against each opponent met since the last (:mod:`train.libraries.sb3_selfplay`);
at the end a profile line splits the time between the environments (with
the opponents' moves) and the network.  ``--warm-start`` starts the policy
from the shipped network, ``pretrained:sims=0`` (:mod:`agents.libraries.sb3_models`;
``--warm-start anchor-v1``: the first one), and fine-tunes it.  Observations are the
environment's dict; :class:`PlanesCNN`, a small convolutional features
extractor, reads the planes (the mask is not an input: it reaches the policy
through ``action_masks()``, so every move played is legal).  Several
environments step together (``--envs``) so that the network sees batches.

SB3's default for a dict observation, ``CombinedExtractor``, flattens the
planes and the 2,142-entry mask into 4,199 inputs of an MLP: about 2.8 million
weights, saved with Adam's two moment estimates each, a 34 MB model file, and
slow.  The CNN has about 0.4 million weights (a model file of about 5 MB,
Adam's state included, which SB3 always saves).  ``--save`` writes the model
that the agent spec ``sb3:path=MODEL.zip`` plays (:mod:`agents.libraries.sb3_agent`).
This is a baseline for library users, not the project's trainer (see
:mod:`train` for the AlphaZero-style one).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agents import make_agent
from agents.cli_args import agent_spec, build_agents, int_in, number_in, output_file
from agents.evaluation.elo import Tally
from agents.libraries.library_agent import save_variant
from agents.libraries.sb3_models import PlanesCNN
from agents.params import MAX_THREADS
from yinsh_env.errors import IllegalActionError
from yinsh_env.gym_env import YinshGymEnv
from yinsh_env.opponents import STRATEGIES

try:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    from .sb3_selfplay import (
        Profile,
        SelfPlayCallback,
        TimedVecEnv,
        build_sampler,
        snapshot_pool,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'the MaskablePPO example needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc


@dataclass
class Evaluation(Tally):
    """Results of the trained policy against the opponent."""

    moves: int = 0  # learner decisions, every one checked legal

    def add_reward(self, reward: float) -> None:
        """Count a game that ended with the policy's ``reward`` (+1 won, 0 drawn, -1 lost)."""
        self.add(0.5 + 0.5 * reward)


def make_env(opponent: Any = "random", seed: int = 0, rings_to_win: int = 3) -> YinshGymEnv:
    """The training environment: the learner alternates sides against ``opponent``.

    ``opponent`` is an agent spec (built here, seeded with ``seed``) or
    anything :class:`~yinsh_env.gym_env.YinshGymEnv` takes (an opponent sampler).
    """
    return YinshGymEnv(
        opponent=make_agent(opponent, seed=seed) if isinstance(opponent, str) else opponent,
        learner="alternate",
        rings_to_win=rings_to_win,
        illegal_reward=None,  # a masked learner never plays an illegal move: fail loudly
    )


def make_vec_env(
    opponent: Any = "random", seed: int = 0, rings_to_win: int = 3, envs: int = 1
) -> Any:
    """``envs`` training environments stepped together (SB3's ``DummyVecEnv``).

    A spec builds one agent per environment; a sampler is shared by all of them.
    """

    def factory(index: int) -> Callable[[], YinshGymEnv]:
        return lambda: make_env(opponent, seed=seed + index, rings_to_win=rings_to_win)

    return DummyVecEnv([factory(i) for i in range(envs)])


class TimeLimit(BaseCallback):
    """Stops training after ``seconds`` of wall time (checked after every step)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.deadline = time.perf_counter() + seconds

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


def build_model(
    env: Any,
    seed: int = 0,
    n_steps: int = 256,
    batch_size: int = 256,
    n_epochs: int = 4,
    channels: int = 16,
    features: int = 128,
    hidden: Sequence[int] = (),
    learning_rate: float = 3e-4,
    ent_coef: float = 0.01,
    verbose: int = 0,
    warm_start: bool | str = False,
) -> Any:
    """A MaskablePPO model: :class:`PlanesCNN` features, then ``hidden`` layers per head.

    ``n_steps`` is the rollout length per environment (``env`` may be a VecEnv).
    ``warm_start``: the shipped network instead (:mod:`agents.libraries.sb3_models`; a
    string names which, ``True`` is ``pretrained``; ``channels``, ``features`` and
    ``hidden`` do not apply).
    """
    if warm_start:
        from agents.libraries.sb3_models import PretrainedPolicy
        from agents.network.pretrained import weights_path

        name = "pretrained" if warm_start is True else str(warm_start)
        weights_path(name)  # a clear error naming it, before any model is built
        policy: Any = PretrainedPolicy
        policy_kwargs: dict[str, Any] = {"features_extractor_kwargs": {"weights": name}}
    else:
        policy = "MultiInputPolicy"
        policy_kwargs = {
            "features_extractor_class": PlanesCNN,
            "features_extractor_kwargs": {"channels": channels, "features_dim": features},
            "net_arch": list(hidden),
        }
    return MaskablePPO(
        policy,
        env,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        learning_rate=learning_rate,
        ent_coef=ent_coef,
        gamma=1.0,  # one reward at the end of a bounded game
        policy_kwargs=policy_kwargs,
        seed=seed,
        device="cpu",
        verbose=verbose,
    )


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


def _zip_file(text: str) -> Path:
    """An argparse type: where the model goes, with the ``.zip`` SB3 adds, writable."""
    return output_file()(text if text.endswith(".zip") else f"{text}.zip")


def _shipped_network(text: str) -> str:
    """An argparse type: the name of a network in ``agents/network/weights/`` (``pretrained``)."""
    from agents.network.pretrained import weights_path
    from train.checkpoint import CheckpointError

    try:
        weights_path(text)  # its error names the network and lists the shipped ones
    except CheckpointError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def main(argv: Sequence[str] | None = None) -> Evaluation:
    parser = argparse.ArgumentParser(
        prog="python -m train.libraries.sb3_maskable_ppo", description=__doc__.splitlines()[0]
    )
    count = int_in(1, 1_000_000_000)
    parser.add_argument("--timesteps", type=count, default=20_000, help="learner decisions")
    parser.add_argument(
        "--minutes",
        type=number_in(0, 1e6),
        default=0.0,
        help="stop training after this long (0: no limit)",
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
    parser.add_argument(
        "--report-every", type=int_in(0, 1_000_000_000), default=10_000, help="steps per line"
    )
    parser.add_argument(
        "--eval-opponent",
        type=agent_spec,
        default=None,
        help="agent spec to evaluate against (default: the first opponent, else greedy)",
    )
    parser.add_argument("--rings-to-win", type=int_in(1, 5), default=3, help="3 standard, 1 Blitz")
    parser.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    parser.add_argument(
        "--envs", type=int_in(1, 1024), default=8, help="environments stepped together"
    )
    parser.add_argument("--n-steps", type=count, default=256, help="rollout length per environment")
    parser.add_argument("--batch-size", type=count, default=256)
    parser.add_argument("--n-epochs", type=int_in(1, 10_000), default=4)
    parser.add_argument(
        "--lr", type=number_in(0, 10, above=True), default=3e-4, help="learning rate"
    )
    parser.add_argument("--ent-coef", type=number_in(0, 10), default=0.01, help="entropy bonus")
    parser.add_argument("--channels", type=int_in(1, 4096), default=16, help="conv filters")
    parser.add_argument(
        "--features", type=int_in(1, 65536), default=128, help="units of the dense layer"
    )
    parser.add_argument(
        "--hidden", type=int_in(1, 65536), nargs="*", default=[], help="extra layers of each head"
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
    args = parser.parse_args(argv)
    if args.opponent is None:
        args.opponent = [] if args.self_play or args.curriculum else ["random"]
    eval_opponent = args.eval_opponent or (args.opponent or ["greedy"])[0]
    build_agents(parser, {*args.opponent, *args.curriculum, eval_opponent})

    torch.set_num_threads(args.threads)
    sampler: Any = (args.opponent or [""])[0]  # one agent spec: no pool needed
    if args.self_play or args.curriculum or len(args.opponent) > 1:
        sampler = build_sampler(
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
    env = TimedVecEnv(make_vec_env(sampler, args.seed, args.rings_to_win, args.envs))
    model = build_model(
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
        warm_start=args.warm_start or False,
    )
    callbacks: list[BaseCallback] = []
    if args.minutes > 0:
        callbacks.append(TimeLimit(args.minutes * 60))
    snapshots: list[Any] = []
    if not isinstance(sampler, str):
        pool = snapshot_pool(sampler) if args.self_play else None
        selfplay = SelfPlayCallback(sampler, pool, args.snapshot_every, args.report_every)
        if pool is not None:
            selfplay.snapshot(model.policy, 0)  # before the environments choose opponents
        callbacks.append(selfplay)
        snapshots = selfplay.snapshots
    profile = Profile(env, snapshots)
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, callback=[*callbacks, profile])
    elapsed = time.perf_counter() - start
    steps = model.num_timesteps
    print(f"trained {steps} steps in {elapsed:.1f}s ({steps / elapsed:.0f}/s)")
    print(profile.summary(steps))
    if args.save is not None:
        model.save(args.save)
        save_variant(args.save, args.rings_to_win)
        print(f"saved {args.save}")
    result = evaluate(
        model, make_env(eval_opponent, args.seed + 1, args.rings_to_win), args.eval_games
    )
    print(
        f"vs {eval_opponent}: {result.wins} wins, {result.draws} draws, {result.losses} losses "
        f"in {result.games} games (score {result.score:.2f}); {result.moves} legal moves"
    )
    return result


if __name__ == "__main__":
    # The importable module's main, so that saved models name train.libraries.sb3_maskable_ppo's
    # classes rather than copies of __main__'s.
    from train.libraries.sb3_maskable_ppo import main as module_main

    module_main()
