"""Train a masked policy with RLlib's PPO on the multi-agent YINSH environment, or on the
vector environment (``--env vector``: :mod:`train.libraries.rllib_vector`, the recipe's).

Needs the optional extra: ``pip install -e ".[rllib]"``.  Examples::

    python -m train.libraries.rllib_example --iterations 20                    # self-play
    python -m train.libraries.rllib_example --minutes 60 --snapshots 5 --eval-every 20
    python -m train.libraries.rllib_example --iterations 20 --opponent greedy  # a baseline
    python -m train.libraries.rllib_example --minutes 14 --opponent random --save runs/rllib
    python -m train.libraries.rllib_example --iterations 50 --env-runners 4 --address auto
    python -m train.libraries.rllib_example --recipe configs/rllib.yaml --seed 4
    python -m train.libraries.rllib_example --env vector --opponent greedy --iterations 20

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
  convolutional trunk (or, ``--network ppo``, the single-file PPO's network), and
  before returning the action-distribution inputs sets the logits of illegal
  actions to the lowest float: sampling and the
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
  ``--dense-reward`` and ``--threat-reward`` shape both seats' rewards (the
  PettingZoo environment's options; zero-sum).  With ``--opponent SPEC`` the
  learner instead plays a fixed baseline agent (:class:`BaselineModule` wraps any
  agent spec: ``random``, ``greedy``, ``alphabeta:depth=1``), on alternating
  sides, and only the learner trains.

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
from agents.infra.ray_address import ray_address
from agents.learned.library_agent import save_variant
from agents.learned.rllib_models import LEARNER, MaskedPolicyModule, model_settings
from train.libraries.match_results import Evaluation
from train.libraries.progress import (
    RunProgress,
    tensorboard_dir,
)
from train.libraries.rllib_arguments import budget_spent, build_parser, parse_args
from train.libraries.rllib_league import SnapshotLeague, fixed_ids, league_mapping, snapshot_ids
from train.libraries.rllib_vector import ENV_OPTIONS, VectorLeague, vector_config
from yinsh_env import env as make_aec_env
from yinsh_env.engine.errors import IllegalActionError
from yinsh_env.envs.env_base import AGENTS

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
    options = {key: env_config[key] for key in ENV_OPTIONS if key in env_config}
    return PettingZooEnv(make_aec_env(**options))  # the environment checks each option


class BaselineModule(RLModule):
    """A fixed opponent: any agent spec (``model_config["spec"]``), never trained.

    An agent that decides for many games at once (``act_batch``: ``greedy`` values
    every game's moves in array operations, as the vector environment's opponents do)
    gets the whole batch; any other reads each observation back into a position (the
    agents' own ``act_observation``).  Either returns the agent's actions directly.
    """

    def setup(self) -> None:
        settings = model_settings(self.model_config)
        self.agent: Agent = make_agent(
            str(settings.get("spec", "random")), seed=settings.get("seed")
        )

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        planes, masks = _numpy(obs["observation"]), _numpy(obs["action_mask"])
        act_batch = getattr(self.agent, "act_batch", None)
        if callable(act_batch):  # greedy, random: every game at once
            return {Columns.ACTIONS: np.asarray(act_batch(planes, masks), dtype=np.int64)}
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
    network: str = "cnn",
    blocks: int = 2,
    ppo: dict[str, float] | None = None,
    shaping: tuple[float, float] = (0.0, 0.0),
    league_weights: Sequence[float] | None = None,
) -> Any:
    """The PPO config: masked module(s), self-play or a baseline opponent.

    ``gamma``: the discount (1.0 by default: one reward, at the end of a bounded game).
    ``opening_plies``: each game opens with that many random ring placements, as the
    arena's do (:data:`~yinsh_env.envs.env_base.ARENA_OPENING_PLIES`).

    ``network``, ``channels``, ``hidden``, ``blocks``: the module's
    (:class:`~agents.learned.rllib_models.MaskedPolicyModule`).  ``ppo``: more of PPO's
    settings, by their names here: ``clip``, ``vf_coef``, ``grad_clip`` (0: none) and
    ``kl_coeff`` (0: no KL penalty); RLlib's defaults otherwise.  ``shaping``: the
    environment's ``(dense_reward, threat_reward)``, both seats shaped, discounted by
    ``gamma``.

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
    model_config = {"network": network, "channels": channels, "hidden": hidden, "blocks": blocks}
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
        mapping = league_mapping(
            LEARNER, [], 1.0, fixed=fixed, fixed_share=league_share, fixed_weights=league_weights
        )
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
            env_config={
                "rings_to_win": rings_to_win,
                "opening_plies": opening_plies,
                "dense_reward": shaping[0],
                "threat_reward": shaping[1],
                "gamma": gamma,
            },
            disable_env_checking=True,
        )
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs)
        .learners(num_learners=0)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(**training_settings(batch_size, minibatch_size, epochs, lr, gamma, entropy, ppo))
        .debugging(seed=seed, log_sys_usage=False)  # needs GPUtil, and warns without it
    )


