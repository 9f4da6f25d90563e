"""The single-file PPO runs, saves a policy the arena plays, and never picks an illegal action."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.tensorboard")

from agents.learned.ppo_policy import (  # noqa: E402
    PolicyOpponent,
    PPOPolicy,
    load_policy,
    masked_logits,
    save_policy,
)
from train.libraries import ppo, ppo_games, ppo_report  # noqa: E402
from yinsh_env.vector.batch_agents import random_legal  # noqa: E402
from yinsh_env.vector.env import YinshVectorEnv  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TINY = ["--num-envs", "8", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "1"]
TINY += ["--channels", "8", "--blocks", "1", "--threads", "1", "--report-every", "0.001"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A policy from a few hundred steps against random and its own snapshots."""
    folder = tmp_path_factory.mktemp("ppo")
    save = folder / "runs" / "ppo" / "policy.pt"  # folders still to make, as on a fresh checkout
    argv = [*TINY, "--total-steps", "384", "--opponents", "random", "--opponent-weights", "1"]
    argv += ["--self-share", "0.5", "--pool-size", "2", "--snapshot-every", "1"]
    argv += ["--dense-reward", "0.5", "--threat-reward", "0.05", "--check-against", "random"]
    argv += ["--check-every", "0.001", "--check-games", "2", "--final-check-games", "2"]
    argv += ["--save", str(save), "--logdir", str(folder / "tb"), "--rings-to-win", "1"]
    assert ppo.main(argv) == 0
    return save


def test_a_short_run_reports_logs_and_saves_a_loadable_policy(
    trained: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy, rings = load_policy(trained)
    assert rings == 1 and (policy.channels, policy.blocks) == (8, 1)
    assert list((trained.parents[2] / "tb").glob("events.out.tfevents.*"))


def test_progress_lines_name_steps_speed_return_and_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*TINY, "--total-steps", "256", "--opponents", "random", "--opponent-weights", "1"]
    argv += ["--self-share", "0", "--check-against", "random", "--check-every", "0.001"]
    argv += ["--check-games", "2", "--final-check-games", "0", "--rings-to-win", "1"]
    argv += ["--save", str(tmp_path / "p.pt")]
    assert ppo.main(argv) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if " update " in line]
    assert lines, out
    assert "return" in lines[-1] and "check random" in lines[-1]
    assert (tmp_path / "p-tb").is_dir()


def test_a_cpu_budget_ends_the_run_before_its_step_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A rollout costs far more than a millionth of a CPU-minute: one at most is played.
    argv = [*TINY, "--total-steps", "1000000", "--cpu-minutes", "0.000001"]
    argv += ["--opponents", "random", "--opponent-weights", "1", "--self-share", "0"]
    argv += ["--final-check-games", "0", "--check-games", "0", "--save", str(tmp_path / "p.pt")]
    assert ppo.main(argv) == 0
    done = capsys.readouterr().out.strip().splitlines()[-1]
    assert done.startswith("done: ") and int(done.split()[1].replace(",", "")) <= 8 * 16
    assert (tmp_path / "p.pt").exists()


def test_the_best_check_policy_is_kept_beside_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = iter([0.2, 0.9, 0.5, 0.9, 0.1, 0.3, 0.0, 0.0, 0.0, 0.0])
    seen: list[tuple[float, dict[str, torch.Tensor]]] = []

    def scripted_check(policy: PPOPolicy, *args: object) -> float:
        score = next(scores)
        seen.append((score, {k: v.clone() for k, v in policy.state_dict().items()}))
        return score

    monkeypatch.setattr(ppo_report, "check", scripted_check)
    argv = [*TINY, "--total-steps", "640", "--opponents", "random", "--opponent-weights", "1"]
    argv += ["--self-share", "0", "--check-every", "0.001", "--check-games", "2"]
    argv += ["--final-check-games", "2", "--save", str(tmp_path / "p.pt")]
    assert ppo.main(argv) == 0
    assert len(seen) >= 4  # the 0.9 repeated later must not replace the first
    best, _ = load_policy(tmp_path / "p-best.pt")
    first_best = next(state for score, state in seen if score == 0.9)
    for name, value in best.state_dict().items():
        assert torch.equal(value, first_best[name]), name
    last, _ = load_policy(tmp_path / "p.pt")
    assert any(not torch.equal(v, first_best[k]) for k, v in last.state_dict().items())
    assert "best check 0.90" in capsys.readouterr().out


