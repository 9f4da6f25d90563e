"""RLlib's PPO on the PettingZoo environment: masked logits, self-play and a baseline opponent.

A smoke test of :mod:`train.libraries.rllib_example` on a local Ray (two CPUs, no
dashboard): a few tiny iterations, every move checked legal.  Skipped where
RLlib is not installed (``pip install -e ".[rllib]"``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("ray.rllib", reason='optional extra: pip install -e ".[rllib]"')

from ray.rllib.core.columns import Columns

from agents import AgentSpecError, make_agent
from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.match import VariantMismatchError
from agents.learned.rllib_models import mask_logits
from train.libraries import rllib_example as example
from yinsh_env import load_record
from yinsh_env.engine.actions import N_ACTIONS

pytestmark = [
    pytest.mark.ray,
    # Every algorithm built re-registers RLlib's own environment wrapper with gymnasium.
    pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env"),
    pytest.mark.usefixtures("torch_one_thread"),
]

TINY = ["--batch-size", "96", "--minibatch-size", "48", "--epochs", "1"]
TINY += ["--channels", "4", "--hidden", "16", "--rings-to-win", "1", "--no-tensorboard"]
# The same tiny Blitz run as build_config's keywords.
TINY_CONFIG: dict[str, Any] = dict(
    rings_to_win=1, batch_size=96, minibatch_size=48, epochs=1, channels=4, hidden=16
)


def test_masked_logits_only_ever_choose_legal_actions() -> None:
    torch.manual_seed(0)
    logits = torch.randn(3, N_ACTIONS) + 10.0  # illegal actions look best
    legal = [3, 700, 2141]
    logits[0, legal] = 0.0
    mask = torch.zeros(3, N_ACTIONS, dtype=torch.int8)
    mask[0, legal] = 1
    mask[1, 5] = 1  # row 2: no legal action (a final observation)
    masked = mask_logits(logits, mask)
    samples = torch.distributions.Categorical(logits=masked[:2]).sample((300,))
    assert set(samples[:, 0].tolist()) == set(legal)  # all three, nothing else
    assert set(samples[:, 1].tolist()) == {5}
    assert torch.equal(masked[0, legal], logits[0, legal])
    assert torch.equal(masked[2], logits[2])  # left alone: it chooses nothing
    assert torch.isfinite(torch.log_softmax(masked, dim=-1)).all()


def test_the_adapter_passes_dict_observations_of_the_acting_agent() -> None:
    env: Any = example.make_env({"rings_to_win": 1})
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["player_0"]
    space = env.observation_space["player_0"]
    assert set(space.spaces) == {"observation", "action_mask"}
    first = obs["player_0"]
    assert first["observation"].shape == (11, 11, 17) and first["action_mask"].sum() == 85
    module = example.MaskedPolicyModule(
        observation_space=space,
        action_space=env.action_space["player_0"],
        model_config={"channels": 4, "hidden": 8},
    )
    steps, done = 0, False
    while not done:
        (agent, observation), *_ = obs.items()
        action = module.greedy_action(observation)
        assert observation["action_mask"][action] == 1
        obs, rewards, terminated, _, _ = env.step({agent: action})
        steps += 1
        done = terminated["__all__"]
    # The end: both agents' last observations (no legal action) and rewards.
    assert set(rewards) == {"player_0", "player_1"} and sorted(rewards.values()) in (
        [-1, 1],
        [0, 0],
    )
    assert all(o["action_mask"].sum() == 0 for o in obs.values()) and steps > 10
    batch = {
        Columns.OBS: {k: torch.as_tensor(np.stack([o[k] for o in obs.values()])) for k in first}
    }
    assert module.compute_values(batch).shape == (2,)


@pytest.mark.slow
def test_self_play_trains_the_shared_policy(
    ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    config = example.build_config(**TINY_CONFIG)
    algo = config.build_algo()
    try:
        module = algo.get_module(example.LEARNER)
        before = [p.detach().clone() for p in module.parameters()]
        result = algo.train()
        result = algo.train()
        module = algo.get_module(example.LEARNER)
        after = list(module.parameters())
        assert any(not torch.equal(a, b) for a, b in zip(after, before)), "no update reached"
        assert result["num_env_steps_sampled_lifetime"] >= 2 * 96
        assert np.isfinite(result["learners"][example.LEARNER]["total_loss"])
        evaluation = example.evaluate(module, "random", games=2, rings_to_win=1)
    finally:
        algo.stop()
    assert evaluation.games == 2 and evaluation.moves > 2 * 5
    assert evaluation.wins + evaluation.draws + evaluation.losses == 2


@pytest.mark.slow
def test_cpu_minutes_stop_the_run_after_the_iteration_that_spends_them(
    ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # An iteration costs far more than a millionth of a CPU-minute: one is played.
    args = ["--iterations", "50", "--opponent", "random", "--eval-games", "0"]
    example.main([*args, "--cpu-minutes", "0.000001", *TINY])
    out = capsys.readouterr().out
    progress = [line for line in out.splitlines() if line.startswith("iteration ")]
    assert len(progress) == 1 and " CPU-s, " in progress[0], out


@pytest.mark.slow
def test_each_line_counts_the_learners_own_steps_and_the_annealed_rate(
    ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Against a fixed opponent about half the environment's steps are the learner's;
    with no time budget the rate anneals over ``--iterations``."""
    args = ["--iterations", "2", "--opponent", "random", "--eval-games", "0", "--lr", "4e-4"]
    example.main([*args, "--anneal-lr", "true", *TINY])
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("iteration ")]
    assert len(lines) == 2
    found = [re.search(r": (\d+) env steps \((\d+) the learner's\)", line) for line in lines]
    counts = [(int(m[1]), int(m[2])) for m in found if m]
    assert len(counts) == 2 and all(0.3 * env < own < 0.7 * env for env, own in counts), lines
    assert "next lr 2.00e-04" in lines[0] and "next lr 0.00e+00" in lines[1]


