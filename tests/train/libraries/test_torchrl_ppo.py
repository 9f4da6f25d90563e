"""The TorchRL recipe runs, saves a policy the ``torchrl:`` agent plays, and refuses bad input.

Skipped where TorchRL is not installed (the ``torchrl`` extra).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torchrl", reason='optional extra: pip install -e ".[torchrl]"')
pytest.importorskip("torch.utils.tensorboard")

import torch

from agents.learned.ppo_policy import load_policy
from agents.learned.torchrl_agent import TORCHRL_FILES
from train.libraries import torchrl_ppo
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TINY = ["--num-envs", "8", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "1"]
TINY += ["--channels", "8", "--blocks", "1", "--threads", "1", "--report-every", "0.001"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A policy from a few hundred steps against random and its own snapshots, and the output."""
    folder = tmp_path_factory.mktemp("torchrl")
    save = folder / "policy.pt"
    # the single-file PPO's recipe options, shaping and snapshots included (one command line)
    options = {"total-steps": 384, "opponents": "random", "opponent-weights": 1}
    options |= {"self-share": 0.5, "pool-size": 2, "snapshot-every": 1, "dense-reward": 0.5}
    options |= {"threat-reward": 0.05, "check-against": "random", "check-every": 0.001}
    options |= {"check-games": 2, "final-check-games": 2, "rings-to-win": 1}
    options |= {"save": save, "logdir": folder / "tb"}
    argv = [*TINY, *(text for k, v in options.items() for text in (f"--{k}", str(v)))]
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert torchrl_ppo.main(argv) == 0
    return save, stream.getvalue()


@pytest.mark.slow
def test_a_short_run_reports_logs_and_saves_a_torchrl_policy(trained: tuple[Path, str]) -> None:
    save, out = trained
    policy, rings = load_policy(save, TORCHRL_FILES)
    assert rings == 1 and (policy.channels, policy.blocks) == (8, 1)
    assert list((save.parent / "tb").glob("events.out.tfevents.*"))
    lines = [line for line in out.splitlines() if " update " in line]
    assert lines and "check random" in lines[-1] and "score random" in lines[-1], out
    assert out.splitlines()[-1].startswith("done: 384 steps")
    assert f"torchrl:path={save}" in out
    with pytest.raises(ValueError, match=r"not a policy saved by train\.libraries\.ppo"):
        load_policy(save)  # a ppo: agent refuses it: whose file it is stays known


@pytest.mark.slow
def test_the_saved_policy_plays_legal_games_in_the_arena(
    trained: tuple[Path, str], tmp_path: Path
) -> None:
    from agents import make_agent
    from agents.evaluation.arena import MatchSettings, run_arena
    from yinsh_env import load_record

    save, _ = trained
    agent = make_agent(f"torchrl:path={save}", seed=0)
    assert agent.rings_to_win == 1
    state = State(rings_to_win=1)
    assert state.legal_mask()[agent.act(state)]
    greedy_and_sampled = [f"torchrl:path={save}", f"torchrl:path={save},greedy=false"]
    settings = MatchSettings(workers=1, rings_to_win=1)
    result = run_arena(
        [*greedy_and_sampled, "random"], 2, settings, progress=False, records_dir=tmp_path
    )
    played = [(p.games, p.a_forfeits + p.b_forfeits) for p in result.pairings]
    assert played == [(2, 0)] * 3  # three pairings, two games each, no forfeit
    records = sorted(tmp_path.glob("*.yinsh"))
    assert len(records) == 6 and all(load_record(r).replay().is_terminal for r in records)


