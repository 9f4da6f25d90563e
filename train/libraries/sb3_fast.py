"""Faster pieces for sb3-contrib's MaskablePPO on YINSH: the same algorithm, less copying.

:func:`train.libraries.sb3_maskable_ppo.build_model` uses them:

* :class:`BoolMaskDictRolloutBuffer`: sb3-contrib's dict rollout buffer with
  the action masks stored as bool, not float32 (2,142 of them per step: a
  quarter of the memory to fill, shuffle and copy into each minibatch, and
  the masked distribution takes them as they are), and each minibatch's
  arrays handed to torch without a second copy (fancy indexing already made one).
* each minibatch's masks carry their rows' legal actions packed to the left
  (``masks.legal_slots``, what the masked distribution would otherwise find
  with ``nonzero`` in every minibatch of every epoch), packed once per rollout;
* :func:`fused_adam`: the policy's Adam with torch's fused CPU kernel (one
  pass over each parameter per step, instead of a dozen elementwise ops),
  where this torch has it.  The same update rule; the saved model records it
  in the optimizer's state only, which inference never uses.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import torch

from agents.learned.library_agent import LegalSlots, legal_slots

try:
    from sb3_contrib.common.maskable.buffers import (
        MaskableDictRolloutBuffer,
        MaskableDictRolloutBufferSamples,
    )
    from stable_baselines3.common.vec_env import VecNormalize
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'MaskablePPO needs sb3-contrib, an optional extra: pip install -e ".[sb3]"'
    ) from exc

__all__ = ["BoolMaskDictRolloutBuffer", "fused_adam"]


class BoolMaskDictRolloutBuffer(MaskableDictRolloutBuffer):
    """``MaskableDictRolloutBuffer`` with bool action masks and one copy per minibatch array.

    The samples are the same values: masks as bool tensors instead of 0/1 floats
    (the masked distribution reads either as bool).
    """

    def reset(self) -> None:
        super().reset()
        self.action_masks = np.ones(self.action_masks.shape, dtype=np.bool_)
        self._slots: LegalSlots | None = None

    def _rollout_slots(self) -> LegalSlots | None:
        """The rollout's masks packed (:func:`legal_slots`), in the flattened order the
        samples index; once per rollout.  None where a row has no legal action."""
        if self._slots is None:
            masks = self.action_masks.reshape(-1, self.mask_dims)
            if not masks.any(axis=1).all():
                return None
            self._slots = legal_slots(masks)
        return self._slots

    def _masks(self, batch_inds: np.ndarray) -> torch.Tensor:
        """The minibatch's masks, their packing attached as ``legal_slots`` (index, valid)."""
        masks = self._tensor(self.action_masks[batch_inds].reshape(-1, self.mask_dims))
        slots = self._rollout_slots()
        if slots is not None:
            valid = slots.valid[batch_inds]
            width = int(valid.sum(axis=1).max())  # this minibatch's widest row
            masks.legal_slots = (  # type: ignore[attr-defined]
                self._tensor(slots.actions[batch_inds, :width]),
                self._tensor(valid[:, :width]),
            )
        return masks

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        """``array`` (a fresh copy: fancy-indexed) as a tensor on the buffer's device."""
        return torch.as_tensor(array, device=self.device)

    def _get_samples(  # type: ignore[override]
        self, batch_inds: np.ndarray, env: VecNormalize | None = None
    ) -> MaskableDictRolloutBufferSamples:
        return MaskableDictRolloutBufferSamples(
            observations={
                key: self._tensor(obs[batch_inds]) for key, obs in self.observations.items()
            },
            actions=self._tensor(self.actions[batch_inds]),
            old_values=self._tensor(self.values[batch_inds].flatten()),
            old_log_prob=self._tensor(self.log_probs[batch_inds].flatten()),
            advantages=self._tensor(self.advantages[batch_inds].flatten()),
            returns=self._tensor(self.returns[batch_inds].flatten()),
            action_masks=self._masks(batch_inds),
        )


def fused_adam(policy: Any) -> Any:
    """Rebuild ``policy.optimizer`` (a fresh Adam, before any step) with ``fused=True``.

    Left as it is where it is not Adam, or where this torch has no fused kernel
    for the parameters' device (CPU: torch 2.4 on).  Returns the policy.
    """
    optimizer = getattr(policy, "optimizer", None)
    if type(optimizer) is not torch.optim.Adam or optimizer.state:
        return policy
    group = optimizer.param_groups[0]
    settings = {k: v for k, v in group.items() if k not in ("params", "fused", "foreach")}
    with contextlib.suppress(RuntimeError, ValueError):  # no fused kernel for this device
        policy.optimizer = torch.optim.Adam(policy.parameters(), fused=True, **settings)
    return policy
