"""RLlib's PPO over the vector environment: the opponents play inside the environment.

``python -m train.libraries.rllib_example --env vector`` (the recipe,
``configs/rllib.yaml``, does) gives RLlib's single-agent ``EnvRunner`` the
project's :class:`~yinsh_env.vector.env.YinshVectorEnv` whole (Gymnasium's
``VECTOR_ENTRY_POINT``), so that every environment step is one decision of the
learner and the opponents decide for all their games at once inside the step, as
SB3 and the single-file PPO train.  On the multi-agent AEC environment (``--env
aec``, RLlib's league), RLlib's sampler also steps the opponents' moves, one
module call each: more than a third of the steps, none of them the learner's.

* **Autoreset.**  RLlib's episodes follow Gymnasium's ``NEXT_STEP``: a game
  that ends shows its last observation; the next step starts it anew and reads
  no action for it.  The vector environment offers that mode.
* **Opponents.**  :func:`opponent_pool` builds matchmaking's weighted pool: the
  fixed ``league_opponents`` by ``league_weights``, met in ``league_share`` of
  the games, and ``snapshots`` frozen copies of the learner in the rest.
* **Snapshots.**  Every ``snapshot_every`` iterations :func:`refresh_snapshots`
  copies the ``EnvRunner``'s module (the learner's weights, synchronised after
  each iteration) into the next slot, round-robin, in every ``EnvRunner``.
  :class:`VectorLeague` does it between iterations, and reads the learner's
  training scores (:class:`TrainingScores`), as ``rllib_league.SnapshotLeague``
  keeps the AEC environment's league.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gymnasium.vector import AutoresetMode

from agents.learned.ppo_policy import PolicyOpponent, PPOPolicy
from train.libraries.ppo_games import make_opponent
from yinsh_env.envs.matchmaking import Entry, OpponentPool
from yinsh_env.vector.env import YinshVectorEnv

VECTOR_ENV_NAME = "yinsh_vector"
#: The ``env_config`` keys either environment takes as they are (the rest are defaults).
ENV_OPTIONS = ("rings_to_win", "opening_plies", "dense_reward", "threat_reward", "gamma")


def opponent_pool(
    league_opponents: Sequence[str],
    league_weights: Sequence[float] | None,
    league_share: float,
    snapshots: int,
    network: dict[str, Any],
    seed: int,
) -> OpponentPool:
    """The fixed opponents (agent specs; ``greedy`` batched) by weight in ``league_share``
    of the games, and ``snapshots`` untrained copies of the ``network`` (``channels``,
    ``blocks``: the single-file PPO's) sharing the rest.

    >>> pool = opponent_pool(["random", "greedy"], [1, 3], 0.8, 2, {}, seed=0)
    >>> pool.names, [round(float(w), 2) for w in pool.weights()]
    (['random', 'greedy', 'self0', 'self1'], [0.2, 0.6, 0.1, 0.1])
    """
    if not league_opponents and not snapshots:
        raise ValueError("the vector environment needs opponents: --league-opponents, --snapshots")
    weights = list(league_weights or [1.0] * len(league_opponents))
    fixed_share = league_share if snapshots else 1.0
    snapshot_share = (1.0 - fixed_share) if league_opponents else 1.0
    pool = OpponentPool("weighted", max_snapshots=max(snapshots, 1))
    for i, (spec, weight) in enumerate(zip(league_opponents, weights)):
        share = fixed_share * weight / sum(weights)
        pool.add(spec, make_opponent(spec, seed + 1 + i), weight=share)
    channels, blocks = int(network.get("channels", 16)), int(network.get("blocks", 2))
    for i in range(snapshots):
        snapshot = PolicyOpponent(PPOPolicy(channels, blocks))
        pool.add(f"self{i}", snapshot, snapshot=True, weight=snapshot_share / snapshots)
    return pool


def make_vector_env(env_config: dict[str, Any]) -> YinshVectorEnv:
    """RLlib's environment creator: ``env_config["num_envs"]`` games (RLlib adds it) against
    the pool the config's ``league`` describes (:func:`opponent_pool`'s arguments)."""
    options = {key: env_config[key] for key in ENV_OPTIONS if key in env_config}
    return YinshVectorEnv(
        num_envs=int(env_config.get("num_envs", 1)),
        opponent=opponent_pool(**env_config["league"]),
        autoreset_mode=AutoresetMode.NEXT_STEP,
        **options,
    )


def pool_entries(env: Any) -> list[Entry]:
    """The members of a vector environment's pool (through any wrappers); none where an
    ``EnvRunner`` holds no environment (the local one beside remote ones)."""
    return [] if env is None else list(env.unwrapped.opponent.entries)


def snapshot_opponents(env: Any) -> list[PolicyOpponent]:
    """The snapshot slots of a vector environment's pool (through any wrappers)."""
    return [entry.opponent for entry in pool_entries(env) if entry.snapshot]


