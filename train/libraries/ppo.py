"""A single-file PPO for YINSH in plain PyTorch, CleanRL's way: read it top to bottom.

::

    python -m train.libraries.ppo --minutes 10 --save runs/ppo/policy.pt
    python -m train.libraries.ppo --recipe configs/ppo.yaml --seed 4   # the recipe to start from
    python -m train.libraries.ppo --minutes 60 --opponents greedy random \
        --opponent-weights 0.6 0.1 --self-share 0.3 --dense-reward 0.5

What it does, in order:

0. :class:`Args` holds every hyper-parameter with its default; the command line
   is made from it (``--help`` lists them all), each number checked as it is read.
1. The vector environment (:class:`yinsh_env.vector.env.YinshVectorEnv`):
   ``--num-envs`` games stepped together, the learner alternating sides.
   Each game's opponent is drawn when it starts by a pool of
   :mod:`yinsh_env.envs.matchmaking` (:func:`opponent_pool`): the fixed
   ``--opponents`` (agent specs, ``random`` and ``greedy`` say) by
   ``--opponent-weights`` (with ``--adaptive true``, reweighted as the
   learner's scores change), or, in ``--self-share`` of the games, one of
   ``--pool-size`` snapshots of the learner, refreshed round-robin every
   ``--snapshot-every`` updates.  Opponents decide for all their games at
   once (``act_batch``): a snapshot is one forward pass.  ``--dense-reward``
   adds potential-based shaping from rings removed and ``--threat-reward``
   from rows threatened (the environment's ``dense_reward=`` and
   ``threat_reward=``); both are off by default and leave the optimal policy
   unchanged.  Games open as the arena opens them:
   ``--opening-plies`` (4) uniformly random ring placements, whoever is to
   place; the learner's own are left out of the policy loss
   (:mod:`train.libraries.ppo_games`).
2. The actor-critic (:class:`agents.learned.ppo_policy.PPOPolicy`): a small CNN
   over the planes, a policy head over the 2,142 flat actions and a value head.
   The policy is a categorical over the logits with illegal actions set to a
   large negative number, so it never samples one.
3. Rollouts of ``--num-steps`` x ``--num-envs`` learner decisions (:func:`collect`),
   GAE (:func:`advantages`), then ``--update-epochs`` passes of
   ``--num-minibatches`` minibatches of the clipped objective with value loss
   and entropy bonus (:func:`update`), Adam with global-norm clipping and the
   learning rate annealed linearly over the time budget.
4. Progress (:class:`Report`): a line every ``--report-every`` seconds (steps,
   steps/s, mean episode return, the learner's score against each opponent in
   training, the last check), TensorBoard scalars in ``--logdir`` and a bar on a
   terminal.  Every ``--check-every`` seconds the most-likely-action policy
   plays ``--check-games`` games against ``--check-against`` and the policy is
   saved to ``--save``, which the arena plays as ``ppo:path=FILE.pt``; the
   best check's policy is also kept beside it as ``STEM-best.pt`` (SB3's
   ``EvalCallback`` keeps its best model the same way), since a policy's
   strength against a fixed opponent need not rise monotonically.

The run stops after ``--minutes`` of wall-clock time, ``--cpu-minutes`` of this
process's CPU time (runs compared on equal budgets on a shared machine) or
``--total-steps`` learner decisions, whichever comes first, plays a last check
of ``--final-check-games`` games and saves.  The learning rate anneals over
whichever budget is nearer its end.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn, optim
from torch.distributions import Categorical

from agents.infra.cli_args import agent_spec, int_in, number_in, output_file
from agents.learned.ppo_policy import PolicyOpponent, PPOPolicy, masked_logits
from agents.params import MAX_THREADS
from train.libraries.dataclass_args import option, parse, parser_for, yes_no
from train.libraries.ppo_games import (
    OpeningOpponent,
    learner_scores,
    make_opponent,
    opening_moves,
)
from train.libraries.ppo_report import Report
from train.libraries.progress import checked_log_dir
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.envs.env_base import MAX_WEIGHT
from yinsh_env.envs.matchmaking import OpponentPool, SnapshotSlots
from yinsh_env.vector.env import YinshVectorEnv

#: Adam's epsilon, CleanRL's (the other libraries' recipes take it from here).
ADAM_EPS = 1e-5


@dataclass
class Args:
    """The run's hyper-parameters: the field ``some_name`` is the option ``--some-name``."""

    minutes: float = option(10.0, number_in(0, 10_000, above=True), "wall-clock budget")
    cpu_minutes: float | None = option(None, number_in(0, 10_000, above=True), "CPU budget")
    total_steps: int | None = option(None, int_in(1, 10**12), "stop after this many steps")
    seed: int = option(1, int_in(0, 2**31 - 1), "seeds Python, NumPy, torch and the games")
    threads: int = option(2, int_in(1, MAX_THREADS), "torch threads")
    rings_to_win: int = option(3, int_in(1, 5), "3 standard, 1 Blitz")
    opening_plies: int = option(4, int_in(0, 10), "random placements opening games")
    # environment and opponents
    num_envs: int = option(64, int_in(1, 4096), "games stepped together")
    opponents: tuple[str, ...] = option(("greedy", "random"), agent_spec, "fixed opponents' specs")
    opponent_weights: tuple[float, ...] = option((0.6, 0.1), number_in(0, 1e6), "their weights")
    self_share: float = option(0.3, number_in(0, 1), "share of games vs snapshots")
    adaptive: bool = option(False, yes_no, "true: weigh opponents by p(1-p)")
    pool_size: int = option(8, int_in(1, 100), "snapshots of the learner kept")
    snapshot_every: int = option(10, int_in(1, 10**6), "updates between snapshots")
    dense_reward: float = option(0.0, number_in(0, MAX_WEIGHT), "rings-removed shaping weight")
    threat_reward: float = option(0.0, number_in(0, MAX_WEIGHT), "rows-threatened shaping")
    # network
    channels: int = option(32, int_in(1, 512), "convolution channels")
    blocks: int = option(2, int_in(0, 64), "residual blocks")
    # PPO
    num_steps: int = option(32, int_in(1, 10_000), "steps per game per rollout")
    learning_rate: float = option(3e-4, number_in(0, 1, above=True), "Adam's step size")
    anneal_lr: bool = option(True, yes_no, "true/false: decay to 0 over the budget")
    gamma: float = option(0.99, number_in(0, 1, above=True), "discount")
    gae_lambda: float = option(0.95, number_in(0, 1), "GAE's lambda")
    num_minibatches: int = option(4, int_in(1, 10_000), "minibatches per epoch")
    update_epochs: int = option(4, int_in(1, 100), "passes over each rollout")
    clip_coef: float = option(0.2, number_in(0, 10, above=True), "ratio (and value) clip")
    ent_coef: float = option(0.01, number_in(0, 10), "entropy bonus")
    vf_coef: float = option(0.5, number_in(0, 10), "value loss weight")
    max_grad_norm: float = option(0.5, number_in(0, 1e6, above=True), "gradient norm clip")
    target_kl: float | None = option(None, number_in(0, 10, above=True), "stop epochs above")
    # progress, checks and output
    report_every: float = option(30.0, number_in(0, 86_400, above=True), "seconds a line")
    check_against: str = option("greedy", agent_spec, "the checks' opponent")
    check_every: float = option(300.0, number_in(0, 86_400, above=True), "seconds a check")
    check_games: int = option(40, int_in(0, 10_000), "games of each check (0: none)")
    final_check_games: int = option(100, int_in(0, 10_000), "games of the last check")
    save: Path = option(
        Path("runs/ppo/policy.pt"), output_file((".pt",), parents=True), "the policy"
    )
    logdir: Path | None = option(None, Path, "TensorBoard folder (None: STEM-tb beside --save)")


