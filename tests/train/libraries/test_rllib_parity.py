"""Parity of the single-file PPO and RLlib's PPO on one fixed batch.

As ``test_parity.py`` checks SB3: RLlib's sampler collects a batch on the PettingZoo
environment, and again on the vector environment (``--env vector``, Gymnasium's
``NEXT_STEP`` autoreset), Blitz games against ``random``, with dense rewards, so that
games end and rewards vary inside it, with the single-file PPO's own network
(``network="ppo"``);
RLlib's learner connector computes its GAE; then, agent-episode by agent-episode, the
single-file PPO's :func:`~train.libraries.ppo.advantages` on the same rewards and
values, and its :func:`~train.libraries.ppo.update` on the same decisions, weights and
advantages, one minibatch each.  Where the two agree (value targets, log-probabilities
of the masked distribution, the clipped objective, the entropy over legal actions, the
value loss, the gradient norm before clipping) the tests say so within float
tolerance; where they differ by design, the tests state how:

* RLlib standardises the advantages once over the module's batch, the artificial last
  step it adds to each episode included, with numpy's (biased) deviation; the
  single-file PPO standardises each minibatch over its decisions.
* RLlib's value loss is the plain squared error (clipped at ``vf_clip_param``, 10);
  the single-file PPO's is CleanRL's half of the larger of the unclipped and the
  clipped errors: ``vf_coef=0.25`` in RLlib is the PPO's 0.5 while the value has not
  moved further than the clip.

The learner's batch is built with RLlib's own pieces, two of them private
(``learner_group._learner``, ``Learner._make_batch_if_necessary``): an RLlib release
that moves them fails here, not silently.  docs/studies/library-parity.md lists the
differences and which matter.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest
import torch
from torch import nn

pytest.importorskip("ray.rllib", reason='optional extra: pip install -e ".[rllib]"')
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.training_data import TrainingData
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME

from agents.learned.ppo_policy import PPOPolicy
from train.libraries import ppo
from train.libraries import rllib_example as example
from train.libraries.rllib_vector import vector_config

pytestmark = [
    pytest.mark.ray,
    pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env"),
    pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-single-agent-env"),
    pytest.mark.usefixtures("torch_one_thread"),
]

GAMMA, LAMBDA, CLIP, ENTROPY = 0.99, 0.95, 0.2, 0.005


PPO_SETTINGS = {"clip": CLIP, "vf_coef": 0.25, "grad_clip": 0.5, "kl_coeff": 0.0}


def config_on(env: str) -> tuple[Any, str]:
    """RLlib's config on the ``env`` (``aec`` or ``vector``) and the learner's module id."""
    network: dict[str, Any] = {"network": "ppo", "channels": 4, "blocks": 1}
    if env == "aec":
        config = example.build_config(
            opponent="random",
            rings_to_win=1,
            seed=3,
            envs=4,
            batch_size=256,
            minibatch_size=256,
            epochs=1,
            lr=1e-3,
            gamma=GAMMA,
            entropy=ENTROPY,
            ppo=PPO_SETTINGS,
            shaping=(0.5, 0.0),
            **network,
        )
        return config, example.LEARNER
    argv = ["--env", "vector", "--opponent", "random", "--rings-to-win", "1", "--seed", "3"]
    argv += ["--envs", "4", "--dense-reward", "0.5", "--gamma", str(GAMMA)]
    args = example.parse_args(example.build_parser(), argv)
    training = example.training_settings(256, 256, 1, 1e-3, GAMMA, ENTROPY, PPO_SETTINGS)
    return vector_config(args, network, training), DEFAULT_MODULE_ID


@pytest.fixture(scope="module", params=["aec", "vector"])
def collected(ray_cluster: Any, request: pytest.FixtureRequest) -> Any:
    """The algorithm, its learner, the learner's module id and its batch of one sampling."""
    torch.manual_seed(3)
    config, module_id = config_on(request.param)
    algo = config.build_algo()
    episodes = algo.env_runner.sample(num_timesteps=256, random_actions=False)
    learner = algo.learner_group._learner
    # the learner's own batch (artificial steps dropped), then the one the checks below
    # read: RLlib's pipeline without the drop, the artificial steps holding GAE's bootstrap
    pruned = learner._make_batch_if_necessary(TrainingData(episodes=copy.deepcopy(episodes)))
    learner._learner_connector.remove("DropArtificialSteps")
    batch = learner._make_batch_if_necessary(TrainingData(episodes=episodes))
    yield SimpleNamespace(
        algo=algo, learner=learner, batch=batch, pruned=pruned, module_id=module_id
    )
    algo.stop()


def learner_rows(collected: Any) -> dict[str, Any]:
    """The learner module's columns, and its values at the collecting weights."""
    rows = dict(collected.batch.policy_batches[collected.module_id])
    module = collected.learner.module[collected.module_id]
    with torch.no_grad():
        rows["values"] = module.compute_values(rows)
    return rows