@pytest.mark.slow
def test_example_script_against_a_baseline_saves_a_policy_the_arena_plays(
    ray_cluster: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    saved = tmp_path / "policy"
    args = ["--iterations", "2", "--opponent", "greedy", "--eval-games", "2"]
    args += [arg for arg in TINY if arg != "--no-tensorboard"]
    board = tmp_path / "tb"
    evaluation = example.main([*args, "--save", str(saved), "--tensorboard", str(board)])
    out = capsys.readouterr().out
    assert "iteration 2:" in out and "learner's mean return" in out and "legal moves" in out
    assert f"saved {saved}" in out
    progress = [line for line in out.splitlines() if line.startswith("iteration ")]
    assert len(progress) == 2 and all(line.endswith(" steps/s") for line in progress), out
    # Normal output: the example's own lines only, no Ray/RLlib notices or deprecations.
    own = ("iteration ", "vs ", "saved ", "TensorBoard: ")
    assert all(line.startswith(own) for line in out.splitlines()), out
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (run,) = board.iterdir()
    events = EventAccumulator(str(run))
    events.Reload()
    written = events.Tags()["scalars"]
    assert {"progress/steps_per_second", "progress/episode_return"} <= set(written)
    assert evaluation.games == 2 and evaluation.moves > 0
    with pytest.raises(SystemExit) as refused:  # by argparse, before Ray starts anything
        example.main(["--opponent", "no-such-agent", *TINY])
    assert refused.value.code == 2 and "unknown agent 'no-such-agent'" in capsys.readouterr().err

    # The saved module plays through its spec, greedy and sampling, in the arena.
    trained = example.MaskedPolicyModule  # the class the checkpoint must hold
    monkeypatch.chdir(tmp_path)
    agent = make_agent("rllib:path=policy", seed=1)  # a relative path works too
    assert isinstance(agent.module, trained)  # type: ignore[attr-defined]
    assert agent.rings_to_win == 1  # recorded beside the module: Blitz only
    with pytest.raises(VariantMismatchError):
        run_arena(
            [f"rllib:path={saved}", "random"], 1, MatchSettings(rings_to_win=3), progress=False
        )
    specs = [f"rllib:path={saved}", f"rllib:path={saved},greedy=false", "random"]
    result = run_arena(
        specs,
        2,
        MatchSettings(workers=1, rings_to_win=1),
        progress=False,
        records_dir=tmp_path / "games",
    )
    assert [p.games for p in result.pairings] == [2, 2, 2]
    assert all(p.a_forfeits == p.b_forfeits == 0 for p in result.pairings)
    for path in (tmp_path / "games").glob("*.yinsh"):
        assert load_record(path).replay().is_terminal


def test_rllib_spec_names_a_missing_or_corrupt_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(AgentSpecError, match="nowhere' not found"):
        make_agent(f"rllib:path={tmp_path / 'nowhere'}")
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "class_and_ctor_args.pkl").write_bytes(b"not a pickle")
    with pytest.raises(AgentSpecError, match=r"cannot load RLlib checkpoint .*corrupt"):
        make_agent(f"rllib:path={corrupt}")
    assert (corrupt / "class_and_ctor_args.pkl").read_bytes() == b"not a pickle"


