"""Train sb3-contrib's MaskablePPO on YINSH against a fixed opponent, then evaluate it.

Needs the optional extra: ``pip install -e ".[sb3]"``.  Example::

    python -m train.sb3_maskable_ppo --timesteps 20000 --opponent random --eval-games 50

The learner alternates sides between episodes; the opponent is any agent spec
(``random``, ``greedy``, ``alphabeta:depth=1``, ...).  Observations are the
environment's dict (planes + mask), read by SB3's ``MultiInputPolicy``; the
mask also reaches the policy through ``action_masks()``, so every move played
is legal.  This is a baseline for library users, not the project's trainer
(see :mod:`train` for the AlphaZero-style one).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import make_agent
from yinsh_env.errors import IllegalActionError
from yinsh_env.gym_env import YinshGymEnv


@dataclass
class Evaluation:
    """Results of the trained policy against the opponent."""

    games: int
    wins: int
    draws: int
    losses: int
    moves: int  # learner decisions, every one checked legal

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)


def make_env(opponent: str = "random", seed: int = 0, rings_to_win: int = 3) -> YinshGymEnv:
    """The training environment: the learner alternates sides against ``opponent``."""
    return YinshGymEnv(
        opponent=make_agent(opponent, seed=seed),
        learner="alternate",
        rings_to_win=rings_to_win,
        illegal_reward=None,  # a masked learner never plays an illegal move: fail loudly
    )


def build_model(
    env: YinshGymEnv,
    seed: int = 0,
    n_steps: int = 512,
    batch_size: int = 128,
    n_epochs: int = 4,
    hidden: Sequence[int] = (256, 256),
    learning_rate: float = 3e-4,
    verbose: int = 0,
) -> Any:
    """A MaskablePPO model with a small MLP over the flattened observation."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "the MaskablePPO example needs sb3-contrib: pip install 'yinsh[sb3]'"
        ) from None

    return MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        learning_rate=learning_rate,
        gamma=1.0,  # one reward at the end of a bounded game
        policy_kwargs={"net_arch": list(hidden)},
        seed=seed,
        device="cpu",
        verbose=verbose,
    )


def evaluate(model: Any, env: YinshGymEnv, games: int, seed: int = 1000) -> Evaluation:
    """Play ``games`` games with the masked policy; any illegal move raises."""
    wins = draws = losses = moves = 0
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
            moves += 1
            done = terminated or truncated
        wins += reward > 0
        draws += reward == 0
        losses += reward < 0
    return Evaluation(games, wins, draws, losses, moves)


def main(argv: Sequence[str] | None = None) -> Evaluation:
    parser = argparse.ArgumentParser(
        prog="python -m train.sb3_maskable_ppo", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--timesteps", type=int, default=20_000, help="learner decisions")
    parser.add_argument("--opponent", default="random", help="agent spec of the opponent")
    parser.add_argument("--rings-to-win", type=int, default=3, help="3 standard, 1 Blitz")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-steps", type=int, default=512, help="rollout length per update")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--n-epochs", type=int, default=4)
    parser.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="MLP sizes")
    parser.add_argument("--eval-games", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--save", type=Path, default=None, help="where to save the model (.zip)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    env = make_env(args.opponent, seed=args.seed, rings_to_win=args.rings_to_win)
    model = build_model(
        env,
        seed=args.seed,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        hidden=args.hidden,
    )
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    elapsed = time.perf_counter() - start
    print(f"trained {args.timesteps} steps in {elapsed:.1f}s ({args.timesteps / elapsed:.0f}/s)")
    if args.save is not None:
        model.save(args.save)
        print(f"saved {args.save}")
    result = evaluate(model, make_env(args.opponent, seed=args.seed + 1), args.eval_games)
    print(
        f"vs {args.opponent}: {result.wins} wins, {result.draws} draws, {result.losses} losses "
        f"in {result.games} games (score {result.score:.2f}); {result.moves} legal moves"
    )
    return result


if __name__ == "__main__":
    main()