def segments(rows: dict[str, Any]) -> list[tuple[int, int]]:
    """``(first, artificial)`` row of each agent-episode: RLlib ends each with an
    artificial step (``loss_mask`` 0) that holds its last observation."""
    ends = np.flatnonzero(~rows[Columns.LOSS_MASK].numpy().astype(bool))
    starts = np.r_[0, ends[:-1] + 1]
    return list(zip(starts.tolist(), ends.tolist()))


def single_file_targets(rows: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """The single-file PPO's GAE over each agent-episode (one game, ``T`` steps each),
    bootstrapped from the artificial step's value unless the episode ended there."""

    class Values(nn.Module):
        def __init__(self, value: torch.Tensor) -> None:
            super().__init__()
            self.value = value

        def forward(self, obs: Any) -> tuple[None, torch.Tensor]:
            return None, self.value

    found_adv, found_targets = [], []
    for first, last in segments(rows):
        steps = last - first
        rollout = ppo.Rollout.empty(steps, 1)
        rollout.rewards[:, 0] = rows[Columns.REWARDS][first:last]
        rollout.values[:, 0] = rows["values"][first:last]
        ended = bool(rows[Columns.TERMINATEDS][first : last + 1].any())
        games = SimpleNamespace(next_obs=None, next_done=torch.tensor([float(ended)]))
        args = ppo.Args(num_envs=1, num_steps=steps, gamma=GAMMA, gae_lambda=LAMBDA)
        bootstrap = Values(rows["values"][last : last + 1])
        advantage, targets = ppo.advantages(cast(Any, bootstrap), cast(Any, games), rollout, args)
        found_adv.append(advantage[:, 0])
        found_targets.append(targets[:, 0])
    return torch.cat(found_adv), torch.cat(found_targets)


def test_the_batch_holds_games_that_ended_and_some_cut_by_the_sampler(collected: Any) -> None:
    rows = learner_rows(collected)
    parts = segments(rows)
    assert len(parts) >= 4 and rows[Columns.REWARDS].abs().sum() > 0
    assert rows[Columns.TERMINATEDS].any() and rows[Columns.TRUNCATEDS].any()
    valid = rows[Columns.LOSS_MASK].bool()
    masks = rows[Columns.OBS]["action_mask"][valid]
    assert bool(masks.gather(1, rows[Columns.ACTIONS][valid, None].long()).all())  # legal


def test_gae_reads_the_values_sampled_with_each_step(collected: Any) -> None:
    """The module keeps each step's value from its sampling pass (``vf_preds``); GAE
    reads those, computing afresh only at the artificial steps: all equal to a fresh
    pass over every row at the collecting weights."""
    rows = dict(collected.batch.policy_batches[collected.module_id])
    assert Columns.VF_PREDS in rows
    module = collected.learner.module[collected.module_id]
    with torch.no_grad():
        read = module.compute_values(rows)
        fresh = module.compute_values({Columns.OBS: rows[Columns.OBS]})
    valid = rows[Columns.LOSS_MASK].bool()
    assert not torch.equal(rows[Columns.VF_PREDS][~valid].float(), fresh[~valid])
    torch.testing.assert_close(read, fresh, atol=1e-5, rtol=1e-5)


def test_value_targets_are_the_single_file_ppos_gae(collected: Any) -> None:
    rows = learner_rows(collected)
    _, targets = single_file_targets(rows)
    valid = rows[Columns.LOSS_MASK].bool()
    np.testing.assert_allclose(rows[Postprocessing.VALUE_TARGETS][valid], targets, atol=1e-5)


def test_advantages_are_standardised_once_over_the_batch_artificial_steps_included(
    collected: Any,
) -> None:
    """RLlib's GAE connector standardises the raw advantages over every row, the
    artificial steps included, with the biased deviation; the recipes' learner then
    standardises each minibatch again, as the PPO does (the first-update test)."""
    rows = learner_rows(collected)
    raw = (rows[Postprocessing.VALUE_TARGETS] - rows["values"]).numpy()
    expected = (raw - raw.mean()) / max(1e-4, raw.std())
    np.testing.assert_allclose(rows[Postprocessing.ADVANTAGES], expected, atol=1e-5)
    advantage, _ = single_file_targets(rows)
    valid = rows[Columns.LOSS_MASK].bool()
    np.testing.assert_allclose(raw[valid.numpy()], advantage, atol=1e-5)  # raw: the same GAE
    per_minibatch = (advantage - advantage.mean()) / advantage.std()
    gap = float((per_minibatch - rows[Postprocessing.ADVANTAGES][valid]).abs().max())
    assert 0 < gap < 0.5  # close, not equal: the standardisations differ


def test_the_first_update_gives_the_same_losses_and_gradient_norm(
    collected: Any, clip_norms: list[float]
) -> None:
    rows = learner_rows(collected)
    valid = rows[Columns.LOSS_MASK].bool()
    count = int(valid.sum())
    module = collected.learner.module[collected.module_id]
    net = module.net
    assert isinstance(net, PPOPolicy)
    with torch.no_grad():  # move the policy from the collecting one: ratios leave 1 and clip
        generator = torch.Generator().manual_seed(7)
        head = net.policy_planes.weight
        head.add_(9.0 * torch.randn(head.shape, generator=generator))
    # the same raw GAE advantages on both sides, shifted and scaled away from standard:
    # each side standardises its minibatch (the recipes' learner over its valid rows)
    raw = rows[Postprocessing.VALUE_TARGETS][valid] - rows["values"][valid]
    shared = 3.0 * raw + 0.7
    advantages = torch.full_like(rows[Postprocessing.ADVANTAGES], -50.0)  # masked rows
    advantages[valid] = shared

    rollout = ppo.Rollout(
        obs=rows[Columns.OBS]["observation"][valid].float().unsqueeze(1),
        masks=rows[Columns.OBS]["action_mask"][valid].bool().unsqueeze(1),
        actions=rows[Columns.ACTIONS][valid].long().unsqueeze(1),
        logprobs=rows[Columns.ACTION_LOGP][valid].float().unsqueeze(1),
        rewards=rows[Columns.REWARDS][valid].float().unsqueeze(1),
        dones=torch.zeros(count, 1),
        values=rows["values"][valid].unsqueeze(1),
        forced=torch.zeros(count, 1),
    )
    args = ppo.Args(
        num_envs=1,
        num_steps=count,
        num_minibatches=1,
        update_epochs=1,
        clip_coef=CLIP,
        ent_coef=ENTROPY,
        vf_coef=0.5,  # with the PPO's 1/2: RLlib's 0.25
        max_grad_norm=0.5,
        learning_rate=1e-3,
    )
    mine = copy.deepcopy(net)
    ours = ppo.update(
        mine,
        torch.optim.SGD(mine.parameters(), lr=0.0),
        rollout,
        shared.unsqueeze(1),
        rows[Postprocessing.VALUE_TARGETS][valid].unsqueeze(1),
        args,
    )
    batch = collected.batch
    batch.policy_batches[collected.module_id][Postprocessing.ADVANTAGES] = advantages
    results = collected.learner.update(
        batch=batch,
        timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 0},
        num_epochs=1,
        minibatch_size=len(valid),
    )
    theirs = {key: float(value.peek()) for key, value in results[collected.module_id].items()}

    assert len(clip_norms) == 1
    assert ours["losses/clip_fraction"] > 0.05  # far enough from the collecting policy to clip
    assert ours["losses/policy"] == pytest.approx(theirs["policy_loss"], abs=1e-5)
    assert ours["losses/entropy"] == pytest.approx(theirs["entropy"], rel=1e-5)
    # the value has not moved (only the policy's planes did): the PPO's clip is idle,
    # and its loss is half of RLlib's squared error
    assert ours["losses/value"] == pytest.approx(0.5 * theirs["vf_loss"], rel=1e-5)
    assert clip_norms[0] == pytest.approx(
        theirs["gradients_default_optimizer_global_norm"], rel=1e-4
    )


