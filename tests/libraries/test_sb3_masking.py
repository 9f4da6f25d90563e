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
