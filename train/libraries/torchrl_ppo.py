"""PPO for YINSH from TorchRL's own parts: its wrapper, masked distribution, loss and collector.

::

    python -m train.libraries.torchrl_ppo --minutes 10 --save runs/torchrl/policy.pt

The recipe is the single-file PPO's (:mod:`train.libraries.ppo`): the same
options (:class:`Args` is its dataclass, ``--save`` aside), network, opponents
and reports, so one command line runs on both and the two can be compared.
What TorchRL does here:

* the environment: ``GymWrapper`` over the project's vector environment
  (``gym.make_vec("Yinsh-v0", vectorization_mode="vector_entry_point",
  autoreset_mode=DISABLED)``, TorchRL resetting finished games itself), with
  integer actions; ``RewardSum`` and ``StepCounter`` keep each game's return
  and length; ``--dense-reward`` and ``--threat-reward`` are the environment's own
  shaping options;
* the policy: :class:`~agents.learned.ppo_policy.PPOPolicy` in
  ``TensorDictModule``\\ s, a ``ProbabilisticActor`` sampling from
  ``MaskedCategorical`` over ``td["action_mask"]`` (entropy over the legal
  actions only) and the value as the critic;
* rollouts: the single-process ``Collector`` (torchrl 0.14's name for
  ``SyncDataCollector``), ``--num-envs`` x ``--num-steps`` decisions a batch;
* the update: ``GAE`` for advantages and value targets, ``ClipPPOLoss``
  (advantages normalised per minibatch, the value clipped, entropy bonus).

The project keeps what is YINSH's: the opponents (a pool of
:mod:`yinsh_env.envs.matchmaking`, given to the environment as ``opponent=``,
snapshots of the learner refreshed every ``--snapshot-every`` updates), the
arena's openings (:class:`OpeningMoves`: the learner's first placements random,
left out of the loss), the checks against ``--check-against``, progress lines
and TensorBoard scalars (:class:`~train.libraries.ppo_report.Report`).  The
saved policy is a plain ``state_dict`` the ``torchrl:path=FILE`` agent plays
without TorchRL (:mod:`agents.learned.torchrl_agent`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn, optim

from agents.infra.cli_args import output_file
from agents.learned.ppo_policy import PPOPolicy
from agents.learned.torchrl_agent import TORCHRL_FILES
from train.libraries import ppo
from train.libraries.dataclass_args import option
from train.libraries.ppo_games import in_opening, make_opponent
from train.libraries.ppo_report import Report
from yinsh_env.envs.matchmaking import OpponentPool
from yinsh_env.vector.batch_agents import random_legal

try:
    import gymnasium as gym
    from gymnasium.vector import AutoresetMode
    from tensordict import TensorDictBase
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torchrl.collectors import Collector
    from torchrl.envs import Compose, EnvBase, GymWrapper, RewardSum, StepCounter, TransformedEnv
    from torchrl.envs.transforms import Transform
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE
except ImportError as exc:  # pragma: no cover - the torchrl extra is missing
    raise SystemExit(
        f'train.libraries.torchrl_ppo needs TorchRL: pip install -e ".[torchrl]" ({exc})'
    ) from None

import yinsh_env.envs.gym_env  # noqa: F401 (registers Yinsh-v0)


@dataclass
class Args(ppo.Args):
    """The single-file PPO's hyper-parameters; only the saved policy's default differs."""

    save: Path = option(
        Path("runs/torchrl/policy.pt"), output_file((".pt",), parents=True), "the policy"
    )


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """The run's settings from the command line, checked as the single-file PPO's are."""
    return ppo.parse_args(argv, Args, "python -m train.libraries.torchrl_ppo", __doc__)


# --- the environment: the vector env in TorchRL's wrapper, its opponents scored ----------


class PoolScores:
    """The learner's scores since the last look, from the records the environment keeps
    in the pool's entries (``Entry.games``, ``Entry.score``), passed on to the report and
    to the pool's ``note`` (the ``--adaptive`` window): TorchRL's wrapper keeps no
    per-game ``info``.  Each new game counts the entry's mean score since the last look,
    so the windows' means are the games' own."""

    def __init__(self, pool: OpponentPool, report: Report) -> None:
        self.pool, self.report = pool, report
        self.seen: dict[str, tuple[int, float]] = {}

    def read(self) -> None:
        for entry in self.pool.entries:
            games, score = self.seen.get(entry.name, (0, 0.0))
            new = entry.games - games
            for _ in range(new):
                mean = (entry.score - score) / new
                self.pool.note(entry.name, mean)
                self.report.scored(entry.name, mean)
            self.seen[entry.name] = (entry.games, entry.score)


def make_env(args: Args, pool: OpponentPool) -> EnvBase:
    """The vector environment in TorchRL's ``GymWrapper``, its returns and lengths summed."""
    vector = gym.make_vec(
        "Yinsh-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.DISABLED,  # TorchRL resets finished games itself
        opponent=pool,
        rings_to_win=args.rings_to_win,
        dense_reward=args.dense_reward,
        threat_reward=args.threat_reward,
        gamma=args.gamma,
    )
    transforms: list[Transform] = [RewardSum(), StepCounter()]
    env = TransformedEnv(GymWrapper(vector, categorical_action_encoding=True), Compose(*transforms))
    env.set_seed(args.seed)
    return env