A = TypeVar("A", bound="Args")


def parse_args(
    argv: Sequence[str] | None = None,
    cls: type[A] = Args,  # type: ignore[assignment]
    prog: str = "python -m train.libraries.ppo",
    doc: str = __doc__,
) -> A:
    """The run's hyper-parameters from the command line (one option per field of ``cls``,
    :class:`Args` or the TorchRL recipe's, :mod:`train.libraries.torchrl_ppo`)."""
    parser = parser_for(cls, prog, doc.split("\n", 1)[0])
    args = parse(cls, parser, argv)
    if len(args.opponent_weights) != len(args.opponents):
        parser.error(f"{len(args.opponents)} --opponents but {len(args.opponent_weights)} weights")
    repeated = sorted({spec for spec in args.opponents if args.opponents.count(spec) > 1})
    if repeated:
        parser.error(f"--opponents names {repeated[0]!r} twice: give it one weight")
    if sum(args.opponent_weights) + args.self_share <= 0:
        parser.error("--opponent-weights and --self-share are all 0: no opponent to play")
    if args.num_envs * args.num_steps < args.num_minibatches:
        parser.error("--num-minibatches exceeds the rollout's num-envs x num-steps decisions")
    save: Path = args.save
    args.logdir = checked_log_dir(
        parser, "--logdir", args.logdir or save.with_suffix("").with_name(save.stem + "-tb")
    )
    return args


# --- 1. the opponents: matchmaking's weighted pool, the snapshots refreshed in place ---


