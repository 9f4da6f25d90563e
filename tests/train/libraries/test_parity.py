"""Parity of the single-file PPO and SB3's MaskablePPO on one fixed batch.

The way "The 37 Implementation Details of PPO" checks implementations: one
network (SB3's :class:`~agents.learned.sb3_models.PlanesPolicy`, copied into
the single-file PPO behind a ``(logits, value)`` adapter), one rollout that
SB3 collected on the vector environment's SB3 adapter, the same
hyper-parameters; then the first update of each, one epoch over one
minibatch.  Where the two agree (GAE and value targets, masks, entropy over
the legal actions, advantage normalisation, the clipped objective, the
approximate KL and clip fraction, gradient norms and the updated weights)
the test says so within float tolerance; where they differ by design
(SB3's value loss is the plain squared error, the single-file PPO's half of
it) the test states the factor, so a change on either side fails here.
docs/studies/library-parity.md lists the differences and which matter.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
pytest.importorskip("torch")
import torch
from stable_baselines3.common.logger import configure
from torch import nn

from agents.learned.ppo_policy import PPOPolicy
from train.libraries import ppo
from train.libraries import sb3_maskable_ppo as example

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("torch_one_thread")]

ENVS, STEPS = 8, 40
GAMMA, LAMBDA = 0.99, 0.95


class SB3ActorCritic(nn.Module):
    """An SB3 policy as the single-file PPO's network: planes -> (logits, value)."""

    def __init__(self, policy: Any) -> None:
        super().__init__()
        self.sb3 = policy

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.sb3.extract_features({"observation": planes})
        latent_pi, latent_vf = self.sb3.mlp_extractor(features)
        return self.sb3.action_net(latent_pi), self.sb3.value_net(latent_vf).squeeze(-1)


def collected(vf_coef: float = 0.25, network: str = "cnn") -> Any:
    """A MaskablePPO model (fp32, tiny CNN, or the single-file PPO's network) and one
    rollout it collected against ``random``, Blitz games with dense rewards so that games
    end and rewards vary within it."""
    env = example.make_vec_env("random", seed=3, rings_to_win=1, envs=ENVS, dense_reward=0.5)
    model = example.build_model(
        env,
        seed=3,
        n_steps=STEPS,
        batch_size=ENVS * STEPS,
        n_epochs=1,
        channels=4,
        features=16,
        gamma=GAMMA,
        gae_lambda=LAMBDA,
        vf_coef=vf_coef,
        precision="fp32",
        network=network,
        blocks=1,
    )
    model.set_logger(configure(None, []))
    _, callback = model._setup_learn(ENVS * STEPS, None)
    callback.on_training_start(locals(), globals())
    assert model.collect_rollouts(model.env, callback, model.rollout_buffer, STEPS)
    return model


def single_file_rollout(model: Any) -> tuple[ppo.Rollout, Any]:
    """SB3's rollout buffer as the single-file PPO's Rollout, and the games' next state."""
    buffer = model.rollout_buffer

    def tensor(array: np.ndarray, dtype: Any = torch.float32) -> torch.Tensor:
        return torch.as_tensor(np.asarray(array)).to(dtype)

    rollout = ppo.Rollout(
        obs=tensor(buffer.observations["observation"]),
        masks=tensor(buffer.action_masks, torch.bool).reshape(STEPS, ENVS, -1),
        actions=tensor(buffer.actions, torch.long).reshape(STEPS, ENVS),
        logprobs=tensor(buffer.log_probs),
        rewards=tensor(buffer.rewards),
        dones=tensor(buffer.episode_starts),  # CleanRL's dones[t]: obs t opens a new game
        values=tensor(buffer.values),
        forced=torch.zeros(STEPS, ENVS),
    )
    games = SimpleNamespace(
        next_obs=tensor(model._last_obs["observation"]),
        next_done=tensor(model._last_episode_starts),
    )
    return rollout, games


def args_for(model: Any) -> ppo.Args:
    """The single-file PPO's settings equal to ``model``'s (one epoch, one minibatch)."""
    return ppo.Args(
        num_envs=ENVS,
        num_steps=STEPS,
        gamma=model.gamma,
        gae_lambda=model.gae_lambda,
        num_minibatches=1,
        update_epochs=1,
        clip_coef=model.clip_range(1.0),
        ent_coef=model.ent_coef,
        vf_coef=2 * model.vf_coef,  # SB3: vf_coef * MSE; the single-file PPO: vf_coef * MSE / 2
        max_grad_norm=model.max_grad_norm,
        learning_rate=model.learning_rate,
    )