# --- the policy: the project's network in TensorDict modules ------------------------------


class SharedPass(nn.Module):
    """:class:`PPOPolicy`'s one pass, both outputs, for planes with any leading
    dimensions (a collector's ``(games,)``, GAE's ``(games, steps)``).

    ``ClipPPOLoss`` runs the actor, then the critic, on the same observations: two
    heads each reading the network afresh would run it twice a minibatch (a third
    more CPU a step).  The critic takes the value from the actor's pass instead, its
    graph too, as the single-file PPO's one pass gives both: a pass is reused while
    the planes are the same tensor, unchanged, the weights unchanged since, and the
    grad mode the same.  ``passes`` counts the network's passes.
    """

    def __init__(self, net: PPOPolicy) -> None:
        super().__init__()
        self.net = net
        self.passes = 0
        self._cached: tuple[torch.Tensor, tuple[Any, ...], tuple[torch.Tensor, ...]] | None = None

    def _key(self, planes: torch.Tensor) -> tuple[Any, ...]:
        weights = tuple((p.data_ptr(), p._version) for p in self.net.parameters())
        return planes._version, torch.is_grad_enabled(), weights

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, ...]:
        key = self._key(planes)
        if self._cached is not None and self._cached[0] is planes and self._cached[1] == key:
            return self._cached[2]
        lead = planes.shape[:-3]
        found = self.net(planes.reshape(-1, *planes.shape[-3:]))
        outputs = tuple(x.reshape(*lead, -1) for x in found)
        self._cached, self.passes = (planes, key, outputs), self.passes + 1
        return outputs

    def clear(self) -> None:
        """Forget the last pass (and its graph): after an update."""
        self._cached = None


class Head(nn.Module):
    """One of the shared pass's outputs (0: logits, 1: value)."""

    def __init__(self, shared: SharedPass, output: int) -> None:
        super().__init__()
        self.shared, self.output = shared, output

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        return self.shared(planes)[self.output]


