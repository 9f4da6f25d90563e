"""The fast masked distribution: sb3-contrib's MaskableCategorical, normalised by log_softmax."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")

from sb3_contrib.common.maskable.distributions import (  # noqa: E402
    MaskableCategorical,
    MaskableCategoricalDistribution,
)

from agents.learned.sb3_masking import (  # noqa: E402
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


def test_legal_slots_pack_each_rows_legal_actions_in_order() -> None:
    from agents.learned.sb3_masking import _legal_slots

    masks = torch.zeros(3, 10, dtype=torch.bool)
    masks[0, [2, 7]] = True
    masks[1, [0, 4, 9]] = True
    masks[2, [5]] = True
    packed = _legal_slots(masks)
    assert packed is not None
    index, valid = packed
    assert valid.tolist() == [[True, True, False], [True, True, True], [True, False, False]]
    assert index[valid].tolist() == [2, 7, 0, 4, 9, 5]
    masks[2] = False  # a row with no legal action: the full width decides
    assert _legal_slots(masks) is None


def test_masks_may_bring_their_packing_and_the_values_are_the_same() -> None:
    """The rollout buffer packs a rollout's masks once and hands each minibatch its rows."""
    from agents.learned.sb3_masking import _legal_slots

    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(6, 300, generator=generator)
    masks = torch.rand(6, 300, generator=generator) < 0.1
    masks[:, 11] = True
    actions = torch.multinomial(masks.float(), 1, generator=generator).squeeze(1)
    packed = _legal_slots(masks)
    assert packed is not None
    carried = masks.clone()
    carried.legal_slots = packed  # type: ignore[attr-defined]
    given = FastMaskableCategorical(logits=logits.clone().requires_grad_(), masks=carried)
    assert given._slots is not None and given._slots[0] is packed[0]  # used, not found again
    found = FastMaskableCategorical(logits=logits.clone().requires_grad_(), masks=masks)
    for dist in (given, found):
        loss = dist.log_prob(actions).sum() + dist.entropy().sum()
        loss.backward()
    torch.testing.assert_close(given.log_prob(actions), found.log_prob(actions))
    torch.testing.assert_close(given._given_logits.grad, found._given_logits.grad)
    wrong = masks.clone()  # a packing of other rows is not used
    wrong.legal_slots = (packed[0][:2], packed[1][:2])  # type: ignore[attr-defined]
    assert FastMaskableCategorical(logits=logits, masks=wrong)._slots[0].shape[0] == 6


def test_rows_without_legal_actions_and_illegal_actions_take_the_full_width() -> None:
    """Where the legal actions alone cannot say it, the full width answers (as sb3-contrib)."""
    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(4, 2142, generator=generator)
    masks = torch.rand(4, 2142, generator=generator) < 0.05
    masks[:, 3] = True
    actions = torch.tensor([3, 3, 3, 3])
    illegal = masks.clone()
    illegal[2, 3] = False  # row 2's action is illegal: log-probability about -1e8
    outputs = []
    for kind in (MaskableCategorical, FastMaskableCategorical):
        leaf = logits.clone().requires_grad_()
        dist = kind(logits=leaf * 1.0, masks=illegal)
        log_prob, entropy = dist.log_prob(actions), dist.entropy()
        (log_prob.sum() + entropy.sum()).backward()
        with torch.no_grad():
            plain = kind(logits=logits, masks=illegal).log_prob(actions)
        outputs.append((log_prob.detach(), entropy.detach(), leaf.grad, plain))
    assert outputs[1][0][2] < -1e7
    (log_prob, entropy, grad, plain), expected = outputs[1], outputs[0]
    for value, wanted in ((log_prob, expected[0]), (entropy, expected[1]), (plain, expected[3])):
        torch.testing.assert_close(value, wanted, rtol=1e-5, atol=1e-4)
    assert grad is not None and expected[2] is not None
    others = [0, 1, 3]  # sb3-contrib's gradient for an illegal action is an artefact of
    torch.testing.assert_close(grad[others], expected[2][others])  # its double normalising
    assert not grad[2][~illegal[2]].any()  # ours: only the legal logits move
    empty = masks.clone()
    empty[1] = False  # no legal action in row 1: every action equally likely
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            leaf = logits.clone().requires_grad_(grad)
            log_prob = FastMaskableCategorical(logits=leaf, masks=empty).log_prob(actions)
        expected = MaskableCategorical(logits=logits, masks=masks).log_prob(actions)
        torch.testing.assert_close(log_prob[[0, 2, 3]].detach(), expected[[0, 2, 3]])
        # -log(2,142), up to the rounding of -1e8 in float32 (steps of 8)
        assert abs(float(log_prob[1].detach()) + 7.67) < 0.5


def test_bf16_logits_give_the_distribution_of_their_float32_values() -> None:
    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(8, 2142, generator=generator).bfloat16()
    masks = torch.rand(8, 2142, generator=generator) < 0.04
    masks[:, 0] = True
    actions = torch.zeros(8, dtype=torch.long)
    results = []
    for given in (logits, logits.float()):
        leaf = given.clone().requires_grad_()
        dist = FastMaskableCategorical(logits=leaf, masks=masks)
        log_prob = dist.log_prob(actions)
        assert log_prob.dtype == torch.float32
        log_prob.sum().backward()
        assert leaf.grad is not None
        results.append((log_prob.detach(), dist.entropy().detach(), leaf.grad.float()))
    for value, expected in zip(results[0][:2], results[1][:2]):
        torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-6)
    # the gradient reaches the bf16 logits in bf16: the float32 one, rounded
    torch.testing.assert_close(results[0][2], results[1][2], rtol=1e-2, atol=1e-3)