def test_the_saved_policy_plays_legal_games_in_the_arena(trained: Path, tmp_path: Path) -> None:
    from agents.evaluation.arena import MatchSettings, run_arena
    from yinsh_env import load_record

    specs = [f"ppo:path={trained}", f"ppo:path={trained},greedy=false", "random"]
    result = run_arena(
        specs, 2, MatchSettings(workers=1, rings_to_win=1), progress=False, records_dir=tmp_path
    )
    assert [p.games for p in result.pairings] == [2, 2, 2]
    assert all(p.a_forfeits == p.b_forfeits == 0 for p in result.pairings)
    for path in sorted(tmp_path.glob("*.yinsh")):
        assert load_record(path).replay().is_terminal  # every move legal, to the end


def test_the_agent_knows_its_variant(trained: Path) -> None:
    from agents import make_agent
    from agents.evaluation.arena import MatchSettings, run_arena

    assert make_agent(f"ppo:path={trained}").rings_to_win == 1
    with pytest.raises(ValueError, match="rings"):
        run_arena([f"ppo:path={trained}", "random"], 1, MatchSettings(workers=1), progress=False)


@pytest.mark.slow
def test_masked_policy_never_picks_an_illegal_action() -> None:
    """Logits pushed hardest towards illegal actions still give only legal ones."""
    torch.manual_seed(0)
    policy = PPOPolicy(channels=8, blocks=1)
    with torch.no_grad():
        bias = policy.policy_planes.bias
        assert bias is not None
        bias.uniform_(20.0, 60.0)  # large logits everywhere
        policy.pass_logit.bias.fill_(100.0)  # pass is almost never legal: the biggest logit
    env = YinshVectorEnv(num_envs=16, rings_to_win=1)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    opponent = PolicyOpponent(policy)
    for _ in range(120):
        planes, masks = obs["observation"], obs["action_mask"]
        logits, _ = policy(torch.as_tensor(planes))
        dist = torch.distributions.Categorical(logits=masked_logits(logits, torch.as_tensor(masks)))
        for actions in (
            dist.sample().numpy(),
            policy.choose(planes, masks, rng),
            policy.choose(planes, masks, None),
            opponent.act_batch(planes, masks, rng),
        ):
            assert masks[np.arange(len(masks)), actions].all()
        obs, *_ = env.step(policy.choose(planes, masks, rng))
    assert torch.isfinite(dist.entropy()).all()


def test_snapshot_opponents_play_inside_the_vector_env() -> None:
    argv = ["--opponents", "random", "--opponent-weights", "1", "--self-share", "1"]
    args = ppo.parse_args([*argv, "--pool-size", "1", "--channels", "8", "--blocks", "1"])
    policy = PPOPolicy(8, 1)
    pool, slots = ppo.opponent_pool(args, policy)
    assert pool.names == ["random", "self0"] and pool.strategy == "weighted"
    assert pool.weights().tolist() == [0.5, 0.5] and slots.taken == 1
    snapshot = slots.slots[0].inner.policy
    assert all(torch.equal(v, policy.state_dict()[k]) for k, v in snapshot.state_dict().items())
    env = YinshVectorEnv(num_envs=8, opponent=pool, rings_to_win=1)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = []
    for _ in range(200):
        obs, _, _, _, infos = env.step(random_legal(obs["action_mask"], rng))
        ended += ppo_games.learner_scores(infos)
    assert {name for _, name, _ in ended} == {"random", "self0"}
    assert {score for *_, score in ended} <= {0.0, 0.5, 1.0}


