"""MaskablePPO's masked action distribution, computed with as few passes over the logits as can be.

sb3-contrib's ``MaskableCategorical`` normalises the raw logits with
``logsumexp``, sets the logits of illegal actions to ``-1e8`` with ``where``,
normalises again with ``logsumexp``, and masks the entropy's terms with
``where`` once more; sampling draws with ``torch.multinomial``.  Over 2,142
actions, most of them illegal, each of those full-width passes (and its
gradient) costs: torch's vectorised ``exp`` (inside ``logsumexp``) leaves its
fast path for arguments below about -87, so each normalisation ran 10 to 30
times slower than on ordinary logits, and ``multinomial`` draws an
exponential variate for every action of every row.

:class:`FastMaskableCategorical` is the same distribution:

* the masked logits are the raw ones where legal, ``-1e8`` where illegal
  (one ``where``), built when first needed;
* ``logits`` (the log-probabilities) is one ``log_softmax`` of them and
  ``probs`` one ``softmax``, each computed when first asked for (nothing at
  construction, which the policy does before it applies the mask); illegal
  actions get probability exactly 0;
* the entropy is ``-sum(probs * logits)``: an illegal action's term is
  ``0 * -1e8``, an exact zero, so no mask is applied again;
* with gradients (PPO's loss), :meth:`~FastMaskableCategorical.log_prob`
  computes the taken actions' log-probabilities and the entropy together
  (:class:`_LogProbEntropy`, its derivative written out), and
  :meth:`~FastMaskableCategorical.entropy` returns that entropy;
* :meth:`~FastMaskableCategorical.sample` draws by the inverse of each row's
  cumulative distribution, one uniform number per row (torch's global
  generator, which SB3 seeds), never an action of probability 0.

The probabilities, log-probabilities, entropy and gradients are sb3-contrib's
up to float rounding (a test checks them).  :func:`use_fast_masking` puts
the distribution into a policy.  A saved model does not record it (the
distribution holds no weights), so a loaded model gets it again from the
loader (:mod:`agents.libraries.sb3_agent`).
"""

from __future__ import annotations

from typing import Any, TypeVar

import torch
from torch.distributions import Distribution
from torch.distributions.utils import lazy_property