def opponent_pool(args: Args, policy: PPOPolicy) -> tuple[OpponentPool, SnapshotSlots[Any]]:
    """The fixed ``--opponents`` by weight and ``--pool-size`` snapshot slots sharing
    ``--self-share`` (``--adaptive``: the ``variance`` strategy), the slots holding
    ``policy``'s weights; :mod:`yinsh_env.envs.matchmaking` picks among them."""
    count = args.pool_size if args.self_share > 0 else 0
    snapshots = [
        OpeningOpponent(PolicyOpponent(PPOPolicy(args.channels, args.blocks)), args.opening_plies)
        for _ in range(count)
    ]
    pool = OpponentPool("variance" if args.adaptive else "weighted", max_snapshots=max(count, 1))
    for i, (spec, weight) in enumerate(zip(args.opponents, args.opponent_weights)):
        opponent = OpeningOpponent(make_opponent(spec, args.seed + i), args.opening_plies)
        pool.add(spec, opponent, weight=weight)
    for i, snapshot in enumerate(snapshots):
        pool.add(f"self{i}", snapshot, snapshot=True, weight=args.self_share / count)
    slots = SnapshotSlots(snapshots)
    for _ in snapshots:
        refresh(slots, policy)
    return pool, slots


def refresh(slots: SnapshotSlots[Any], policy: PPOPolicy) -> None:
    """Copy the learner's weights into the oldest snapshot slot (if there are slots)."""
    if slots:
        slots.take().load_state_dict(policy.state_dict())


# --- 3. rollouts: the games under way and one rollout's storage ---------------------


@dataclass
class Games:
    """The games between rollouts: the last observations and the episodes under way."""

    env: YinshVectorEnv
    obs: dict[str, np.ndarray]
    steps: int = 0  # learner decisions so far
    next_done: torch.Tensor = field(init=False)
    episode_return: np.ndarray = field(init=False)
    episode_length: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.next_done = torch.zeros(self.env.num_envs)
        self.episode_return = np.zeros(self.env.num_envs)
        self.episode_length = np.zeros(self.env.num_envs, dtype=np.int64)

    @property
    def next_obs(self) -> torch.Tensor:
        return torch.as_tensor(self.obs["observation"])

    @property
    def next_mask(self) -> torch.Tensor:
        return torch.as_tensor(self.obs["action_mask"]).bool()


@dataclass
class Rollout:
    """One rollout's decisions, each ``(num_steps, num_envs, ...)``."""

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    values: torch.Tensor
    forced: torch.Tensor  # 1: an opening move, random, not the policy's

    @classmethod
    def empty(cls, steps: int, games: int) -> Rollout:
        obs = torch.zeros((steps, games, 11, 11, 17))
        masks = torch.zeros((steps, games, N_ACTIONS), dtype=torch.bool)
        actions = torch.zeros((steps, games), dtype=torch.long)
        return cls(obs, masks, actions, *(torch.zeros((steps, games)) for _ in range(5)))


def collect(
    policy: PPOPolicy,
    games: Games,
    rollout: Rollout,
    args: Args,
    rng: np.random.Generator,
    pool: OpponentPool,
    report: Report,
) -> None:
    """``--num-steps`` decisions in every game into ``rollout``; ended games counted."""
    policy.eval()
    for step in range(args.num_steps):
        next_obs, next_mask = games.next_obs, games.next_mask
        rollout.obs[step], rollout.masks[step] = next_obs, next_mask
        rollout.dones[step] = games.next_done
        with torch.no_grad():
            logits, value = policy(next_obs)
            dist = Categorical(logits=masked_logits(logits, next_mask))
            action = dist.sample()
        forced = opening_moves(
            next_obs.numpy(), games.obs["action_mask"], action.numpy(), args.opening_plies, rng
        )
        rollout.forced[step] = torch.as_tensor(forced, dtype=torch.float32)
        rollout.actions[step], rollout.logprobs[step] = action, dist.log_prob(action)
        rollout.values[step] = value
        obs, reward, done, truncated, infos = games.env.step(action.numpy())
        games.steps += args.num_envs
        ended = done | truncated
        rollout.rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
        games.obs, games.next_done = obs, torch.as_tensor(ended, dtype=torch.float32)
        games.episode_return += reward
        games.episode_length += 1
        for _game, opponent, score in learner_scores(infos):
            report.scored(opponent, score)
            pool.note(opponent, score)
        for game in np.flatnonzero(ended):
            length = int(games.episode_length[game])
            report.episode(float(games.episode_return[game]), length, games.steps)
        games.episode_return[ended] = 0.0
        games.episode_length[ended] = 0


# --- 3. generalised advantage estimation and the clipped objective --------------------