def perturb_policy_head(model: Any, scale: float = 0.3) -> None:
    """Move the policy's action layer from the one that collected the rollout, so the
    first update's ratios are not 1 (clipping, KL and clip fraction then have work)."""
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        head = getattr(model.policy.action_net, "weight", None)
        if head is None:  # the PPO's network: its action logits come from its policy planes
            head = model.policy.features_extractor.net.policy_planes.weight
            scale *= 30  # planes start at std 0.01, not orthogonal
        head.add_(scale * torch.randn(head.shape, generator=generator))


def test_the_rollouts_layout_is_the_single_file_ppos() -> None:
    model = collected()
    rollout, _ = single_file_rollout(model)
    assert rollout.obs.shape == (STEPS, ENVS, 11, 11, 17)
    assert rollout.rewards.abs().sum() > 0 and rollout.dones.sum() > 0  # games ended inside
    taken = rollout.masks.gather(-1, rollout.actions.unsqueeze(-1))
    assert bool(taken.all())  # every action SB3 sampled is legal under the stored mask
    # the stored log-probabilities are the single-file PPO's masked categorical's
    logits, values = SB3ActorCritic(model.policy)(rollout.obs.reshape(-1, 11, 11, 17))
    dist = torch.distributions.Categorical(
        logits=ppo.masked_logits(logits, rollout.masks.reshape(STEPS * ENVS, -1))
    )
    np.testing.assert_allclose(
        dist.log_prob(rollout.actions.reshape(-1)).detach(), rollout.logprobs.reshape(-1), atol=1e-5
    )
    np.testing.assert_allclose(values.detach(), rollout.values.reshape(-1), atol=1e-6)


def test_gae_and_value_targets_agree() -> None:
    model = collected()
    rollout, games = single_file_rollout(model)
    adapter = SB3ActorCritic(model.policy)
    advantage, targets = ppo.advantages(cast(Any, adapter), games, rollout, args_for(model))
    np.testing.assert_allclose(advantage, model.rollout_buffer.advantages, atol=1e-5)
    np.testing.assert_allclose(targets, model.rollout_buffer.returns, atol=1e-5)


@pytest.mark.parametrize("network", ["cnn", "ppo"])
def test_the_first_update_gives_the_same_losses_gradients_and_weights(
    network: str, clip_norms: list[float]
) -> None:
    """SB3's small CNN behind an adapter; with ``--network ppo`` SB3's policy is the
    single-file PPO's own network, which the PPO then updates as it is (no adapter)."""
    model = collected(network=network)
    perturb_policy_head(model)
    rollout, games = single_file_rollout(model)
    args = args_for(model)
    if network == "ppo":
        adapter: nn.Module = copy.deepcopy(model.policy.features_extractor.net)
        assert isinstance(adapter, PPOPolicy)
        sb3_weights: Any = model.policy.features_extractor.net.parameters()
    else:
        adapter = SB3ActorCritic(copy.deepcopy(model.policy))
        sb3_weights = model.policy.parameters()
    advantage, targets = ppo.advantages(cast(Any, adapter), games, rollout, args)
    optimizer = torch.optim.Adam(adapter.parameters(), lr=args.learning_rate, eps=1e-5)
    ours = ppo.update(cast(Any, adapter), optimizer, rollout, advantage, targets, args)
    model.train()
    theirs = model.logger.name_to_value

    assert len(clip_norms) == 2
    assert clip_norms[0] == pytest.approx(clip_norms[1], rel=1e-4)
    assert theirs["train/clip_fraction"] > 0.05  # the ratios are far enough from 1 to clip
    assert ours["losses/clip_fraction"] == pytest.approx(theirs["train/clip_fraction"], abs=1e-6)
    assert ours["losses/policy"] == pytest.approx(theirs["train/policy_gradient_loss"], abs=1e-5)
    assert ours["losses/entropy"] == pytest.approx(-theirs["train/entropy_loss"], rel=1e-5)
    assert ours["losses/approx_kl"] == pytest.approx(theirs["train/approx_kl"], rel=1e-4)
    # the value losses: the single-file PPO halves the squared error (CleanRL), SB3 does not
    assert ours["losses/value"] == pytest.approx(0.5 * theirs["train/value_loss"], rel=1e-5)
    mine = list(adapter.named_parameters())
    theirs_weights = list(sb3_weights)
    assert len(mine) == len(theirs_weights) and len(mine) > 0
    for (name, ours_w), sb3 in zip(mine, theirs_weights):
        np.testing.assert_allclose(ours_w.detach(), sb3.detach(), atol=1e-6, err_msg=name)


