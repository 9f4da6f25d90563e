"""MaskablePPO's masked action distribution without torch's slow ``exp`` path.

sb3-contrib's ``MaskableCategorical`` sets the logits of illegal actions to
``-1e8`` and normalises them with ``logsumexp``.  torch's vectorised ``exp``
(inside ``logsumexp`` and its gradient) leaves its fast path for arguments
below about -87, so with most of the 2,142 actions illegal, every
normalisation ran 10 to 30 times slower than on ordinary logits and took
most of PPO's update time.  :class:`FastMaskableCategorical` normalises the
same masked logits with ``log_softmax``, whose kernel has no such path: the
same distribution up to rounding (illegal actions have probability exactly
0), the same log-probabilities and entropy.

:func:`use_fast_masking` puts it into a policy.  A saved model does not
record it (the distribution holds no weights), so a loaded model gets it
again from the loader (:mod:`agents.libraries.sb3_agent`).
"""

from __future__ import annotations

from typing import Any, TypeVar

import torch
from torch.distributions import Distribution

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


class FastMaskableCategorical(MaskableCategorical):
    """``MaskableCategorical`` normalised by ``log_softmax`` (module docstring)."""

    def __init__(
        self,
        probs: torch.Tensor | None = None,
        logits: torch.Tensor | None = None,
        validate_args: bool | None = False,
        masks: MaybeMasks = None,
    ) -> None:
        super().__init__(probs, logits, validate_args, masks)

    def apply_masking(self, masks: MaybeMasks) -> None:
        if masks is None:
            super().apply_masking(None)
            return
        original = self._original_logits
        self.masks = torch.as_tensor(masks, dtype=torch.bool, device=original.device).reshape(
            original.shape
        )
        masked = torch.where(
            self.masks, original, torch.tensor(ILLEGAL_LOGIT, dtype=original.dtype)
        )
        self.__dict__.pop("probs", None)  # the cached probabilities of the unmasked logits
        self.logits = torch.log_softmax(masked, dim=-1)
        self._param = self.logits
        Distribution.__init__(self, self.logits.shape[:-1], validate_args=self._validate_args)


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution over :class:`FastMaskableCategorical`."""

    def proba_distribution(self: D, action_logits: torch.Tensor) -> D:
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