def refresh_snapshots(algo: Any, index: int | None = None) -> None:
    """Copy the learner's weights into snapshot slot ``index`` (modulo their number) of
    every ``EnvRunner``'s environment, or into every slot if ``index`` is None."""

    def copy(runner: Any) -> None:
        slots = snapshot_opponents(getattr(runner, "env", None))
        if not slots:
            return
        state = runner.module.net.state_dict()
        chosen = slots if index is None else [slots[index % len(slots)]]
        for slot in chosen:
            slot.load_state_dict(state)

    algo.env_runner_group.foreach_env_runner(copy, local_env_runner=True)


class TrainingScores:
    """The learner's score against each fixed opponent of the pools, since the last call.

    The vector environment tells its pool each game's result (``Entry.games``,
    ``Entry.score``: 1 a win, 0.5 a draw); :meth:`since_last` sums them over the
    ``EnvRunner``s and gives each opponent met since the last call ``(games, score)``,
    the training curve the single-file PPO draws as ``train_score/NAME``.
    """

    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, float]] = {}

    def since_last(self, algo: Any) -> dict[str, tuple[int, float]]:
        def read(runner: Any) -> list[tuple[str, int, float]]:
            entries = pool_entries(getattr(runner, "env", None))
            return [(e.name, e.games, e.score) for e in entries if not e.snapshot]

        totals: dict[str, tuple[int, float]] = {}
        for rows in algo.env_runner_group.foreach_env_runner(read, local_env_runner=True):
            for name, games, score in rows:
                before = totals.get(name, (0, 0.0))
                totals[name] = (before[0] + games, before[1] + score)
        found = {}
        for name, (games, score) in totals.items():
            games_before, score_before = self.seen.get(name, (0, 0.0))
            if games > games_before:
                new = games - games_before
                found[name] = (new, (score - score_before) / new)
        self.seen = totals
        return found


class VectorLeague:
    """The vector environment's opponents between iterations: every snapshot slot the
    untrained learner at the start, the next slot the learner every ``snapshot_every``
    iterations, and the learner's training scores since the last iteration."""

    def __init__(self, snapshots: int, snapshot_every: int, shown: str) -> None:
        self.snapshots, self.snapshot_every, self.shown = snapshots, snapshot_every, shown
        self.scores = TrainingScores()

    def start(self, algo: Any) -> None:
        if self.snapshots:
            refresh_snapshots(algo)

    def after_iteration(self, algo: Any, iteration: int) -> tuple[str, dict[str, float]]:
        """The line's words (the score against ``shown``, a snapshot taken) and each fixed
        opponent's training score (TensorBoard's ``train_score/NAME``)."""
        words, scalars = "", {}
        for name, (games, score) in self.scores.since_last(algo).items():
            scalars[f"train_score/{name}"] = score
            if name == self.shown:
                words += f", score {name} {score:.2f} ({games})"
        if self.snapshots and iteration % self.snapshot_every == 0:
            refresh_snapshots(algo, iteration // self.snapshot_every)
            words += f", snapshot {iteration // self.snapshot_every}"
        return words, scalars


def vector_config(args: Any, model_config: dict[str, Any], training: dict[str, Any]) -> Any:
    """RLlib's PPO config for ``--env vector``: one module (RLlib's default id), the
    vector environment as ``num_envs_per_env_runner`` games, ``training`` as given."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from agents.learned.rllib_models import MaskedPolicyModule

    register_env(VECTOR_ENV_NAME, make_vector_env)
    fixed = list(args.league_opponents) or ([] if args.opponent == "self" else [args.opponent])
    league = {
        "league_opponents": fixed,
        "league_weights": args.league_weights if args.league_opponents else None,
        "league_share": args.league_share,
        "snapshots": args.snapshots,
        "network": model_config,
        "seed": args.seed,
    }
    env_config = {key: getattr(args, key) for key in ENV_OPTIONS} | {"league": league}
    return (
        PPOConfig()
        .environment(VECTOR_ENV_NAME, env_config=env_config, disable_env_checking=True)
        .env_runners(
            num_env_runners=args.env_runners,
            num_envs_per_env_runner=args.envs,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .learners(num_learners=0)
        .rl_module(
            rl_module_spec=RLModuleSpec(module_class=MaskedPolicyModule, model_config=model_config)
        )
        .training(**training)
        .debugging(seed=args.seed, log_sys_usage=False)  # needs GPUtil, and warns without it
    )