def test_the_entropy_is_over_the_legal_actions_only() -> None:
    model = collected()
    perturb_policy_head(model)
    rollout, games = single_file_rollout(model)
    args = args_for(model)
    adapter = SB3ActorCritic(model.policy)
    advantage, targets = ppo.advantages(cast(Any, adapter), games, rollout, args)
    optimizer = torch.optim.SGD(adapter.parameters(), lr=0.0)
    ours = ppo.update(cast(Any, adapter), optimizer, rollout, advantage, targets, args)
    logits, _ = adapter(rollout.obs.reshape(-1, 11, 11, 17))
    masks = rollout.masks.reshape(STEPS * ENVS, -1)
    legal_only = [
        torch.distributions.Categorical(logits=row[mask]).entropy()
        for row, mask in zip(logits.detach(), masks)
    ]
    assert ours["losses/entropy"] == pytest.approx(float(torch.stack(legal_only).mean()), rel=1e-5)
    full = torch.distributions.Categorical(logits=logits.detach()).entropy().mean()
    assert ours["losses/entropy"] < float(full) - 1.0  # not the entropy over all 2,142


def test_value_clipping_differs_sb3_clips_nothing_the_single_file_ppo_takes_the_max() -> None:
    """With the value head moved from the one that collected the rollout, the single-file
    PPO's value loss is CleanRL's ``0.5 * max(unclipped, clipped)``, SB3's (``clip_range_vf``
    None, its default) the unclipped squared error: a difference by design, measured."""
    model = collected()
    with torch.no_grad():
        model.policy.value_net.bias.add_(1.0)  # every value 1 above the rollout's
    rollout, _ = single_file_rollout(model)
    args = args_for(model)
    adapter = SB3ActorCritic(copy.deepcopy(model.policy))
    buffer = model.rollout_buffer  # its targets: the rollout's values, before the move
    advantage, targets = torch.as_tensor(buffer.advantages), torch.as_tensor(buffer.returns)
    optimizer = torch.optim.SGD(adapter.parameters(), lr=0.0)
    ours = ppo.update(cast(Any, adapter), optimizer, rollout, advantage, targets, args)
    model.train()
    theirs = model.logger.name_to_value["train/value_loss"]
    _, values = adapter(rollout.obs.reshape(-1, 11, 11, 17))
    old, ret = rollout.values.reshape(-1), targets.reshape(-1)
    clipped = old + (values.detach() - old).clamp(-args.clip_coef, args.clip_coef)
    unclipped_error = (values.detach() - ret) ** 2
    assert theirs == pytest.approx(float(unclipped_error.mean()), rel=1e-5)
    worst = torch.max(unclipped_error, (clipped - ret) ** 2)
    assert ours["losses/value"] == pytest.approx(0.5 * float(worst.mean()), rel=1e-5)
    assert ours["losses/value"] != pytest.approx(0.5 * theirs, rel=1e-3)


def test_rewards_are_the_learners_from_either_seat() -> None:
    """The SB3 adapter's final reward is +1 when the learner's colour won, -1 when it lost,
    0 for a draw, whichever seat it had (the learner alternates)."""
    env = example.make_vec_env("random", seed=1, rings_to_win=1, envs=4)
    env.reset()
    rng = np.random.default_rng(0)
    seen: dict[str, set[float]] = {"player_0": set(), "player_1": set()}
    while min(len(s) for s in seen.values()) < 2:
        actions = [rng.choice(np.flatnonzero(row)) for row in env.action_masks()]
        env.step_async(np.array(actions))
        _, rewards, dones, infos = env.step_wait()
        for game in np.flatnonzero(dones):
            info = infos[game]
            winner = {"W": "player_0", "B": "player_1"}.get(info["result"].value)
            expected = 0.0 if winner is None else (1.0 if winner == info["learner"] else -1.0)
            assert rewards[game] == expected
            seen[info["learner"]].add(float(rewards[game]))
