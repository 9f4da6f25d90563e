"""MaskablePPO self-play: frozen snapshots, the pool they join, the command line, the profile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
torch = pytest.importorskip("torch")

from agents.learned.sb3_agent import policy_probabilities  # noqa: E402
from train.libraries import sb3_maskable_ppo as example  # noqa: E402
from train.libraries import sb3_selfplay as selfplay  # noqa: E402
from yinsh_env import State  # noqa: E402
from yinsh_env.envs.matchmaking import Curriculum, League, OpponentPool  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TINY = ["--n-steps", "32", "--envs", "2", "--batch-size", "32", "--n-epochs", "1"]
TINY += ["--no-tensorboard", "--channels", "4", "--features", "16", "--rings-to-win", "1"]


def tiny_model(opponent: object) -> object:
    env = example.make_vec_env(opponent, seed=0, rings_to_win=1, envs=2)
    return example.build_model(env, n_steps=32, batch_size=32, n_epochs=2, channels=4, features=16)


@pytest.mark.slow
def test_snapshots_are_frozen_copies_and_join_the_pool_every_k_steps() -> None:
    pool = OpponentPool("recent", max_snapshots=3)
    model = tiny_model(pool)
    callback = selfplay.SelfPlayCallback(pool, pool, every=64, report_every=0)
    with pytest.raises(ValueError, match="empty"):  # the first opponents are chosen at once
        model.learn(total_timesteps=32)  # type: ignore[attr-defined]
    callback.snapshot(model.policy, 0)  # type: ignore[attr-defined]
    model.learn(total_timesteps=256, callback=callback)  # type: ignore[attr-defined]
    # One when training starts, then one every 64 steps: 0, 64, 128, 192, 256; three kept.
    assert [s.added for s in pool.entries] == [2, 3, 4]
    assert pool.names == ["snapshot@128", "snapshot@192", "snapshot@256"]
    assert sum(e.games for e in pool.entries) >= 0 and len(callback.snapshots) == 5

    first = callback.snapshots[0]
    learner = model.policy  # type: ignore[attr-defined]
    frozen = [p.detach().clone() for p in first.policy.parameters()]
    assert first.policy is not learner and first.policy.optimizer is None
    assert not any(p.requires_grad for p in first.policy.parameters())
    state = State(rings_to_win=1)
    before = first.legal_probabilities(state)
    model.learn(total_timesteps=128, reset_num_timesteps=False)  # type: ignore[attr-defined]
    assert all(torch.equal(a, b) for a, b in zip(first.policy.parameters(), frozen))
    np.testing.assert_array_equal(first.legal_probabilities(state), before)
    live = selfplay.PolicySnapshot(learner)  # the learner has moved on since the first
    assert not all(torch.equal(a, b) for a, b in zip(live.policy.parameters(), frozen))
    legal = state.legal_mask() > 0
    assert before.sum() == pytest.approx(1.0) and not before[~legal].any()
    assert first.act(state) in state.legal_actions() and first.seconds > 0


def test_build_sampler_gives_a_pool_a_curriculum_or_a_league() -> None:
    pool = selfplay.build_sampler(["random", "greedy"], strategy="uniform")
    assert isinstance(pool, OpponentPool) and pool.names == ["random", "greedy"]
    from agents.baselines.greedy_batch import GreedyOpponent

    # greedy scores all its games' moves at once on the vector environment
    assert isinstance(pool.entries[1].opponent, GreedyOpponent)
    noisy = selfplay.build_sampler([], curriculum=["random", "greedy:noise=150"])
    assert noisy.entries[1].opponent.noise == 150.0
    assert selfplay.snapshot_pool(pool) is pool and selfplay.curriculum_of(pool) is None
    ladder = selfplay.build_sampler([], curriculum=["random", "greedy"])
    assert isinstance(ladder, Curriculum) and selfplay.snapshot_pool(ladder) is None
    league = selfplay.build_sampler([], True, ["random"], curriculum_share=0.25)
    assert isinstance(league, League) and [w for w, _ in league.members] == [0.25, 0.75]
    assert isinstance(selfplay.snapshot_pool(league), OpponentPool)
    assert selfplay.curriculum_of(league) is league.members[0][1]
    with pytest.raises(ValueError, match="no opponents"):
        selfplay.build_sampler([])


def test_self_play_from_the_command_line_reports_progress_and_a_profile(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--self-play", "--curriculum", "random", "greedy", "--timesteps", "192"]
    args += ["--snapshot-every", "64", "--report-every", "64", "--eval-games", "1", *TINY]
    result = example.main(args)
    out = capsys.readouterr().out
    progress = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(progress) == 3 and all("| stage random" in line for line in progress), out
    assert any("snapshot@0" in line or "random" in line for line in progress)
    assert "profile: 192 steps" in out and "PPO updates" in out
    assert "vs greedy:" in out and result.games == 1  # no --opponent: judged against greedy

    with pytest.raises(SystemExit) as refused:  # checked before anything is built
        example.main(["--curriculum", "random", "no-such-agent", *TINY])
    assert refused.value.code == 2 and "no-such-agent" in capsys.readouterr().err


def test_a_fixed_opponent_alone_still_plays_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    example.main(["--opponent", "random", "--timesteps", "64", "--eval-games", "1", *TINY])
    out = capsys.readouterr().out
    assert "vs random:" in out and "profile: 64 steps" in out
    # The run's last figures; no scores per opponent without a pool.
    assert "step 64 |" in out and "| score" not in out


@pytest.mark.slow
def test_warm_start_begins_as_the_shipped_networks_raw_policy_and_saves(tmp_path: Path) -> None:
    from agents import make_agent

    env = example.make_vec_env("random", seed=0, rings_to_win=3, envs=2)
    model = example.build_model(env, n_steps=32, batch_size=32, n_epochs=1, warm_start=True)
    shipped = make_agent("pretrained:sims=0,backend=torch")
    rng = np.random.default_rng(0)
    state = State()
    # The same choices as pretrained:sims=0 before any update, exactly: at these positions
    # the top two logits are at least 1e-2 apart (4e-3 for anchor-v1's, below), and
    # float32 rounding in either network's kernels moves them by about 1e-5.
    for _ in range(30):
        if state.is_terminal:
            state = State()
        probs = policy_probabilities(model.policy, state)
        assert int(np.argmax(probs)) == shipped.act(state)
        state.apply(int(rng.choice(state.legal_actions())))
    norms = [m for m in model.policy.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    before = [n.running_mean.clone() for n in norms]
    model.learn(total_timesteps=64)
    assert norms and all(torch.equal(n.running_mean, b) for n, b in zip(norms, before))
    path = tmp_path / "warm.zip"
    model.save(path)
    agent = make_agent(f"sb3:path={path}")
    assert agent.act(State()) in State().legal_actions()


def test_warm_start_names_any_shipped_network_and_its_model_remembers_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents import make_agent
    from train.run_checkpoint import CheckpointError

    env = example.make_vec_env("random", seed=0, rings_to_win=3, envs=2)
    model = example.build_model(env, n_steps=32, batch_size=32, n_epochs=1, warm_start="anchor-v1")
    first = make_agent("pretrained:sims=0,weights=anchor-v1,backend=torch")
    rng = np.random.default_rng(1)
    state = State()
    for _ in range(20):  # the first network's choices, not today's pretrained's
        if state.is_terminal:
            state = State()
        assert int(np.argmax(policy_probabilities(model.policy, state))) == first.act(state)
        state.apply(int(rng.choice(state.legal_actions())))
    path = tmp_path / "first.zip"
    model.save(path)
    kwargs = model.policy.features_extractor_kwargs
    assert kwargs == {"weights": "anchor-v1"}  # a name, not this machine's path
    assert make_agent(f"sb3:path={path}").act(State()) in State().legal_actions()
    with pytest.raises(CheckpointError, match="anchor-v9"):
        example.build_model(env, warm_start="anchor-v9")
    with pytest.raises(SystemExit):
        example.main(["--warm-start", "anchor-v9", "--timesteps", "1"])
    assert "no network 'anchor-v9'" in capsys.readouterr().err
