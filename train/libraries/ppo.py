"""A single-file PPO for YINSH in plain PyTorch, CleanRL's way: read it top to bottom.

::

    python -m train.libraries.ppo --minutes 10 --save runs/ppo/policy.pt
    python -m train.libraries.ppo --minutes 60 --opponents greedy random \
        --opponent-weights 0.6 0.1 --self-share 0.3 --dense-reward 0.5

What it does, in order (each a block of :func:`main`):

1. The vector environment (:class:`yinsh_env.vector.env.YinshVectorEnv`):
   ``--num-envs`` games stepped together, the learner alternating sides.
   Each game's opponent is drawn when it starts (:class:`OpponentMix`): the
   fixed ``--opponents`` (agent specs, ``random`` and ``greedy`` say) with
   ``--opponent-weights`` (with ``--adaptive true``, reweighted as the
   learner's scores change), or, with ``--self-share`` of the games, one of
   ``--pool-size`` snapshots of the learner, refreshed round-robin every
   ``--snapshot-every`` updates.  Opponents decide for all their games at
   once (``act_batch``): a snapshot is one forward pass.  ``--dense-reward``
   adds potential-based shaping from rings removed (the environment's) and
   ``--threat-reward`` from rows threatened (:func:`threat_potential`); both
   are off by default and leave the optimal policy unchanged.  Games open
   as the arena opens them: ``--opening-plies`` (4) uniformly random ring
   placements, whoever is to place (:class:`OpeningOpponent` for the
   opponents; the learner's own opening placements are played at random and
   left out of the policy loss).
2. The actor-critic (:class:`agents.libraries.ppo_policy.PPOPolicy`): a
   small CNN over the planes, a policy head over the 2,142 flat actions and a
   value head.  The policy is a categorical over the logits with illegal
   actions set to a large negative number, so it never samples one.
3. Rollouts of ``--num-steps`` x ``--num-envs`` learner decisions, GAE
   (``--gamma``, ``--gae-lambda``), then ``--update-epochs`` passes of
   ``--num-minibatches`` minibatches of the clipped objective (``--clip-coef``)
   with value loss and entropy bonus, Adam with global-norm clipping and the
   learning rate annealed linearly over the time budget.
4. Progress: a line every ``--report-every`` seconds (steps, steps/s, mean
   episode return, the learner's score against each opponent in training, and
   the last check), TensorBoard scalars in ``--logdir``, and a tqdm bar when
   stdout is a terminal.  Every ``--check-every`` seconds the most-likely-action
   policy plays ``--check-games`` games against ``--check-against`` (greedy by
   default) and the policy is saved to ``--save``, which the arena plays as
   ``ppo:path=FILE.pt``; the policy of the best check so far is also kept
   beside it as ``STEM-best.pt`` (SB3's ``EvalCallback`` keeps its best model
   the same way), since a policy's strength against a fixed opponent need not
   rise monotonically.

The run stops after ``--minutes`` of wall-clock time, ``--cpu-minutes`` of this
process's CPU time (runs compared on equal budgets on a shared machine) or
``--total-steps`` learner decisions, whichever comes first, plays a last check
of ``--final-check-games`` games and saves.  The learning rate anneals over
whichever budget is nearer its end.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn, optim
from torch.distributions import Categorical

from agents import make_agent
from agents.cli_args import agent_spec, int_in, number_in, output_file
from agents.greedy import GreedyAgent
from agents.greedy_batch import GreedyOpponent
from agents.libraries.ppo_policy import PolicyOpponent, PPOPolicy, masked_logits, save_policy
from agents.params import MAX_THREADS
from yinsh_env.actions import N_ACTIONS
from yinsh_env.geometry import POINTS, SEGMENTS
from yinsh_env.observation import GRID
from yinsh_env.opponents import Entry
from yinsh_env.vector.env import YinshVectorEnv
from yinsh_env.vector.opponents import batch_opponent, random_legal
from yinsh_env.vocabulary import Result

from .progress import checked_log_dir


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The run's hyper-parameters, each with its default."""
    p = argparse.ArgumentParser(
        prog="python -m train.libraries.ppo", description=__doc__.split("\n", 1)[0]
    )
    add = p.add_argument
    add("--minutes", type=number_in(0, 10_000, above=True), default=10.0, help="wall-clock budget")
    add("--cpu-minutes", type=number_in(0, 10_000, above=True), default=None, help="CPU budget")
    add("--total-steps", type=int_in(1, 10**12), default=None, help="stop after this many steps")
    add("--seed", type=int_in(0, 2**31 - 1), default=1)
    add("--threads", type=int_in(1, MAX_THREADS), default=2, help="torch threads")
    add("--rings-to-win", type=int_in(1, 5), default=3, help="3 standard, 1 Blitz")
    add("--opening-plies", type=int_in(0, 10), default=4, help="random placements opening games")
    # environment and opponents
    add("--num-envs", type=int_in(1, 4096), default=64, help="games stepped together")
    add("--opponents", type=agent_spec, nargs="+", default=["greedy", "random"])
    add("--opponent-weights", type=number_in(0, 1e6), nargs="+", default=[0.6, 0.1])
    add("--self-share", type=number_in(0, 1), default=0.3, help="share of games vs snapshots")
    add("--adaptive", type=_yes_no, default=False, help="true: weigh opponents by p(1-p)")
    add("--pool-size", type=int_in(1, 100), default=8, help="snapshots of the learner kept")
    add("--snapshot-every", type=int_in(1, 10**6), default=10, help="updates between snapshots")
    add("--dense-reward", type=number_in(0, 10), default=0.0, help="rings-removed shaping weight")
    add("--threat-reward", type=number_in(0, 10), default=0.0, help="rows-threatened shaping")
    # network
    add("--channels", type=int_in(1, 512), default=32)
    add("--blocks", type=int_in(0, 64), default=2, help="residual blocks")
    # PPO
    add("--num-steps", type=int_in(1, 10_000), default=32, help="steps per game per rollout")
    add("--learning-rate", type=number_in(0, 1, above=True), default=3e-4)
    add("--anneal-lr", type=_yes_no, default=True, help="true/false: decay to 0 over the budget")
    add("--gamma", type=number_in(0, 1, above=True), default=0.99)
    add("--gae-lambda", type=number_in(0, 1), default=0.95)
    add("--num-minibatches", type=int_in(1, 10_000), default=4)
    add("--update-epochs", type=int_in(1, 100), default=4)
    add("--clip-coef", type=number_in(0, 10, above=True), default=0.2)
    add("--ent-coef", type=number_in(0, 10), default=0.01)
    add("--vf-coef", type=number_in(0, 10), default=0.5)
    add("--max-grad-norm", type=number_in(0, 1e6, above=True), default=0.5)
    add("--target-kl", type=number_in(0, 10, above=True), default=None, help="stop epochs above")
    # progress, checks and output
    add("--report-every", type=number_in(0, 86_400, above=True), default=30.0, help="seconds")
    add("--check-against", type=agent_spec, default="greedy")
    add("--check-every", type=number_in(0, 86_400, above=True), default=300.0, help="seconds")
    add("--check-games", type=int_in(0, 10_000), default=40)
    add("--final-check-games", type=int_in(0, 10_000), default=100)
    add("--save", type=output_file((".pt",)), default=Path("runs/ppo/policy.pt"))
    add("--logdir", type=Path, default=None, help="TensorBoard folder (default: beside --save)")
    args = p.parse_args(argv)
    if len(args.opponent_weights) != len(args.opponents):
        p.error(f"{len(args.opponents)} --opponents but {len(args.opponent_weights)} weights")
    if sum(args.opponent_weights) + args.self_share <= 0:
        p.error("--opponent-weights and --self-share are all 0: no opponent to play")
    if args.num_envs * args.num_steps < args.num_minibatches:
        p.error("--num-minibatches exceeds the rollout's num-envs x num-steps decisions")
    save: Path = args.save
    args.logdir = checked_log_dir(
        p, "--logdir", args.logdir or save.with_suffix("").with_name(save.stem + "-tb")
    )
    return args


