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

* what PPO asks of it (sampling in the rollouts; the taken actions'
  log-probabilities and the entropy in the rollouts and the updates) is
  computed over each row's legal actions only, packed to the left
  (:func:`_legal_slots`, a few dozen of the 2,142): the same values, since an
  illegal action's probability is exactly 0; the gradient reaches the legal
  logits through ``gather``.  Rows without a legal action, and an illegal
  action asked for, take the full width;
* bf16 logits (:class:`~agents.learned.sb3_models.PlanesPolicy` in bf16) are
  made float32 where used: only the legal ones on the packed path;
* on the full width, the masked logits are the raw ones where legal,
  ``-1e8`` where illegal (one ``where``), built when first needed;
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
up to float rounding (tests check them), with one exception no rollout meets:
for an illegal action asked for, the gradient reaches the legal logits only
(sb3-contrib's normalising of the raw logits moves the illegal ones too).
:func:`use_fast_masking` puts the distribution into a policy.  A saved model does not record it (the
distribution holds no weights), so a loaded model gets it again from the
loader (:mod:`agents.learned.sb3_agent`).
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
        legal = masks.gather(-1, chosen)  # an illegal action's logit was replaced: no gradient
        ctx.save_for_backward(log_probs, probs, entropy, chosen, legal)
        return log_probs.gather(-1, chosen).squeeze(-1), entropy

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(
        ctx: Any, grad_log_prob: torch.Tensor, grad_entropy: torch.Tensor
    ) -> tuple[torch.Tensor, None, None]:
        log_probs, probs, entropy, chosen, legal = ctx.saved_tensors
        # d log p_a / d z_j = [j = a] - p_j;  d H / d z_j = -p_j (log p_j + H)
        grad = (log_probs + entropy.unsqueeze(-1)).mul_(grad_entropy.unsqueeze(-1))
        grad.add_(grad_log_prob.unsqueeze(-1)).mul_(probs).neg_()
        grad.scatter_add_(-1, chosen, grad_log_prob.unsqueeze(-1) * legal)
        return grad, None, None


def _legal_slots(masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Each row's legal actions, packed to the left: ``(index, valid)``, both (rows, k).

    ``k`` is the most legal actions of any row; ``index[r, j]`` is row ``r``'s
    ``j``-th legal action in increasing order, and ``valid`` says which
    entries are actions rather than padding (index 0).  None where a row has
    no legal action (the full width is then the distribution: uniform).
    """
    rows, actions = masks.nonzero(as_tuple=True)  # row by row, actions increasing
    counts = torch.bincount(rows, minlength=masks.size(0))
    if not counts.numel() or not bool(counts.min()):
        return None
    slots = torch.arange(rows.numel(), device=masks.device) - (counts.cumsum(0) - counts)[rows]
    width = int(counts.max())
    index = actions.new_zeros(masks.size(0), width)
    index[rows, slots] = actions
    valid = torch.arange(width, device=masks.device) < counts.unsqueeze(-1)
    return index, valid


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
        self._given_logits = logits  # float32 when first needed (below)
        self._num_events = logits.size(-1)
        self.masks: torch.Tensor | None = None
        self._entropy: torch.Tensor | None = None
        Distribution.__init__(self, logits.shape[:-1], validate_args=validate_args)
        self.apply_masking(masks)

    def apply_masking(self, masks: MaybeMasks) -> None:
        """Masks the logits; masks with a ``legal_slots`` attribute bring their packing
        (:func:`_legal_slots`' ``(index, valid)``: the rollout buffer packs them once)."""
        if masks is None:
            self.masks = None
        else:
            given = self._given_logits
            found = torch.as_tensor(masks, device=given.device)
            self.masks = (found if found.dtype == torch.bool else found.bool()).reshape(given.shape)
        for cached in ("_masked_logits", "logits", "probs", "_slots", "_legal_logits"):
            self.__dict__.pop(cached, None)
        self._entropy = None
        packed = getattr(masks, "legal_slots", None)
        if packed is not None and self.masks is not None and self.masks.dim() == 2:
            index, valid = packed
            if index.shape == valid.shape and index.shape[0] == self.masks.shape[0]:
                self.__dict__["_slots"] = (index, valid)

    @lazy_property
    def _original_logits(self) -> torch.Tensor:
        """The logits as given, in float32 (a bf16 network's would round the probabilities)."""
        return self._given_logits.float()

    @lazy_property
    def _slots(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The legal actions packed per row (:func:`_legal_slots`); None: use the full width."""
        if self.masks is None or self.masks.dim() != 2:
            return None
        return _legal_slots(self.masks)

    @lazy_property
    def _legal_logits(self) -> torch.Tensor:
        """The legal actions' logits (float32) by slot, :data:`ILLEGAL_LOGIT` in the padding."""
        assert self._slots is not None
        index, valid = self._slots
        return _masked(self._given_logits.gather(-1, index).float(), valid)

    def _chosen_slots(self, actions: torch.Tensor) -> torch.Tensor | None:
        """Each row's slot of its action in :attr:`_slots`; None if a row's is not legal."""
        if self._slots is None or actions.shape != self._given_logits.shape[:-1]:
            return None
        index, valid = self._slots
        hits = (index == actions.unsqueeze(-1)) & valid
        if not hits.any(-1).all():
            return None
        return hits.to(torch.uint8).argmax(-1)

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

        Over the legal actions only (:attr:`_slots`) where every row's action
        is legal: the same values.  With gradients, :class:`_LogProbEntropy`
        computes both, and :meth:`entropy` returns that entropy, part of the
        same graph.
        """
        actions = value.long()
        chosen = self._chosen_slots(actions)
        if not (torch.is_grad_enabled() and self._given_logits.requires_grad):
            if chosen is None:
                return super().log_prob(value)
            with torch.no_grad():
                legal = torch.log_softmax(self._legal_logits, dim=-1)
                return legal.gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        if chosen is not None:
            assert self._slots is not None
            log_prob, self._entropy = _LogProbEntropy.apply(
                self._legal_logits, self._slots[1], chosen
            )  # the gradient of the gather scatters back to the legal actions' logits
        elif (
            self.masks is not None
            and self._given_logits.dim() == 2
            and actions.shape == self._given_logits.shape[:-1]
        ):
            log_prob, self._entropy = _LogProbEntropy.apply(
                self._original_logits, self.masks, actions
            )
        else:
            return super().log_prob(value)
        return log_prob

    def entropy(self) -> torch.Tensor:
        if self._entropy is not None:
            return self._entropy
        if self.masks is None:
            return super().entropy()
        return -(self.logits * self.probs).sum(-1)  # illegal terms: 0 * -1e8, exactly 0

    def sample(self, sample_shape: torch.Size | list[int] | tuple[int, ...] = ()) -> torch.Tensor:
        """Draws by each row's cumulative distribution: one uniform number per draw.

        Over the legal actions only (:attr:`_slots`) where the mask allows:
        the same cumulative sums (an illegal action adds exactly 0).
        """
        shape = torch.Size(sample_shape)
        with torch.no_grad():
            if self._slots is None:
                probs = self.probs.reshape(-1, self._num_events)
            else:
                probs = torch.softmax(self._legal_logits, dim=-1)
            cumulative = probs.cumsum(-1)
            total = cumulative[:, -1:]
            draws = torch.rand(
                (probs.size(0), shape.numel()), dtype=probs.dtype, device=probs.device
            )
            # The first action whose cumulative probability exceeds the draw: never one
            # of probability 0 (its cumulative equals its predecessor's).
            samples = torch.searchsorted(cumulative, draws * total, right=True)
            beyond = samples >= probs.size(-1)  # a draw rounded up to the total
            if beyond.any():
                last = (cumulative >= total).to(torch.uint8).argmax(-1, keepdim=True)
                samples = torch.where(beyond, last.expand_as(samples), samples)
            if self._slots is not None:
                samples = self._slots[0].gather(-1, samples)
        return samples.T.reshape(self._extended_shape(shape))


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution over :class:`FastMaskableCategorical`."""

    def proba_distribution(self: D, action_logits: torch.Tensor) -> D:
        # float32 whatever the network ran in, cast where needed (the distribution does)
        self.distribution = FastMaskableCategorical(logits=action_logits.view(-1, self.action_dim))
        return self


def use_fast_masking(policy: Any) -> Any:
    """Give a MaskablePPO ``policy`` :class:`FastMaskableCategoricalDistribution`; returns it.

    A policy whose distribution is not sb3-contrib's categorical one is left as it is.
    """
    current = getattr(policy, "action_dist", None)
    if type(current) is MaskableCategoricalDistribution:
        policy.action_dist = FastMaskableCategoricalDistribution(current.action_dim)
    return policy