def advantages(
    policy: PPOPolicy, games: Games, rollout: Rollout, args: Args
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE's advantages of the rollout and the value targets (advantages + values)."""
    with torch.no_grad():
        _, next_value = policy(games.next_obs)
        found = torch.zeros_like(rollout.rewards)
        gae = torch.zeros(args.num_envs)
        for t in reversed(range(args.num_steps)):
            if t == args.num_steps - 1:
                not_done, bootstrap = 1.0 - games.next_done, next_value
            else:
                not_done, bootstrap = 1.0 - rollout.dones[t + 1], rollout.values[t + 1]
            delta = rollout.rewards[t] + args.gamma * bootstrap * not_done - rollout.values[t]
            gae = delta + args.gamma * args.gae_lambda * not_done * gae
            found[t] = gae
        return found, found + rollout.values


def update(
    policy: PPOPolicy,
    optimizer: optim.Optimizer,
    rollout: Rollout,
    advantage: torch.Tensor,
    targets: torch.Tensor,
    args: Args,
) -> dict[str, float]:
    """``--update-epochs`` passes of minibatches of the clipped objective; the losses."""
    batch_size = args.num_envs * args.num_steps
    minibatch = batch_size // args.num_minibatches
    b_obs, b_mask = (
        rollout.obs.reshape(batch_size, 11, 11, 17),
        rollout.masks.reshape(batch_size, -1),
    )
    b_act, b_logp = rollout.actions.reshape(-1), rollout.logprobs.reshape(-1)
    b_own = 1.0 - rollout.forced.reshape(-1)  # the policy's own decisions
    b_adv, b_ret, b_val = advantage.reshape(-1), targets.reshape(-1), rollout.values.reshape(-1)
    policy.train()
    clip_fracs: list[float] = []
    for _epoch in range(args.update_epochs):
        order = torch.randperm(batch_size)
        for begin in range(0, batch_size - minibatch + 1, minibatch):
            idx = order[begin : begin + minibatch]
            logits, value = policy(b_obs[idx])
            dist = Categorical(logits=masked_logits(logits, b_mask[idx]))
            new_logp = dist.log_prob(b_act[idx])
            log_ratio = new_logp - b_logp[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                clip_fracs.append(float(((ratio - 1.0).abs() > args.clip_coef).float().mean()))
            adv = b_adv[idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            own = b_own[idx]
            pg_loss = (
                torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
                * own
            ).sum() / own.sum().clamp(min=1.0)
            v_clipped = b_val[idx] + (value - b_val[idx]).clamp(-args.clip_coef, args.clip_coef)
            v_loss = (
                0.5 * torch.max((value - b_ret[idx]) ** 2, (v_clipped - b_ret[idx]) ** 2).mean()
            )
            entropy = (dist.entropy() * own).sum() / own.sum().clamp(min=1.0)
            loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.target_kl is not None and approx_kl > args.target_kl:
            break
    return {
        "losses/policy": pg_loss.item(),
        "losses/value": v_loss.item(),
        "losses/entropy": entropy.item(),
        "losses/approx_kl": approx_kl.item(),
        "losses/clip_fraction": float(np.mean(clip_fracs)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args: Args = parse_args(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # 1. the vector environment and its opponents (the actor-critic first: snapshots copy it)
    policy = PPOPolicy(args.channels, args.blocks)
    pool, slots = opponent_pool(args, policy)
    env = YinshVectorEnv(
        num_envs=args.num_envs,
        opponent=pool,
        rings_to_win=args.rings_to_win,
        dense_reward=args.dense_reward,
        threat_reward=args.threat_reward,
        gamma=args.gamma,
    )
    obs, _ = env.reset(seed=args.seed)
    games = Games(env, obs)

    # 2. the actor-critic's optimiser, the rollout's storage and the run's output
    optimizer = optim.Adam(policy.parameters(), lr=args.learning_rate, eps=ADAM_EPS)
    rollout = Rollout.empty(args.num_steps, args.num_envs)
    rng = np.random.default_rng(args.seed)
    report = Report(args, argv, policy, pool, make_opponent(args.check_against, args.seed + 1000))

    # 3. rollouts, advantages and updates until a budget is spent
    updates = 0
    while (used := report.spent()) < 1.0 and not (
        args.total_steps and games.steps >= args.total_steps
    ):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - used)
        collect(policy, games, rollout, args, rng, pool, report)
        advantage, targets = advantages(policy, games, rollout, args)
        losses = update(policy, optimizer, rollout, advantage, targets, args)
        updates += 1
        if updates % args.snapshot_every == 0:
            refresh(slots, policy)
        report.after_update(games.steps, updates, losses, optimizer.param_groups[0]["lr"])

    # 4. the last check and the saved policy
    report.finish(games.steps, updates)
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