try:
    from sb3_contrib.common.maskable.distributions import (
        MaskableCategorical,
        MaskableCategoricalDistribution,
        MaybeMasks,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'MaskablePPO needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc

__all__ = ["FastMaskableCategorical", "FastMaskableCategoricalDistribution", "use_fast_masking"]

#: The logit of an illegal action, as sb3-contrib writes it.
ILLEGAL_LOGIT = -1e8

D = TypeVar("D", bound="FastMaskableCategoricalDistribution")


def _masked(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The logits with :data:`ILLEGAL_LOGIT` where ``masks`` (bool) is False."""
    return torch.where(masks, logits, ILLEGAL_LOGIT)


class _LogProbEntropy(torch.autograd.Function):
    """The masked distribution's log-probabilities of ``actions`` and its entropy, in one pass.

    What PPO's loss asks for; the gradient is written out (below) instead of
    autograd's chain through ``where``, ``log_softmax``, ``softmax``, the
    product, the sum and ``gather``: the same derivative, about half the
    full-width passes over the logits.
    """

    @staticmethod
    def forward(
        ctx: Any, logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        masked = _masked(logits, masks)
        log_probs = torch.log_softmax(masked, dim=-1)
        probs = torch.softmax(masked, dim=-1)
        entropy = -(log_probs * probs).sum(-1)  # illegal terms: 0 * -1e8, exactly 0
        chosen = actions.unsqueeze(-1)
        ctx.save_for_backward(log_probs, probs, entropy, chosen)
        return log_probs.gather(-1, chosen).squeeze(-1), entropy

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(
        ctx: Any, grad_log_prob: torch.Tensor, grad_entropy: torch.Tensor
    ) -> tuple[torch.Tensor, None, None]:
        log_probs, probs, entropy, chosen = ctx.saved_tensors
        # d log p_a / d z_j = [j = a] - p_j;  d H / d z_j = -p_j (log p_j + H)
        grad = (log_probs + entropy.unsqueeze(-1)).mul_(grad_entropy.unsqueeze(-1))
        grad.add_(grad_log_prob.unsqueeze(-1)).mul_(probs).neg_()
        grad.scatter_add_(-1, chosen, grad_log_prob.unsqueeze(-1))
        return grad, None, None


class FastMaskableCategorical(MaskableCategorical):
    """``MaskableCategorical`` by one ``log_softmax`` and one ``softmax`` (module docstring).

    Takes ``logits`` only (as sb3-contrib's policies build it); ``masks``:
    bool, or anything ``torch.as_tensor`` reads as such.
    """

    def __init__(
        self,
        probs: torch.Tensor | None = None,
        logits: torch.Tensor | None = None,
        validate_args: bool | None = False,
        masks: MaybeMasks = None,
    ) -> None:
        if probs is not None or logits is None:
            raise ValueError("FastMaskableCategorical takes logits, not probs")
        if logits.dim() < 1:
            raise ValueError("logits must be at least one-dimensional")
        self._original_logits = logits
        self._num_events = logits.size(-1)
        self.masks: torch.Tensor | None = None
        self._entropy: torch.Tensor | None = None
        Distribution.__init__(self, logits.shape[:-1], validate_args=validate_args)
        self.apply_masking(masks)

    def apply_masking(self, masks: MaybeMasks) -> None:
        if masks is None:
            self.masks = None
        else:
            original = self._original_logits
            found = torch.as_tensor(masks, device=original.device)
            self.masks = (found if found.dtype == torch.bool else found.bool()).reshape(
                original.shape
            )
        for cached in ("_masked_logits", "logits", "probs"):  # computed again, when asked
            self.__dict__.pop(cached, None)
        self._entropy = None

    @lazy_property
    def _masked_logits(self) -> torch.Tensor:
        if self.masks is None:
            return self._original_logits
        return _masked(self._original_logits, self.masks)

    @lazy_property
    def logits(self) -> torch.Tensor:
        """The log-probabilities: ``log_softmax`` of the masked logits."""
        return torch.log_softmax(self._masked_logits, dim=-1)

    @lazy_property
    def probs(self) -> torch.Tensor:
        """The probabilities: ``softmax`` of the masked logits (0 where illegal)."""
        return torch.softmax(self._masked_logits, dim=-1)

    @property
    def _param(self) -> torch.Tensor:  # type: ignore[override]
        return self.logits

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        """The log-probabilities of ``value``; with gradients (PPO's loss), the entropy too.

        One action per row: :class:`_LogProbEntropy` computes both, and
        :meth:`entropy` returns that entropy, part of the same graph.
        """
        original = self._original_logits
        if (
            self.masks is None
            or not (torch.is_grad_enabled() and original.requires_grad)
            or original.dim() != 2
            or value.shape != original.shape[:1]
        ):
            return super().log_prob(value)
        log_prob, self._entropy = _LogProbEntropy.apply(original, self.masks, value.long())
        return log_prob

    def entropy(self) -> torch.Tensor:
        if self._entropy is not None:
            return self._entropy
        if self.masks is None:
            return super().entropy()
        return -(self.logits * self.probs).sum(-1)  # illegal terms: 0 * -1e8, exactly 0

    def sample(self, sample_shape: torch.Size | list[int] | tuple[int, ...] = ()) -> torch.Tensor:
        """Draws by each row's cumulative distribution: one uniform number per draw."""
        shape = torch.Size(sample_shape)
        probs = self.probs.detach().reshape(-1, self._num_events)
        cumulative = probs.cumsum(-1)
        total = cumulative[:, -1:]
        draws = torch.rand((probs.size(0), shape.numel()), dtype=probs.dtype, device=probs.device)
        # The first action whose cumulative probability exceeds the draw: never one of
        # probability 0 (its cumulative equals its predecessor's).
        samples = torch.searchsorted(cumulative, draws * total, right=True)
        beyond = samples >= self._num_events  # a draw rounded up to the total
        if beyond.any():
            last = (cumulative >= total).to(torch.uint8).argmax(-1, keepdim=True)
            samples = torch.where(beyond, last.expand_as(samples), samples)
        return samples.T.reshape(self._extended_shape(shape))


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution over :class:`FastMaskableCategorical`."""

    def proba_distribution(self: D, action_logits: torch.Tensor) -> D:
        # float32 whatever the network ran in (bf16 logits would round the probabilities)
        logits = action_logits.view(-1, self.action_dim).float()
        self.distribution = FastMaskableCategorical(logits=logits)
        return self


def use_fast_masking(policy: Any) -> Any:
    """Give a MaskablePPO ``policy`` :class:`FastMaskableCategoricalDistribution`; returns it.

    A policy whose distribution is not sb3-contrib's categorical one is left as it is.
    """
    current = getattr(policy, "action_dist", None)
    if type(current) is MaskableCategoricalDistribution:
        policy.action_dist = FastMaskableCategoricalDistribution(current.action_dim)
    return policy