class OpeningMoves(nn.Module):
    """After the actor: in the arena's opening (``--opening-plies`` rings on the board
    or fewer) a uniformly random placement instead, marked ``forced`` so that the loss
    leaves it out (:func:`~train.libraries.ppo_games.in_opening`)."""

    def __init__(self, plies: int, seed: int) -> None:
        super().__init__()
        self.plies, self.rng = plies, np.random.default_rng(seed)

    def forward(
        self, planes: torch.Tensor, masks: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        opening = in_opening(planes.numpy(), self.plies)
        if opening.any():
            action = action.clone()
            chosen = random_legal(masks.numpy()[opening], self.rng)
            action[torch.from_numpy(opening)] = torch.from_numpy(chosen)
        return action, torch.from_numpy(opening)


def make_actor_critic(net: PPOPolicy) -> tuple[ProbabilisticActor, TensorDictModule]:
    """TorchRL's actor (``MaskedCategorical`` over the legal actions) and critic, two
    heads over one :class:`SharedPass` of the network."""
    shared = SharedPass(net)
    logits = TensorDictModule(Head(shared, 0), in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": "logits", "mask": "legal"},
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = TensorDictModule(Head(shared, 1), in_keys=["observation"], out_keys=["state_value"])
    return actor, critic


class LegalMask(nn.Module):
    """The environment's int8 ``action_mask`` as the bool mask ``MaskedCategorical`` takes
    (``legal``: the collector refuses a policy that changes an input's dtype)."""

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        return mask.bool()


def collecting_policy(actor: ProbabilisticActor, args: Args) -> TensorDictSequential:
    """What the collector runs: the mask made bool, the actor, then the openings."""
    mask = TensorDictModule(LegalMask(), in_keys=["action_mask"], out_keys=["legal"])
    opening = TensorDictModule(
        OpeningMoves(args.opening_plies, args.seed),
        in_keys=["observation", "action_mask", "action"],
        out_keys=["action", "forced"],
    )
    return TensorDictSequential(mask, actor, opening)


# --- the update: GAE, then minibatches of ClipPPOLoss ------------------------------------


def make_loss(actor: ProbabilisticActor, critic: TensorDictModule, args: Args) -> ClipPPOLoss:
    """``ClipPPOLoss`` with the single-file PPO's settings (its value loss is half the
    squared error, clipped as the ratio is)."""
    loss = ClipPPOLoss(
        actor,
        critic,
        clip_epsilon=args.clip_coef,
        entropy_coeff=args.ent_coef,
        critic_coeff=0.5 * args.vf_coef,
        loss_critic_type="l2",
        normalize_advantage=True,
        clip_value=args.clip_coef,
    )
    # shifted: the values of each step and of the last next observation in one pass
    # of games x (steps + 1), not of every step and every next observation.
    loss.make_value_estimator(gamma=args.gamma, lmbda=args.gae_lambda, shifted=True)
    return loss


def update(
    loss: ClipPPOLoss, gae: GAE, optimizer: optim.Optimizer, data: TensorDictBase, args: Args
) -> dict[str, float]:
    """GAE over the batch ``(games, steps)``, then ``--update-epochs`` passes of
    ``--num-minibatches`` minibatches of the policy's own decisions; the losses."""
    with torch.no_grad():
        gae(data)
    decisions = data.reshape(-1)
    decisions = decisions[~decisions["forced"].reshape(-1)]
    size = len(decisions) // args.num_minibatches
    figures: dict[str, list[float]] = {}
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for _epoch in range(args.update_epochs):
        order = torch.randperm(len(decisions))
        kl = 0.0
        for begin in range(0, len(decisions) - size + 1, max(size, 1)):
            terms = loss(decisions[order[begin : begin + size]])
            total = terms["loss_objective"] + terms["loss_critic"] + terms["loss_entropy"]
            optimizer.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(params, args.max_grad_norm)
            optimizer.step()
            kl = float(terms["kl_approx"])
            for name in ("loss_objective", "loss_critic", "entropy", "kl_approx", "clip_fraction"):
                figures.setdefault(name, []).append(float(terms[name].detach()))
        if args.target_kl is not None and kl > args.target_kl:
            break
    for module in loss.actor_network.modules():  # the loss holds the actor, unregistered
        if isinstance(module, SharedPass):
            module.clear()
    names = {"loss_objective": "policy", "loss_critic": "value", "kl_approx": "approx_kl"}
    return {f"losses/{names.get(k, k)}": float(np.mean(v)) for k, v in figures.items()}


def ended_games(data: TensorDictBase, report: Report, steps: int) -> None:
    """Each game that ended in the batch: its return and length to the report."""
    done = data["next", "done"].squeeze(-1)
    returns = data["next", "episode_reward"].squeeze(-1)[done]
    lengths = data["next", "step_count"].squeeze(-1)[done]
    for value, length in zip(returns.tolist(), lengths.tolist()):
        report.episode(float(value), int(length), steps)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    net = PPOPolicy(args.channels, args.blocks)
    pool, slots = ppo.opponent_pool(args, net)
    checker = make_opponent(args.check_against, args.seed + 1000)
    report = Report(args, argv, net, pool, checker, TORCHRL_FILES)
    env, scores = make_env(args, pool), PoolScores(pool, report)
    actor, critic = make_actor_critic(net)
    loss = make_loss(actor, critic, args)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=ppo.ADAM_EPS)
    batch = args.num_envs * args.num_steps
    collector = Collector(
        env,
        collecting_policy(actor, args),
        frames_per_batch=batch,
        auto_register_policy_transforms=False,  # a feed-forward policy: none needed
    )

    steps = updates = 0
    for data in collector:
        steps += data.numel()
        ended_games(data, report, steps)
        scores.read()
        used = report.spent()
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - used)
        losses = update(loss, loss.value_estimator, optimizer, data, args)
        updates += 1
        if updates % args.snapshot_every == 0:
            ppo.refresh(slots, net)
        report.after_update(steps, updates, losses, optimizer.param_groups[0]["lr"])
        if report.spent() >= 1.0 or (args.total_steps and steps >= args.total_steps):
            break
    collector.shutdown()
    report.finish(steps, updates)
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