def _yes_no(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text[:40]!r}")


class OpponentMix:
    """The opponent of each new game: fixed members by weight, or a snapshot of the learner.

    A sampler of the environment's kind (``sample``, ``record``, ``in``):
    the snapshot slots are :class:`PolicyOpponent` objects refreshed in place
    (:meth:`snapshot`), so the environment sees a fixed set of opponents.
    With ``adaptive``, each fixed member's weight is multiplied by
    ``p (1 - p) + 0.05``, where ``p`` is the learner's smoothed score over its
    last ``window`` games against it (AlphaStar's "variance" prioritisation):
    most games go to opponents it beats about half the time, so a ladder of
    ``random``, noisy ``greedy`` and ``greedy`` becomes a curriculum.
    """

    def __init__(
        self,
        fixed: Sequence[tuple[str, Any, float]],
        snapshots: Sequence[Any],
        self_share: float,
        adaptive: bool = False,
        window: int = 200,
    ) -> None:
        self.entries = [Entry(name, opponent) for name, opponent, _ in fixed]
        self.entries += [Entry(f"self{i}", s, snapshot=True) for i, s in enumerate(snapshots)]
        slot = self_share / max(len(snapshots), 1)
        self.base = np.array([w for *_, w in fixed] + [slot] * len(snapshots), dtype=np.float64)
        self.adaptive = adaptive
        self.results: dict[str, deque[float]] = {e.name: deque(maxlen=window) for e in self.entries}
        self._next = 0

    @property
    def weights(self) -> np.ndarray:
        """Each entry's probability of being drawn now."""
        weights = self.base.copy()
        if self.adaptive:
            for i, entry in enumerate(self.entries):
                if not entry.snapshot:
                    seen = self.results[entry.name]
                    p = (sum(seen) + 1.0) / (len(seen) + 2.0)
                    weights[i] *= p * (1.0 - p) + 0.05
            fixed = ~np.array([e.snapshot for e in self.entries])
            if fixed.any() and weights[fixed].sum() > 0:  # the fixed members keep their share
                weights[fixed] *= self.base[fixed].sum() / weights[fixed].sum()
        return weights / weights.sum()

    def sample(self, rng: np.random.Generator) -> Entry:
        return self.entries[int(rng.choice(len(self.entries), p=self.weights))]

    def record(self, entry: Entry, reward: float) -> None:
        entry.record(reward)

    def note(self, name: str, score: float) -> None:
        """The learner scored ``score`` (1, 0.5, 0) in a game against ``name``."""
        if name in self.results:
            self.results[name].append(score)

    def __contains__(self, entry: object) -> bool:
        return any(entry is e for e in self.entries)

    def snapshot(self, policy: nn.Module) -> None:
        """Copy the learner's weights into the oldest snapshot slot."""
        slots = [e for e in self.entries if e.snapshot]
        if slots:
            slots[self._next % len(slots)].opponent.load_state_dict(policy.state_dict())
            self._next += 1