def test_bad_arguments_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = [
        (["--num-envs", "0"], "--num-envs"),
        (["--opponents", "nosuchagent"], "nosuchagent"),
        (["--opponents", "random", "--opponent-weights", "1", "2"], "weights"),
        (["--save", str(tmp_path / "policy.zip")], "--save"),
        (["--logdir", "/dev/null"], "--logdir"),
    ]
    for argv, named in bad:
        with pytest.raises(SystemExit) as refused:
            torchrl_ppo.parse_args(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert refused.value.code == 2 and named in err[-1], (argv, err)
        assert not err[-1].startswith("Traceback")
    assert torchrl_ppo.parse_args([]).save == Path("runs/torchrl/policy.pt")


def test_opening_moves_are_random_placements_marked_forced() -> None:
    start = State()
    planes = torch.as_tensor(np.stack([encode(start)] * 3), dtype=torch.float32)
    masks = torch.as_tensor(np.stack([start.legal_mask()] * 3)).bool()
    chosen = torch.full((3,), 7)  # not a placement's index alone: replaced where forced
    opening = torchrl_ppo.OpeningMoves(plies=4, seed=0)
    action, forced = opening(planes, masks, chosen)
    assert forced.tolist() == [True] * 3
    assert masks.gather(1, action[:, None]).all()
    never = torchrl_ppo.OpeningMoves(plies=0, seed=0)
    kept, none = never(planes, masks, chosen)
    assert torch.equal(kept, chosen) and not none.any()


def test_the_shaping_weights_go_to_the_vector_environment() -> None:
    """Rings removed and rows threatened are the environment's own options (tested there)."""
    from train.libraries import ppo

    args = torchrl_ppo.parse_args(
        ["--num-envs", "2", "--dense-reward", "0.3", "--threat-reward", "0.5"]
    )
    net = torchrl_ppo.PPOPolicy(args.channels, args.blocks)
    pool, _ = ppo.opponent_pool(args, net)
    vector = torchrl_ppo.make_env(args, pool).base_env._env  # type: ignore[attr-defined]
    assert (vector.dense_reward, vector.threat_reward) == (0.3, 0.5)


def collected(extra: list[str]) -> tuple[Any, Any, Any, Any, Any]:
    """``(args, net, actor, critic, batch)``: one batch the recipe's collector gathered."""
    from torchrl.collectors import Collector

    from train.libraries import ppo

    args = torchrl_ppo.parse_args(
        [*TINY, "--opponents", "random", "--opponent-weights", "1", "--seed", "3", *extra]
    )
    torch.manual_seed(3)
    net = torchrl_ppo.PPOPolicy(args.channels, args.blocks)
    pool, _ = ppo.opponent_pool(args, net)
    actor, critic = torchrl_ppo.make_actor_critic(net)
    collector = Collector(
        torchrl_ppo.make_env(args, pool),
        torchrl_ppo.collecting_policy(actor, args),
        frames_per_batch=args.num_envs * args.num_steps,
        auto_register_policy_transforms=False,
    )
    data = next(iter(collector))
    collector.shutdown()
    return args, net, actor, critic, data


def test_gae_in_one_shifted_pass_is_gae_over_every_next_observation() -> None:
    from torchrl.objectives.value import GAE

    args, _, _, critic, data = collected(["--rings-to-win", "1", "--num-steps", "32"])
    assert data["next", "done"].any()  # games ended inside the batch: the hard case
    loss = torchrl_ppo.make_loss(*torchrl_ppo.make_actor_critic(torchrl_ppo.PPOPolicy(8, 1)), args)
    assert loss.value_estimator.shifted
    found = {}
    for shifted in (True, False):
        gae = GAE(gamma=args.gamma, lmbda=args.gae_lambda, value_network=critic, shifted=shifted)
        with torch.no_grad():
            found[shifted] = gae(data.clone())
    for key in ("advantage", "value_target"):
        assert torch.allclose(found[True][key], found[False][key], atol=1e-6), key


def test_the_shared_pass_gives_the_losses_and_gradients_of_two_passes() -> None:
    args, net, actor, critic, data = collected([])
    shared_loss = torchrl_ppo.make_loss(actor, critic, args)
    with torch.no_grad():
        shared_loss.value_estimator(data)
    batch = data.reshape(-1)[:64]

    # The reference: the same network, the critic's head with a pass of its own.
    reference = torchrl_ppo.PPOPolicy(args.channels, args.blocks)
    reference.load_state_dict(net.state_dict())
    fresh_actor, fresh_critic = torchrl_ppo.make_actor_critic(reference)
    head = next(m for m in fresh_critic.modules() if isinstance(m, torchrl_ppo.Head))
    head.shared = torchrl_ppo.SharedPass(reference)
    fresh_loss = torchrl_ppo.make_loss(fresh_actor, fresh_critic, args)

    shared = next(m for m in actor.modules() if isinstance(m, torchrl_ppo.SharedPass))
    before = shared.passes
    terms = {}
    for name, loss, model in (("shared", shared_loss, net), ("fresh", fresh_loss, reference)):
        model.zero_grad()
        out = loss(batch.clone())
        (out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]).backward()
        terms[name] = (out, {n: p.grad.clone() for n, p in model.named_parameters()})
    assert shared.passes == before + 1  # the critic reused the actor's pass
    (a, grads_a), (b, grads_b) = terms["shared"], terms["fresh"]
    for key in ("loss_objective", "loss_critic", "loss_entropy", "kl_approx"):
        assert torch.allclose(a[key], b[key], rtol=1e-5, atol=1e-7), key
    assert float(a["loss_critic"].detach()) > 0
    for name, grad in grads_a.items():
        assert torch.allclose(grad, grads_b[name], rtol=1e-4, atol=1e-7), name
    # A changed weight is a new pass, not the cached one.
    with torch.no_grad():
        next(net.parameters()).add_(0.01)
    shared(batch["observation"])
    shared(batch["observation"])
    assert shared.passes == before + 2


def test_save_may_name_a_folder_not_made_yet(tmp_path: Path) -> None:
    """``--save runs/x/policy.pt`` on a fresh checkout: the folder is made when it is written."""
    save = tmp_path / "runs" / "torchrl-s1" / "policy.pt"
    assert torchrl_ppo.parse_args(["--save", str(save)]).save == save
    assert not save.parent.exists()  # nothing made while the command line is read
    with pytest.raises(SystemExit):
        torchrl_ppo.parse_args(["--save", str(tmp_path / "policy.zip")])
