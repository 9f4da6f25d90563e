"""PPO on the YINSH vector environment, CleanRL style: one file to copy and make your own.

    python docs/examples/ppo_vector.py --total-steps 200000

Trains a small convolutional actor-critic against an opponent from ``agents.make_agent``
on ``gym.make_vec("Yinsh-v0", vectorization_mode="vector_entry_point")``, from the
arena's opening (``ARENA_OPENING_PLIES`` random ring placements), so it trains on the
positions it is judged on.  Illegal actions are masked out of the logits, and the env
raises ``IllegalActionError`` (``illegal_reward=None``) should one slip through.
Uses only gymnasium, numpy, torch and the project's public API.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import yinsh_env.envs.gym_env  # noqa: F401  (registers "Yinsh-v0" and its vector entry point)
from agents import make_agent
from yinsh_env.envs.env_base import ARENA_OPENING_PLIES


@dataclass
class Args:
    num_envs: int = 32  # games played at once
    num_steps: int = 64  # learner decisions per game per update
    total_steps: int = 200_000  # learner decisions in all
    lr: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    epochs: int = 4
    minibatches: int = 4
    seed: int = 0
    opening_plies: int = ARENA_OPENING_PLIES  # as the arena opens its games
    opponent: str = "greedy:noise=500"  # an agents.make_agent spec


class ActorCritic(nn.Module):
    """Two 3x3 convolutions over the (11, 11, 17) planes, then policy and value heads."""

    def __init__(self, n_actions: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(17, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(32 * 11 * 11, 256), nn.ReLU(),
        )  # fmt: skip
        self.policy = nn.Linear(256, n_actions)
        self.value = nn.Linear(256, 1)

    def forward(self, planes: torch.Tensor, mask: torch.Tensor) -> tuple[Any, torch.Tensor]:
        hidden = self.body(planes.permute(0, 3, 1, 2))  # (N, 11, 11, 17) -> (N, 17, 11, 11)
        logits = self.policy(hidden).masked_fill(~mask, -1e9)  # illegal: probability 0
        return torch.distributions.Categorical(logits=logits), self.value(hidden).squeeze(-1)


def tensors(obs: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(obs["observation"]), torch.as_tensor(obs["action_mask"]).bool()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in dataclasses.fields(Args):
        flag = "--" + field.name.replace("_", "-")
        parser.add_argument(flag, type=type(field.default), default=field.default)
    args = Args(**vars(parser.parse_args(argv)))
    torch.manual_seed(args.seed)
    envs = gym.make_vec(
        "Yinsh-v0", num_envs=args.num_envs, vectorization_mode="vector_entry_point",
        opponent=make_agent(args.opponent, seed=args.seed),
        opening_plies=args.opening_plies, illegal_reward=None,
    )  # fmt: skip
    n, t = args.num_envs, args.num_steps
    model = ActorCritic(int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, eps=1e-5)
    planes = torch.zeros((t, n, 11, 11, 17))
    masks = torch.zeros((t, n, int(envs.single_action_space.n)), dtype=torch.bool)
    actions = torch.zeros((t, n), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((t, n)) for _ in range(4))
    obs, _ = envs.reset(seed=args.seed)
    steps, illegal, start, losses = 0, 0, time.time(), {}
    updates = max(1, args.total_steps // (n * t))
    for update in range(1, updates + 1):
        wins = games = 0
        for step in range(t):  # rollout: SAME_STEP autoreset, every mask is a live game's
            planes[step], masks[step] = tensors(obs)
            with torch.no_grad():
                dist, values[step] = model(planes[step], masks[step])
                actions[step] = dist.sample()
            logprobs[step] = dist.log_prob(actions[step])
            taken = masks[step].gather(1, actions[step][:, None])
            illegal += int((~taken).sum())  # 0: the mask works (the env would raise)
            obs, reward, terminated, truncated, info = envs.step(actions[step].numpy())
            for i in np.flatnonzero(truncated & ~terminated):  # cut short: bootstrap its end
                with torch.no_grad():
                    final = {k: v[None] for k, v in info["final_obs"][i].items()}
                    reward[i] += args.gamma * model(*tensors(final))[1].item()
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            dones[step] = torch.as_tensor(terminated | truncated, dtype=torch.float32)
            games += int(info.get("_final_info", np.zeros(n, bool)).sum())
            wins += int((terminated & (reward > 0)).sum())
            steps += n
        with torch.no_grad():  # GAE: dones[s] means step s ended its game, no bootstrap
            next_value = model(*tensors(obs))[1]
            advantages, last = torch.zeros((t, n)), torch.zeros(n)
            for s in reversed(range(t)):
                nonterminal = 1.0 - dones[s]
                following = next_value if s == t - 1 else values[s + 1]
                delta = rewards[s] + args.gamma * following * nonterminal - values[s]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                advantages[s] = last
            returns = advantages + values
        b_planes, b_masks = planes.flatten(0, 1), masks.flatten(0, 1)
        b_actions, b_logprobs = actions.flatten(), logprobs.flatten()
        b_adv, b_returns = advantages.flatten(), returns.flatten()
        size = max(1, (n * t) // args.minibatches)
        for _ in range(args.epochs):  # the clipped PPO update
            order = torch.randperm(n * t)
            for lo in range(0, n * t, size):
                mb = order[lo : lo + size]
                dist, value = model(b_planes[mb], b_masks[mb])
                ratio = (dist.log_prob(b_actions[mb]) - b_logprobs[mb]).exp()
                adv = b_adv[mb]
                adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)
                clipped = ratio.clamp(1 - args.clip, 1 + args.clip)
                policy_loss = -torch.min(ratio * adv, clipped * adv).mean()
                value_loss = 0.5 * (value - b_returns[mb]).pow(2).mean()
                entropy = dist.entropy().mean()
                loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * entropy
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                optimizer.step()
        losses = {"policy": policy_loss.item(), "value": value_loss.item(),
                  "entropy": entropy.item()}  # fmt: skip
        print(
            f"update {update}/{updates} steps {steps} games {games} won {wins} "
            f"policy {losses['policy']:.4f} value {losses['value']:.4f} "
            f"entropy {losses['entropy']:.3f} steps/s {steps / (time.time() - start):.0f}",
            flush=True,
        )
    envs.close()
    return {"updates": updates, "steps": steps, "illegal": illegal, "losses": losses}


if __name__ == "__main__":
    main()