def test_load_policy_refuses_foreign_damaged_and_diverged_files(tmp_path: Path) -> None:
    from agents import AgentSpecError, make_agent

    with pytest.raises(ValueError, match="not found"):
        load_policy(tmp_path / "nowhere.pt")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(ValueError, match=r"not a policy saved by train\.libraries\.ppo"):
        load_policy(foreign)
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(AgentSpecError, match=r"damaged\.pt"):
        make_agent(f"ppo:path={damaged}")
    policy = PPOPolicy(8, 1)
    with torch.no_grad():
        next(policy.parameters()).view(-1)[0] = float("nan")
    diverged = tmp_path / "diverged.pt"
    save_policy(diverged, policy, 3)
    with pytest.raises(ValueError, match=r"diverged\.pt.*NaN"):
        load_policy(diverged)


def test_adaptive_picks_the_variance_mix_and_the_snapshots_share_the_self_share() -> None:
    """The mixes themselves: tests/env/test_opponent_mixes.py."""
    argv = ["--opponents", "random", "greedy", "--opponent-weights", "1", "1", "--channels", "8"]
    argv += ["--blocks", "1", "--self-share", "0.5", "--pool-size", "2", "--adaptive", "true"]
    pool, slots = ppo.opponent_pool(ppo.parse_args(argv), PPOPolicy(8, 1))
    assert pool.strategy == "variance" and pool.names == ["random", "greedy", "self0", "self1"]
    assert pool.weights().tolist() == pytest.approx([1 / 2.5, 1 / 2.5, 0.25 / 2.5, 0.25 / 2.5])
    assert len(slots) == 2 and slots.taken == 2  # both hold the learner from the start
    no_self, none = ppo.opponent_pool(ppo.parse_args([*argv, "--self-share", "0"]), PPOPolicy(8, 1))
    assert no_self.names == ["random", "greedy"] and not none
    ppo.refresh(none, PPOPolicy(8, 1))  # no slots: nothing to refresh


def test_the_command_line_shows_every_default_and_refuses_a_repeated_opponent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as shown:
        ppo.parse_args(["--help"])
    assert shown.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for name in ("opponent-weights", "check-against", "final-check-games", "target-kl"):
        assert f"--{name}" in text
    assert "(default: 0.0003)" in text and "(default: ['greedy', 'random'])" in text
    assert text.count("(default:") == len(dataclasses.fields(ppo.Args)) + 1  # and --recipe
    with pytest.raises(SystemExit) as refused:
        ppo.parse_args(["--opponents", "random", "random", "--opponent-weights", "1", "1"])
    assert refused.value.code == 2 and "'random' twice" in capsys.readouterr().err


def test_opening_placements_are_random_and_the_inner_opponent_plays_the_rest() -> None:
    from yinsh_env import State
    from yinsh_env.envs.observation import encode

    start = encode(State())[None]
    placed = encode(State().apply_all(["E5", "F6", "G7", "H8"]))[None]
    assert ppo_games.in_opening(start, 4).tolist() == [True]
    assert ppo_games.in_opening(placed, 4).tolist() == [False]
    assert ppo_games.in_opening(start, 0).tolist() == [False]

    asked: list[int] = []

    class First:
        def act_batch(self, planes: np.ndarray, masks: np.ndarray, rng: object) -> np.ndarray:
            asked.append(len(masks))
            return np.argmax(masks, axis=1)

    opponent = ppo_games.OpeningOpponent(First(), 4)
    planes = np.concatenate([start, placed])
    masks = np.stack(
        [State().legal_mask(), State().apply_all(["E5", "F6", "G7", "H8"]).legal_mask()]
    )
    rng = np.random.default_rng(0)
    firsts = {int(opponent.act_batch(planes, masks.astype(np.int8), rng)[0]) for _ in range(20)}
    assert asked == [1] * 20  # only the position past the opening reached the inner opponent
    assert len(firsts) > 1 and all(masks[0, a] for a in firsts)
    actions = np.zeros(2, dtype=np.int64)
    forced = ppo_games.opening_moves(planes, masks, actions, 4, rng)
    assert forced.tolist() == [True, False] and masks[0, actions[0]] and actions[1] == 0
