"""The MaskablePPO script takes the single-file PPO's recipe: a weighted mix with snapshots,
both shapings, the arena's openings and a learning rate annealed over its budget."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")

from train.libraries import sb3_maskable_ppo as example
from train.libraries.sb3_arguments import parse_args
from train.libraries.sb3_callbacks import BudgetSchedule

pytestmark = pytest.mark.usefixtures("torch_one_thread")

MIX = ["--opponent", "random", "greedy", "--opponent-weights", "1", "3"]


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_weights_make_a_fixed_mix_whose_snapshots_share_self_share() -> None:
    args = parse_args([*MIX, "--self-play", "--self-share", "0.4", "--pool-size", "4"])
    assert args.pool_strategy == "weighted"
    sampler = example.opponents_of(args)
    weights = dict(zip(sampler.names, sampler.weights().tolist()))
    assert weights == pytest.approx({"random": 0.25, "greedy": 0.75})
    model = example.build_model(example.make_vec_env(sampler, envs=2), channels=4, features=8)
    from train.libraries.sb3_selfplay import SelfPlayCallback

    callback = SelfPlayCallback(sampler, sampler, every=10, report_every=0, snapshot_weight=0.1)
    for step in range(5):  # more snapshots than the pool keeps
        callback.snapshot(model.policy, step)
    weights = dict(zip(sampler.names, sampler.weights().tolist()))
    assert sum(v for k, v in weights.items() if k.startswith("snapshot@")) == pytest.approx(
        0.4 / 4.4
    )
    assert weights["greedy"] == pytest.approx(3 / 4.4)


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        ([*MIX, "1"], "3 weight(s) for 2 --opponent(s)"),
        (["--opponent", "random", "--opponent-weights", "0"], "every weight is 0"),
        (["--opponent", "random", "greedy", "--pool-strategy", "weighted"], "needs --opponent-"),
        (["--self-play", "--self-share", "0.2"], "give --opponent-weights"),
        (["--opening-plies", "11"], "--opening-plies"),
        (["--threat-reward", "11"], "--threat-reward"),
    ],
)
def test_a_mix_that_cannot_be_played_is_refused_by_name(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert problem in refused(argv, capsys)


def test_the_vector_environment_gets_the_openings_and_both_shapings() -> None:
    env = example.make_vec_env(
        "random", envs=2, dense_reward=0.5, threat_reward=0.05, opening_plies=4
    )
    inner = env.env
    assert (inner.opening_plies, inner.dense_reward, inner.threat_reward) == (4, 0.5, 0.05)
    observations = env.reset()
    # Four random placements before the learner first decides (five if it plays Black).
    rings = observations["observation"][..., :2].sum(axis=(1, 2, 3))
    assert set(rings.tolist()) <= {4.0, 5.0}


def test_the_learning_rate_anneals_over_the_cpu_budget() -> None:
    schedule = BudgetSchedule(1e-3, cpu_minutes=1e6)
    assert 0.99e-3 < schedule(1.0) <= 1e-3
    spent = BudgetSchedule(1e-3, cpu_minutes=time.process_time() / 60.0 / 2)
    assert spent(1.0) == 0.0  # twice its budget used: no step at all, never negative
    assert BudgetSchedule(1e-3)(0.5) == pytest.approx(5e-4)  # no budget: SB3's own


@pytest.mark.parametrize("network", ["cnn", "ppo"])
def test_a_recipe_run_saves_a_model_the_agent_loads(network: str, tmp_path: object) -> None:
    """The whole recipe, tiny: weights, snapshots, shaping, openings, annealing; with
    ``--network ppo`` the single-file PPO's network, which the safe loader accepts."""
    from pathlib import Path

    from agents import make_agent
    from yinsh_env import new_game

    save = Path(str(tmp_path)) / "m.zip"
    argv = [*MIX, "--self-play", "--self-share", "0.2", "--snapshot-every", "32"]
    argv += ["--timesteps", "96", "--anneal-lr", "--cpu-minutes", "1e5", "--network", network]
    argv += ["--n-steps", "16", "--envs", "2", "--batch-size", "32", "--n-epochs", "1"]
    argv += ["--no-tensorboard", "--channels", "4", "--features", "16", "--blocks", "1"]
    argv += ["--eval-games", "2", "--opening-plies", "4", "--dense-reward", "0.5"]
    argv += ["--threat-reward", "0.05", "--precision", "fp32", "--save", str(save)]
    result = example.main(argv)
    assert result.games == 2 and save.is_file()
    agent = make_agent(f"sb3:path={save}")
    state = new_game()
    assert agent.act(state) in state.legal_actions()
    expected = "PPONetPolicy" if network == "ppo" else "PlanesPolicy"
    assert type(agent.model.policy).__name__ == expected