def make_opponent(spec: str, seed: int) -> Any:
    """The agent ``spec`` names, as a batch opponent where one exists: ``greedy``
    (with its ``noise``) is :class:`agents.greedy_batch.GreedyOpponent`, its
    values computed for all games at once; anything else is built by
    :func:`agents.make_agent` (and asked game by game unless it has ``act_batch``)."""
    agent = make_agent(spec, seed=seed)
    return GreedyOpponent(agent.noise) if type(agent) is GreedyAgent else agent


def learner_scores(infos: dict[str, Any]) -> list[tuple[int, str, float]]:
    """(game, opponent, score 1/0.5/0) of each game that ended in this step."""
    final = infos.get("final_info")
    if final is None:
        return []
    found = []
    for game in np.flatnonzero(infos["_final_info"]):
        result, learner = final["result"][game], final["learner"][game]
        if result is None:  # an illegal action: cannot happen with masked actions
            score = 0.0
        elif result == Result.DRAW:
            score = 0.5
        else:
            won_white = result == Result.WHITE_WINS
            score = 1.0 if won_white == (learner == "player_0") else 0.0
        opponents = final.get("opponent")
        found.append((int(game), str(opponents[game] if opponents is not None else None), score))
    return found


#: (segments, 5) flat cells (number - 1) * 11 + column of every five-point segment.
SEGMENT_CELLS = np.array([[(POINTS[p][1] - 1) * GRID + POINTS[p][0] for p in s] for s in SEGMENTS])


def threat_potential(planes: np.ndarray, weight: float) -> np.ndarray:
    """(n,) ``weight * (fours + threes / 4)``, own minus opponent's, of observations.

    A four (three) is a five-point segment holding four (three) of a side's
    markers and none of the other's: rows threatened.  Potential-based
    shaping (Ng et al., 1999) from it leaves the optimal policy unchanged.
    """
    cells = planes.reshape(len(planes), GRID * GRID, -1)
    own = cells[:, SEGMENT_CELLS, 2].sum(axis=2)
    opp = cells[:, SEGMENT_CELLS, 3].sum(axis=2)
    mine = np.where(opp == 0, own, 0)
    theirs = np.where(own == 0, opp, 0)
    value = (
        (mine == 4).sum(1) - (theirs == 4).sum(1) + ((mine == 3).sum(1) - (theirs == 3).sum(1)) / 4
    )
    return weight * value