def test_the_learners_adam_is_the_single_file_ppos(collected: Any) -> None:
    """RLlib's learner builds ``Adam(params)`` (epsilon 1e-8); the recipes' learner
    builds the single-file PPO's (``train/libraries/ppo.py``: epsilon 1e-5)."""
    optimizer = collected.learner.get_optimizer(collected.module_id)
    assert type(optimizer) is torch.optim.Adam
    assert optimizer.defaults["eps"] == ppo.ADAM_EPS == 1e-5
    module = collected.learner.module[collected.module_id]
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    assert held == {id(p) for p in module.parameters()}


def test_the_learner_trains_on_the_decisions_alone_with_the_same_losses(collected: Any) -> None:
    """The recipes' learner drops RLlib's artificial steps after GAE: its batch is the
    full one's rows in the loss, and the loss terms on it are the same."""
    full = dict(collected.batch.policy_batches[collected.module_id])
    pruned = dict(collected.pruned.policy_batches[collected.module_id])
    valid = full[Columns.LOSS_MASK].bool()
    assert 0 < int(valid.sum()) < len(valid)  # there were artificial steps to drop
    assert Columns.LOSS_MASK not in pruned
    assert set(pruned) == set(full) - {Columns.LOSS_MASK}
    for key in (Columns.ACTIONS, Columns.REWARDS, Postprocessing.VALUE_TARGETS):
        torch.testing.assert_close(pruned[key], full[key][valid])
    for key in ("observation", "action_mask"):
        torch.testing.assert_close(pruned[Columns.OBS][key], full[Columns.OBS][key][valid])

    learner = collected.learner
    module = learner.module[collected.module_id]
    config = learner.config.get_config_for_module(collected.module_id)

    def loss(batch: dict[str, Any]) -> float:
        with torch.no_grad():
            out = module.forward_train(batch)
            total = learner.compute_loss_for_module(
                module_id=collected.module_id, config=config, batch=batch, fwd_out=out
            )
        return float(total)

    # the same advantages on the decisions (another test writes its own into ``full``),
    # and a value far off on the artificial steps: the loss must not read them
    advantages = torch.full_like(full[Postprocessing.ADVANTAGES], 1e3)
    advantages[valid] = pruned[Postprocessing.ADVANTAGES]
    assert loss(pruned) == pytest.approx(
        loss({**full, Postprocessing.ADVANTAGES: advantages}), rel=1e-5, abs=1e-6
    )