def training_settings(
    batch_size: int,
    minibatch_size: int,
    epochs: int,
    lr: float,
    gamma: float,
    entropy: float,
    ppo: dict[str, float] | None,
) -> dict[str, Any]:
    """RLlib's ``training()`` arguments: the batch, the epochs, the rate, GAE (lambda 0.95),
    :func:`ppo_settings` and the learner with the single-file PPO's Adam
    (:class:`~train.libraries.rllib_learner.RecipeLearner`)."""
    from train.libraries.rllib_learner import RecipeLearner

    return {
        "learner_class": RecipeLearner,
        "train_batch_size_per_learner": batch_size,
        "minibatch_size": minibatch_size,
        "num_epochs": epochs,
        "lr": lr,
        "gamma": gamma,
        "lambda_": 0.95,
        "entropy_coeff": entropy,
        **ppo_settings(ppo or {}),
    }


def ppo_settings(ppo: dict[str, float]) -> dict[str, Any]:
    """RLlib's ``training()`` arguments for the settings ``build_config`` names ``ppo``."""
    known = {"clip", "vf_coef", "grad_clip", "kl_coeff"}
    if set(ppo) - known:
        raise ValueError(f"unknown PPO settings {sorted(set(ppo) - known)}; known: {sorted(known)}")
    settings: dict[str, Any] = {}
    if "clip" in ppo:
        settings["clip_param"] = ppo["clip"]
    if "vf_coef" in ppo:
        settings["vf_loss_coeff"] = ppo["vf_coef"]
    if ppo.get("grad_clip"):
        settings.update(grad_clip=ppo["grad_clip"], grad_clip_by="global_norm")
    if "kl_coeff" in ppo:
        settings.update(use_kl_loss=ppo["kl_coeff"] > 0, kl_coeff=ppo["kl_coeff"])
    return settings


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


def learner_id(args: argparse.Namespace) -> str:
    """The learner's module id: RLlib's default one on the vector environment."""
    if args.env == "vector":
        from ray.rllib.core import DEFAULT_MODULE_ID

        return str(DEFAULT_MODULE_ID)
    return LEARNER


def config_of(args: argparse.Namespace) -> Any:
    """The PPO config the arguments ask for (:func:`build_config`, or on the vector
    environment :func:`~train.libraries.rllib_vector.vector_config`)."""
    ppo = {
        "clip": args.clip,
        "vf_coef": args.vf_coef,
        "grad_clip": args.grad_clip,
        "kl_coeff": args.kl_coeff,
    }
    if args.env == "vector":
        model = {key: getattr(args, key) for key in ("network", "channels", "hidden", "blocks")}
        batches = (args.batch_size, args.minibatch_size, args.epochs)
        training = training_settings(*batches, args.lr, args.gamma, args.entropy, ppo)
        return vector_config(args, model, training)
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
        network=args.network,
        blocks=args.blocks,
        ppo=ppo,
        shaping=(args.dense_reward, args.threat_reward),
        league_weights=args.league_weights,
    )