def in_opening(planes: np.ndarray, plies: int) -> np.ndarray:
    """(n,) bool: which positions are still in the opening, ring placement with
    fewer than ``plies`` rings on the board (planes 0, 1 rings; plane 5 placement)."""
    if plies <= 0:
        return np.zeros(len(planes), dtype=np.bool_)
    rings = planes[..., 0].sum(axis=(1, 2)) + planes[..., 1].sum(axis=(1, 2))
    return np.asarray((planes[:, 0, 0, 5] > 0) & (rings < plies))


class OpeningOpponent:
    """``inner`` (a batch opponent), except in the opening: there a uniformly random
    placement, as the arena opens its games (``--opening-plies``)."""

    observes = True

    def __init__(self, inner: Any, plies: int) -> None:
        self.inner: Any = batch_opponent(inner)
        self.plies = plies
        self.name = getattr(inner, "name", type(inner).__name__)

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        if observations is None:
            raise ValueError("the opening opponent needs the observations")
        actions = np.zeros(len(masks), dtype=np.int64)
        rest = ~opening_moves(observations, masks, actions, self.plies, rng)
        if rest.any():
            planes = observations[rest] if getattr(self.inner, "observes", True) else None
            actions[rest] = self.inner.act_batch(planes, masks[rest], rng)
        return actions

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.inner.load_state_dict(state)


def opening_moves(
    planes: np.ndarray, masks: np.ndarray, actions: np.ndarray, plies: int, rng: np.random.Generator
) -> np.ndarray:
    """(n,) bool, and ``actions`` changed in place: random placements where in the opening."""
    opening = in_opening(planes, plies)
    if opening.any():
        actions[opening] = random_legal(masks[opening], rng)
    return opening