def test_rllib_module_with_nan_weights_is_refused_naming_the_tensor(tmp_path: Path) -> None:
    env: Any = example.make_env({"rings_to_win": 1})
    module = example.MaskedPolicyModule(
        observation_space=env.observation_space["player_0"],
        action_space=env.action_space["player_0"],
        model_config={"channels": 4, "hidden": 8},
    )
    module.save_to_path(str(tmp_path / "fine"))
    assert make_agent(f"rllib:path={tmp_path / 'fine'}").name  # no Ray started for this
    with torch.no_grad():
        module.value_head.bias.fill_(float("nan"))
    module.save_to_path(str(tmp_path / "diverged"))
    with pytest.raises(AgentSpecError, match=r"diverged.*'value_head\.bias'.*NaN or infinite"):
        make_agent(f"rllib:path={tmp_path / 'diverged'}")


def test_the_modules_actions_step_both_environments_as_they_come() -> None:
    """What RLlib's env runner hands the env: the module's logits, sampled, unbatched."""
    from ray.rllib.utils.numpy import convert_to_numpy
    from ray.rllib.utils.spaces.space_utils import unbatch

    from yinsh_env import env as make_aec_env
    from yinsh_env.envs.gym_env import YinshGymEnv

    torch.manual_seed(0)
    aec = make_aec_env(rings_to_win=1)
    aec.reset(seed=0)
    module = example.MaskedPolicyModule(
        observation_space=aec.observation_space("player_0"),
        action_space=aec.action_space("player_0"),
        model_config={"channels": 4, "hidden": 8},
    )

    def module_actions(observation: dict[str, np.ndarray], explore: bool) -> list[Any]:
        batch = {Columns.OBS: {k: torch.as_tensor(v[None]) for k, v in observation.items()}}
        with torch.no_grad():
            if explore:
                out = module.forward_exploration(batch)
                dist_class = module.get_exploration_action_dist_cls()
            else:
                out = module.forward_inference(batch)
                dist_class = module.get_inference_action_dist_cls()
        dist = dist_class.from_logits(out[Columns.ACTION_DIST_INPUTS])
        actions = (dist if explore else dist.to_deterministic()).sample()  # GetActions
        (item,) = unbatch(convert_to_numpy(actions))  # TensorToNumpy, then unbatching
        return [item, actions, actions[0]]  # numpy item, one-element and 0-d tensors

    turn = 0
    for _ in aec.agent_iter(max_iter=2000):
        obs, _, termination, truncation, _ = aec.last()
        if termination or truncation:
            aec.step(None)
            continue
        forms = module_actions(obs, explore=turn % 2 == 1)
        assert len({int(f) for f in forms}) == 1
        aec.step(forms[turn % 3])
        turn += 1
    game = aec.unwrapped.game
    assert game.is_terminal and turn > 10  # ended by the rules, not by an illegal move

    gym_env = YinshGymEnv(rings_to_win=1, illegal_reward=None)  # illegal moves raise
    obs, _ = gym_env.reset(seed=1)
    for turn in range(12):
        obs, _, terminated, _, _ = gym_env.step(module_actions(obs, explore=True)[turn % 3])
        if terminated:
            obs, _ = gym_env.reset()


def test_league_mapping_pairs_the_learner_with_its_snapshots_per_episode() -> None:
    from types import SimpleNamespace

    from train.libraries.rllib_league import SnapshotLeague, league_mapping

    episodes = [SimpleNamespace(id_=f"episode-{i}") for i in range(400)]
    alone = league_mapping("learner", [], self_share=0.0)
    assert {alone(a, e) for e in episodes for a in ("player_0", "player_1")} == {"learner"}
    mapping = league_mapping("learner", ["snapshot_0", "snapshot_1"], self_share=0.25)
    pairs = [(mapping("player_0", e), mapping("player_1", e)) for e in episodes]
    assert pairs == [(mapping("player_0", e), mapping("player_1", e)) for e in episodes]
    selfplay = sum(p == ("learner", "learner") for p in pairs)
    assert 60 < selfplay < 140  # about a quarter
    others = [p for p in pairs if p != ("learner", "learner")]
    assert all(p.count("learner") == 1 for p in others)
    opponents = [name for p in others for name in p if name != "learner"]
    assert opponents.count("snapshot_1") > opponents.count("snapshot_0") > 0  # newest most
    assert {p.index("learner") for p in others} == {0, 1}  # both sides
    with pytest.raises(ValueError, match="self_share"):
        league_mapping("learner", [], self_share=1.5)

    league = SnapshotLeague("learner", slots=2, every=3)
    assert league.filled == [] and league.after_iteration(object(), 2) is None
    league.slots.taken = 3  # slots written: 0, 1, then 0 again: slot 1 is now the oldest
    assert league.filled == ["snapshot_1", "snapshot_0"]


