"""RLlib's PPO on the vector environment (``--env vector``): the opponents' pool, the
options' checks, every step the learner's, snapshots copied from the learner."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("ray.rllib", reason='optional extra: pip install -e ".[rllib]"')
from ray.rllib.core import DEFAULT_MODULE_ID

from agents import make_agent
from agents.baselines.greedy_batch import GreedyOpponent
from agents.learned.ppo_policy import PPOPolicy
from train.libraries import rllib_example as example
from train.libraries.rllib_vector import (
    TrainingScores,
    VectorLeague,
    make_vector_env,
    opponent_pool,
    refresh_snapshots,
    snapshot_opponents,
)

pytestmark = [
    pytest.mark.ray,
    pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-single-agent-env"),
    pytest.mark.usefixtures("torch_one_thread"),
]

NETWORK = {"network": "ppo", "channels": 4, "blocks": 1}
TINY = ["--batch-size", "64", "--minibatch-size", "32", "--epochs", "1", "--envs", "4"]
TINY += ["--network", "ppo", "--channels", "4", "--blocks", "1", "--rings-to-win", "1"]
TINY += ["--no-tensorboard", "--env", "vector"]


def test_the_pool_shares_the_games_between_fixed_opponents_and_snapshots() -> None:
    pool = opponent_pool(["random", "greedy:noise=100"], [1.0, 4.0], 0.75, 3, NETWORK, seed=0)
    assert pool.names == ["random", "greedy:noise=100", "self0", "self1", "self2"]
    np.testing.assert_allclose(pool.weights(), [0.15, 0.6, 0.25 / 3, 0.25 / 3, 0.25 / 3])
    assert isinstance(pool.entries[1].opponent, GreedyOpponent)  # batched, its noise kept
    assert pool.entries[1].opponent.noise == 100
    only_fixed = opponent_pool(["random"], None, 0.5, 0, NETWORK, seed=0)
    np.testing.assert_allclose(only_fixed.weights(), [1.0])  # no snapshots: every game
    only_snapshots = opponent_pool([], None, 0.8, 2, NETWORK, seed=0)
    np.testing.assert_allclose(only_snapshots.weights(), [0.5, 0.5])
    with pytest.raises(ValueError, match="needs opponents"):
        opponent_pool([], None, 0.8, 0, NETWORK, seed=0)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--env", "vector"], "--env vector needs --opponent"),
        (["--env", "vector", "--snapshots", "2"], "--network ppo"),
        (["--env", "lattice"], "invalid choice: 'lattice'"),
    ],
)
def test_the_command_line_refuses_a_vector_run_it_cannot_make(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        example.parse_args(example.build_parser(), argv)
    assert words in capsys.readouterr().err


def test_the_environment_rllib_makes_restarts_games_at_the_next_step() -> None:
    league: dict[str, Any] = {"league_opponents": ["random"], "league_weights": None}
    league |= {"league_share": 1.0, "snapshots": 1, "network": NETWORK, "seed": 0}
    vec = make_vector_env({"num_envs": 3, "opening_plies": 4, "gamma": 0.9, "league": league})
    assert vec.num_envs == 3 and vec.opening_plies == 4 and vec.gamma == 0.9
    assert vec.autoreset_mode.name == "NEXT_STEP"
    assert len(snapshot_opponents(vec)) == 1


def test_training_scores_are_each_fixed_opponents_since_the_last_call() -> None:
    pools = [opponent_pool(["random", "greedy"], None, 0.8, 1, NETWORK, seed=s) for s in (0, 1)]

    def runner(pool: Any) -> SimpleNamespace:
        return SimpleNamespace(env=SimpleNamespace(unwrapped=SimpleNamespace(opponent=pool)))

    runners = [runner(pools[0]), SimpleNamespace(env=None), runner(pools[1])]  # None: local

    def each(func: Any, local_env_runner: bool) -> list[Any]:
        return [func(runner) for runner in runners]

    algo = SimpleNamespace(env_runner_group=SimpleNamespace(foreach_env_runner=each))
    scores = TrainingScores()
    for pool, rewards in zip(pools, ([1.0, -1.0], [0.0])):
        for reward in rewards:
            pool.record(pool.entries[1], reward)  # greedy: a win, a loss; then a draw
        pool.record(pool.entries[2], 1.0)  # a snapshot's games are not counted
    assert scores.since_last(algo) == {"greedy": (3, pytest.approx(0.5))}
    pools[1].record(pools[1].entries[0], 1.0)
    assert scores.since_last(algo) == {"random": (1, 1.0)}  # greedy met no game since
    assert scores.since_last(algo) == {}


def test_the_vector_league_reports_scores_and_takes_snapshots_between_iterations() -> None:
    pool = opponent_pool(["greedy"], None, 0.5, 2, NETWORK, seed=0)
    learner = PPOPolicy(4, 1)
    runner = SimpleNamespace(
        env=SimpleNamespace(unwrapped=SimpleNamespace(opponent=pool)),
        module=SimpleNamespace(net=learner),
    )

    def each(func: Any, local_env_runner: bool) -> list[Any]:
        return [func(runner)]

    algo = SimpleNamespace(env_runner_group=SimpleNamespace(foreach_env_runner=each))
    league = VectorLeague(snapshots=2, snapshot_every=2, shown="greedy")
    league.start(algo)  # every slot the learner
    with torch.no_grad():
        for weight in learner.parameters():
            weight.add_(1.0)
    pool.record(pool.entries[0], 1.0)
    pool.record(pool.entries[0], 0.0)
    assert league.after_iteration(algo, 1) == (
        ", score greedy 0.75 (2)",
        {"train_score/greedy": 0.75},
    )
    assert league.after_iteration(algo, 2) == (", snapshot 1", {})
    moved = learner.state_dict()
    slots = [entry.opponent.policy.state_dict() for entry in pool.entries[1:]]
    assert all(torch.equal(slots[1][k], v) for k, v in moved.items())  # slot 1 % 2
    assert not any(torch.equal(slots[0][k], v) for k, v in moved.items())


@pytest.mark.slow
def test_a_vector_run_trains_on_the_learners_steps_only_and_copies_its_snapshots(
    ray_cluster: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [*TINY, "--league-opponents", "random", "greedy", "--snapshots", "2"]
    argv += ["--snapshot-every", "1", "--iterations", "2", "--eval-games", "2"]
    example.main([*argv, "--save", str(tmp_path / "module")])
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("iteration ")]
    assert len(lines) == 2
    for i, line in enumerate(lines, start=1):
        found = re.search(r"(\d+) env steps \((\d+) the learner's\)", line)
        assert found and found[1] == found[2] and int(found[1]) >= 64 * i  # every step
        assert f"snapshot {i}," in line
    agent = make_agent(f"rllib:path={tmp_path / 'module'}")
    assert agent.module.network == "ppo"  # type: ignore[attr-defined]

    args = example.parse_args(example.build_parser(), argv)
    algo = example.config_of(args).build_algo()
    try:
        runner = algo.env_runner
        slots = snapshot_opponents(runner.env)
        refresh_snapshots(algo)  # every slot the untrained learner
        first = {k: v.clone() for k, v in slots[0].policy.state_dict().items()}
        example.set_learning_rate(algo, 2.5e-4, example.learner_id(args))  # --anneal-lr's
        result = algo.train()
        assert result["learners"][DEFAULT_MODULE_ID]["default_optimizer_learning_rate"] == 2.5e-4
        refresh_snapshots(algo, 3)  # slot 3 % 2
        learned = algo.get_module(DEFAULT_MODULE_ID).net.state_dict()
        for key, value in slots[1].policy.state_dict().items():
            assert torch.equal(value, learned[key])
        assert any(not torch.equal(v, learned[k]) for k, v in first.items())  # it trained
        for key, value in slots[0].policy.state_dict().items():
            assert torch.equal(value, first[key])  # slot 0 untouched
    finally:
        algo.stop()