def check(
    policy: PPOPolicy, opponent: Any, games: int, seed: int, rings_to_win: int, plies: int = 0
) -> float:
    """The most-likely-action policy's score in ``games`` games against ``opponent``,
    each opened by ``plies`` random ring placements as the arena opens them."""
    env = YinshVectorEnv(
        num_envs=games, opponent=OpeningOpponent(opponent, plies), rings_to_win=rings_to_win
    )
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    scores: dict[int, float] = {}
    while len(scores) < games:
        actions = policy.choose(obs["observation"], obs["action_mask"], None)
        opening_moves(obs["observation"], obs["action_mask"], actions, plies, rng)
        obs, _, _, _, infos = env.step(actions)
        for game, _, score in learner_scores(infos):
            scores.setdefault(game, score)
    return float(np.mean(list(scores.values())))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    save: Path = args.save
    logdir: Path = args.logdir
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # --- 1. the vector environment and its opponents --------------------------------
    policy = PPOPolicy(args.channels, args.blocks)
    snapshots = [
        OpeningOpponent(PolicyOpponent(PPOPolicy(args.channels, args.blocks)), args.opening_plies)
        for i in range(args.pool_size if args.self_share > 0 else 0)
    ]
    mix = OpponentMix(
        [
            (spec, OpeningOpponent(make_opponent(spec, args.seed + i), args.opening_plies), w)
            for i, (spec, w) in enumerate(zip(args.opponents, args.opponent_weights))
        ],
        snapshots,
        args.self_share,
        adaptive=args.adaptive,
    )
    for _ in snapshots:
        mix.snapshot(policy)
    env = YinshVectorEnv(
        num_envs=args.num_envs,
        opponent=mix,
        rings_to_win=args.rings_to_win,
        dense_reward=args.dense_reward,
        gamma=args.gamma,
    )
    checker = make_opponent(args.check_against, args.seed + 1000)

    # --- 2. the actor-critic and its optimiser ---------------------------------------
    optimizer = optim.Adam(policy.parameters(), lr=args.learning_rate, eps=1e-5)
    from torch.utils.tensorboard import SummaryWriter  # imported late: slow to load

    writer = SummaryWriter(str(logdir))
    writer.add_text("command", " ".join(["python -m train.libraries.ppo", *(argv or sys.argv[1:])]))
    writer.add_text("hyperparameters", "\n".join(f"{k}: {v}" for k, v in vars(args).items()))

    # --- 3. rollout storage ----------------------------------------------------------
    n, t_len = args.num_envs, args.num_steps
    batch_size = n * t_len
    minibatch = batch_size // args.num_minibatches
    obs_buf = torch.zeros((t_len, n, 11, 11, 17))
    mask_buf = torch.zeros((t_len, n, N_ACTIONS), dtype=torch.bool)
    act_buf = torch.zeros((t_len, n), dtype=torch.long)
    logp_buf = torch.zeros((t_len, n))
    rew_buf = torch.zeros((t_len, n))
    done_buf = torch.zeros((t_len, n))
    val_buf = torch.zeros((t_len, n))
    forced_buf = torch.zeros((t_len, n))  # 1: an opening move, random, not the policy's
    rng = np.random.default_rng(args.seed)

    obs, _ = env.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs["observation"])
    next_mask = torch.as_tensor(obs["action_mask"]).bool()
    next_done = torch.zeros(n)
    phi = threat_potential(obs["observation"], args.threat_reward)
    episode_return = np.zeros(n)
    episode_length = np.zeros(n, dtype=np.int64)
    returns: deque[float] = deque(maxlen=200)
    lengths: deque[int] = deque(maxlen=200)
    recent: defaultdict[str, deque[float]] = defaultdict(lambda: deque(maxlen=200))
    last_check: float | None = None
    best_check = -1.0
    best_path = save.with_name(save.stem + "-best" + save.suffix)

    budget = args.minutes * 60.0
    start = last_report = last_check_time = time.monotonic()
    cpu_start = time.process_time()
    global_step = update = 0
    bar = None
    if sys.stdout.isatty():
        from tqdm import tqdm

        bar = tqdm(total=int(budget), unit="s", desc="ppo", leave=False)

    def say(line: str) -> None:
        if bar is not None:
            bar.write(line)
        else:
            print(line, flush=True)

    def run_check(games: int) -> float:
        nonlocal best_check
        score = check(
            policy, checker, games, args.seed + update, args.rings_to_win, args.opening_plies
        )
        writer.add_scalar(f"check/{args.check_against}", score, global_step)
        save_policy(save, policy, args.rings_to_win)
        if score > best_check:  # ties keep the earlier policy
            best_check = score
            save_policy(best_path, policy, args.rings_to_win)
            writer.add_scalar(f"check/best_{args.check_against}", score, global_step)
        return score

    say(
        f"ppo: {n} games x {t_len} steps per rollout, opponents "
        + ", ".join(f"{e.name} {w:.2f}" for e, w in zip(mix.entries, mix.weights))
        + f"; {sum(p.numel() for p in policy.parameters()):,} weights; saving to {save}"
    )

    def spent() -> float:
        """The share of the time budget used: wall clock or CPU, the larger."""
        share = (time.monotonic() - start) / budget
        if args.cpu_minutes is not None:
            share = max(share, (time.process_time() - cpu_start) / (60.0 * args.cpu_minutes))
        return share

    while True:
        used = spent()
        if used >= 1.0 or (args.total_steps and global_step >= args.total_steps):
            break
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - used)

        # --- 4. rollout: num_steps decisions in every game ---------------------------
        policy.eval()
        for step in range(t_len):
            obs_buf[step], mask_buf[step], done_buf[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                logits, value = policy(next_obs)
                dist = Categorical(logits=masked_logits(logits, next_mask))
                action = dist.sample()
            forced = opening_moves(
                next_obs.numpy(), obs["action_mask"], action.numpy(), args.opening_plies, rng
            )
            forced_buf[step] = torch.as_tensor(forced, dtype=torch.float32)
            act_buf[step], logp_buf[step], val_buf[step] = action, dist.log_prob(action), value
            obs, reward, done, truncated, infos = env.step(action.numpy())
            global_step += n
            ended = done | truncated
            if args.threat_reward:  # shaping: gamma * phi(next) - phi(now), phi 0 at the end
                following = threat_potential(obs["observation"], args.threat_reward)
                reward = reward + args.gamma * np.where(ended, 0.0, following) - phi
                phi = following  # an ended game's row holds the new game's first position
            rew_buf[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.as_tensor(obs["observation"])
            next_mask = torch.as_tensor(obs["action_mask"]).bool()
            next_done = torch.as_tensor(ended, dtype=torch.float32)
            episode_return += reward
            episode_length += 1
            for _game, opponent, score in learner_scores(infos):
                recent["self" if opponent.startswith("self") else opponent].append(score)
                mix.note(opponent, score)
            for game in np.flatnonzero(ended):
                returns.append(float(episode_return[game]))
                lengths.append(int(episode_length[game]))
                writer.add_scalar("charts/episodic_return", episode_return[game], global_step)
            episode_return[ended] = 0.0
            episode_length[ended] = 0

        # --- 5. generalised advantage estimation -------------------------------------
        with torch.no_grad():
            _, next_value = policy(next_obs)
            advantages = torch.zeros_like(rew_buf)
            gae = torch.zeros(n)
            for t in reversed(range(t_len)):
                if t == t_len - 1:
                    not_done, bootstrap = 1.0 - next_done, next_value
                else:
                    not_done, bootstrap = 1.0 - done_buf[t + 1], val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * bootstrap * not_done - val_buf[t]
                gae = delta + args.gamma * args.gae_lambda * not_done * gae
                advantages[t] = gae
            value_targets = advantages + val_buf

        # --- 6. the clipped objective, a few epochs of minibatches ------------------
        b_obs, b_mask = obs_buf.reshape(batch_size, 11, 11, 17), mask_buf.reshape(batch_size, -1)
        b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
        b_own = 1.0 - forced_buf.reshape(-1)  # the policy's own decisions
        b_adv, b_ret, b_val = advantages.reshape(-1), value_targets.reshape(-1), val_buf.reshape(-1)
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
                    torch.max(
                        -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                    )
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
        update += 1
        if update % args.snapshot_every == 0:
            mix.snapshot(policy)

        # --- 7. progress: TensorBoard, a line every report_every seconds, checks -----
        now = time.monotonic()
        sps = global_step / max(now - start, 1e-9)
        for name, value_ in (
            ("losses/policy", pg_loss.item()),
            ("losses/value", v_loss.item()),
            ("losses/entropy", entropy.item()),
            ("losses/approx_kl", approx_kl.item()),
            ("losses/clip_fraction", float(np.mean(clip_fracs))),
            ("charts/learning_rate", optimizer.param_groups[0]["lr"]),
            ("charts/steps_per_second", sps),
        ):
            writer.add_scalar(name, value_, global_step)
        for name, scores in recent.items():
            writer.add_scalar(f"train_score/{name}", float(np.mean(scores)), global_step)
        if args.check_games and now - last_check_time >= args.check_every:
            last_check = run_check(args.check_games)
            last_check_time = now = time.monotonic()
        if bar is not None:
            bar.n = min(int(now - start), int(budget))
            bar.set_postfix(steps=global_step, sps=int(sps))
        if now - last_report >= args.report_every:
            last_report = now
            say(
                f"{now - start:6.0f}s steps {global_step:,} ({sps:,.0f}/s, "
                f"{global_step / max(time.process_time() - cpu_start, 1e-9):,.0f}/CPU-s) "
                f"update {update} "
                f"return {np.mean(returns) if returns else float('nan'):+.2f} "
                f"length {np.mean(lengths) if lengths else float('nan'):.0f} "
                f"entropy {entropy.item():.2f} | score "
                + " ".join(f"{k} {np.mean(v):.2f}" for k, v in sorted(recent.items()))
                + (
                    f" | check {args.check_against} {last_check:.2f}"
                    if last_check is not None
                    else ""
                )
            )

    # --- 8. the last check and the saved policy -------------------------------------
    if bar is not None:
        bar.close()
    final = run_check(args.final_check_games) if args.final_check_games else None
    save_policy(save, policy, args.rings_to_win)
    elapsed = time.monotonic() - start
    cpu = time.process_time() - cpu_start
    say(
        f"done: {global_step:,} steps in {elapsed:.0f}s ({global_step / elapsed:,.0f}/s; "
        f"{cpu:.0f} CPU-s, {global_step / max(cpu, 1e-9):,.0f} steps per CPU-second), "
        f"{update} updates"
        + (
            f"; most-likely-action policy vs {args.check_against}: {final:.2f} "
            f"over {args.final_check_games} games"
            if final is not None
            else ""
        )
        + f"; saved {save} (play it as ppo:path={save})"
        + (f"; best check {best_check:.2f}: {best_path}" if best_check >= 0 else "")
    )
    writer.close()
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