def test_league_mapping_adds_fixed_opponents_in_their_share() -> None:
    from types import SimpleNamespace

    from train.libraries.rllib_league import SnapshotLeague, fixed_ids, league_mapping

    episodes = [SimpleNamespace(id_=f"episode-{i}") for i in range(400)]
    fixed = fixed_ids(2)
    mapping = league_mapping("learner", [], 1.0, fixed=fixed, fixed_share=0.5)
    pairs = [(mapping("player_0", e), mapping("player_1", e)) for e in episodes]
    against_fixed = [p for p in pairs if p != ("learner", "learner")]
    assert 150 < len(against_fixed) < 250  # about half; the rest self-play
    assert all(p.count("learner") == 1 for p in against_fixed)
    opponents = [name for p in against_fixed for name in p if name != "learner"]
    assert set(opponents) == set(fixed) and min(map(opponents.count, fixed)) > 50
    assert {p.index("learner") for p in against_fixed} == {0, 1}
    with pytest.raises(ValueError, match="fixed_share"):
        league_mapping("learner", [], 1.0, fixed=fixed, fixed_share=-0.1)

    # With snapshots too: fixed, then self-play or a snapshot among the rest.
    league = SnapshotLeague("learner", 2, 1, self_share=0.0, fixed=fixed, fixed_share=0.25)
    league.slots.taken = 1
    seen = {n for e in episodes for n in (league.mapping()("player_0", e),)}
    assert seen == {"learner", "snapshot_0", *fixed}
    no_slots = SnapshotLeague("learner", 0, 1, fixed=fixed, fixed_share=0.5)
    assert no_slots.after_iteration(object(), 5) is None and no_slots.filled == []


def test_fixed_league_opponents_play_the_learner_and_never_train(
    ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    config = example.build_config(
        **TINY_CONFIG,
        envs=1,  # whole episodes within the first iterations
        league_opponents=["random"],
        league_share=1.0,
    )
    algo = config.build_algo()
    try:
        assert isinstance(algo.get_module("fixed_0"), example.BaselineModule)
        for _ in range(5):  # bounded: a Blitz game takes well under 96 steps
            result = algo.train()
            if "module_episode_returns_mean" in result["env_runners"]:
                break
        returns = result["env_runners"]["module_episode_returns_mean"]
        assert set(returns) == {example.LEARNER, "fixed_0"}  # every episode against it
        assert "total_loss" in result["learners"][example.LEARNER]
        assert "total_loss" not in result["learners"].get("fixed_0", {})  # never trained
    finally:
        algo.stop()
    with pytest.raises(ValueError, match="self-play"):
        example.build_config(opponent="random", league_opponents=["greedy"])
    with pytest.raises(SystemExit) as refused:  # by argparse, before Ray starts anything
        example.main(["--opponent", "greedy", "--league-opponents", "random", *TINY])
    assert refused.value.code == 2 and "--league-opponents" in capsys.readouterr().err


@pytest.mark.slow
def test_snapshots_are_frozen_copies_of_the_learner(ray_cluster: Any) -> None:
    from types import SimpleNamespace

    from train.libraries.rllib_league import SnapshotLeague

    config = example.build_config(
        **TINY_CONFIG,
        snapshots=2,
    )
    algo = config.build_algo()
    try:
        league = SnapshotLeague(example.LEARNER, slots=2, every=1, self_share=0.0)
        algo.train()
        assert league.after_iteration(algo, 1) == "snapshot_0"
        learner = algo.get_module(example.LEARNER)
        taken = {k: v.detach().clone() for k, v in learner.state_dict().items()}
        runner_copy = algo.env_runner.module["snapshot_0"]  # where episodes are played
        assert all(torch.equal(runner_copy.state_dict()[k], v) for k, v in taken.items())
        mapping = algo.env_runner.config.policy_mapping_fn  # the runner's, from now on
        episode = SimpleNamespace(id_="any")
        seats = {mapping(agent, episode) for agent in ("player_0", "player_1")}
        assert seats == {example.LEARNER, "snapshot_0"}  # self_share=0: always the league
        algo.train()
        moved = algo.get_module(example.LEARNER).state_dict()
        assert not all(torch.equal(moved[k], v) for k, v in taken.items()), "no update"
        frozen = algo.get_module("snapshot_0").state_dict()
        assert all(torch.equal(frozen[k], v) for k, v in taken.items())
        runner_copy = algo.env_runner.module["snapshot_0"]
        assert all(torch.equal(runner_copy.state_dict()[k], v) for k, v in taken.items())
    finally:
        algo.stop()
    with pytest.raises(ValueError, match="self-play"):
        example.build_config(opponent="random", snapshots=1)