def league_of(args: argparse.Namespace) -> SnapshotLeague | None:
    """Self-play's league of snapshots and fixed opponents, if the arguments ask for one
    (on the AEC environment: on the vector one, the opponents are the environment's)."""
    if args.env == "vector" or not (args.snapshots or args.league_opponents):
        return None
    return SnapshotLeague(
        LEARNER,
        args.snapshots,
        args.snapshot_every,
        args.self_share,
        fixed=fixed_ids(len(args.league_opponents)),
        fixed_share=args.league_share,
        fixed_weights=args.league_weights,
    )


def set_learning_rate(algo: Any, rate: float, module_id: str = LEARNER) -> None:
    """The learner's step size from the next update on.

    RLlib keeps a schedule for each optimiser and sets the optimiser's rate from it
    after every update, over environment steps; a run with a CPU budget does not know
    its steps in advance, so each iteration replaces the schedule with the rate its
    budget gives (``--anneal-lr``, as the single-file PPO anneals).
    """
    from ray.rllib.utils.schedules.scheduler import Scheduler

    def apply(learner: Any) -> None:
        for _name, optimizer in learner.get_optimizers_for_module(module_id):
            learner._optimizer_lr_schedules[optimizer] = Scheduler(rate, device=learner._device)
            learner._set_optimizer_lr(optimizer, rate)

    algo.learner_group.foreach_learner(apply)


def train_iterations(
    algo: Any, args: argparse.Namespace, league: SnapshotLeague | None, progress: RunProgress
) -> None:
    """``--iterations`` of PPO (fewer once a budget is spent), a line after each."""
    start, cpu_start = time.perf_counter(), time.process_time()
    learner = learner_id(args)
    vector = VectorLeague(args.snapshots, args.snapshot_every, args.eval_opponent)
    if args.env == "vector":
        vector.start(algo)
    for i in range(1, args.iterations + 1):
        result = algo.train()
        runners = result.get("env_runners", {})
        steps = int(result.get("num_env_steps_sampled_lifetime", 0))
        length = runners.get("episode_len_mean", float("nan"))
        own = int(runners.get("num_module_steps_sampled_lifetime", {}).get(learner, 0))
        line = f"iteration {i}: {steps} env steps ({own} the learner's), "
        line += f"mean episode length {length:.1f}"
        figures = {"episode_length": length, "learner_steps": own}
        if args.opponent != "self" or league is not None or args.env == "vector":
            returns = runners.get("module_episode_returns_mean", {})
            mean_return = returns.get(learner, runners.get("episode_return_mean", float("nan")))
            line += f", learner's mean return {mean_return:+.2f}"
            figures["episode_return"] = mean_return
        if league is not None and league.after_iteration(algo, i):
            line += f", snapshot {len(league.history)}"
        if args.env == "vector":
            words, scores = vector.after_iteration(algo, i)
            line += words
            for name, score in scores.items():
                progress.scalar(name, score, steps)
        if args.eval_every and i % args.eval_every == 0:
            module = algo.get_module(learner)
            check = evaluate(
                module, args.eval_opponent, 10, args.rings_to_win, i, args.opening_plies
            )
            line += f", vs {args.eval_opponent} {check.score:.2f} (10 games)"
            progress.scalar(f"check/{args.eval_opponent}", check.score, steps)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        rate = steps / elapsed if elapsed > 0 else 0.0
        figures["steps_per_second"] = rate
        if args.anneal_lr:
            figures["learning_rate"] = args.lr * max(0.0, 1.0 - budget_spent(args, i, elapsed, cpu))
            set_learning_rate(algo, figures["learning_rate"], learner)
            line += f", next lr {figures['learning_rate']:.2e}"
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
    module = algo.get_module(learner_id(args))
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
