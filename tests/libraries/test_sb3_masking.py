"""The fast masked distribution: sb3-contrib's MaskableCategorical, normalised by log_softmax."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")

from sb3_contrib.common.maskable.distributions import (  # noqa: E402
    MaskableCategorical,
    MaskableCategoricalDistribution,
)

from agents.libraries.sb3_masking import (  # noqa: E402
    FastMaskableCategorical,
    FastMaskableCategoricalDistribution,
    use_fast_masking,
)


def test_same_distribution_log_probabilities_entropy_and_gradients() -> None:
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 2142, generator=generator) * 3
    masks = torch.rand(64, 2142, generator=generator) < 0.02
    masks[:, 7] = True  # every row has a legal action
    actions = torch.multinomial(masks.float(), 1, generator=generator).squeeze(1)
    outputs = []
    for kind in (MaskableCategorical, FastMaskableCategorical):
        leaf = logits.clone().requires_grad_()
        dist = kind(logits=leaf, masks=masks)
        loss = dist.log_prob(actions).sum() + dist.entropy().sum()
        loss.backward()
        outputs.append((dist.probs, dist.log_prob(actions), dist.entropy(), leaf.grad))
    for slow, fast in zip(*outputs):
        torch.testing.assert_close(fast, slow, rtol=1e-5, atol=1e-6)
    probs = outputs[1][0]
    assert not probs[~masks].any()  # illegal actions: probability exactly 0
    for _ in range(3):
        sample = FastMaskableCategorical(logits=logits, masks=masks).sample()
        assert masks[torch.arange(64), sample].all()
    unmasked = FastMaskableCategorical(logits=logits, masks=masks)
    unmasked.apply_masking(None)  # as sb3-contrib's: the original logits again
    torch.testing.assert_close(unmasked.probs, torch.softmax(logits, -1))


def test_use_fast_masking_replaces_only_the_masked_categorical() -> None:
    class Policy:
        action_dist: object = MaskableCategoricalDistribution(2142)

    policy = use_fast_masking(Policy())
    assert isinstance(policy.action_dist, FastMaskableCategoricalDistribution)
    assert policy.action_dist.action_dim == 2142
    other = object()
    policy.action_dist = other
    assert use_fast_masking(policy).action_dist is other


def test_loss_terms_in_one_pass_match_sb3_contrib_with_float_or_bool_masks() -> None:
    """PPO's log-probabilities and entropy (one fused pass with gradients) are sb3-contrib's."""
    generator = torch.Generator().manual_seed(1)
    logits = torch.randn(48, 2142, generator=generator) * 2
    masks = torch.rand(48, 2142, generator=generator) < 0.03
    masks[:, 2141] = True
    actions = torch.multinomial(masks.float(), 1, generator=generator).squeeze(1)
    weights = torch.randn(48, generator=generator)
    outputs = []
    for kind, given in (
        (MaskableCategorical, masks.float()),
        (FastMaskableCategorical, masks.float()),
        (FastMaskableCategorical, masks),
    ):
        leaf = logits.clone().requires_grad_()
        dist = kind(logits=leaf * 1.0, masks=given)
        log_prob, entropy = dist.log_prob(actions), dist.entropy()
        (log_prob * weights).sum().add(entropy.sum() * 0.01).backward()
        assert leaf.grad is not None
        outputs.append((log_prob.detach(), entropy.detach(), leaf.grad))
    for fast in outputs[1:]:
        for value, expected in zip(fast, outputs[0]):
            torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-6)
    assert not outputs[2][2][~masks].any()  # no gradient reaches an illegal action's logit
    with torch.no_grad():  # without gradients: the plain path, the same values
        plain = FastMaskableCategorical(logits=logits, masks=masks)
        torch.testing.assert_close(plain.log_prob(actions), outputs[2][0])
        torch.testing.assert_close(plain.entropy(), outputs[2][1])


def test_sampling_follows_the_masked_probabilities_and_never_an_illegal_action() -> None:
    masks = torch.zeros(3, 2142, dtype=torch.bool)
    masks[:, [0, 5, 2141]] = True
    logits = torch.zeros(3, 2142)
    logits[:, 5] = float(torch.log(torch.tensor(2.0)))  # action 5 twice as likely
    torch.manual_seed(0)
    dist = FastMaskableCategorical(logits=logits, masks=masks)
    draws = torch.stack([dist.sample() for _ in range(4000)])
    assert draws.shape == (4000, 3)
    assert masks[torch.arange(3), draws].all()
    share = (draws == 5).float().mean().item()
    assert abs(share - 0.5) < 0.05  # 2 / (1 + 2 + 1)
    assert dist.sample((7,)).shape == (7, 3)
    torch.manual_seed(0)
    again = FastMaskableCategorical(logits=logits, masks=masks).sample()
    torch.testing.assert_close(again, draws[0])  # seeded by torch's generator


def test_a_draw_rounded_up_to_the_total_takes_the_last_legal_action(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    masks = torch.zeros(2, 2142, dtype=torch.bool)
    masks[0, [3, 9]] = True
    masks[1, [4]] = True
    monkeypatch.setattr(torch, "rand", lambda size, **kwargs: torch.ones(size, **kwargs))
    sample = FastMaskableCategorical(logits=torch.zeros(2, 2142), masks=masks).sample()
    assert sample.tolist() == [9, 4]
