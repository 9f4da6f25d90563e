"""A MaskablePPO model (sb3-contrib) as an agent: spec ``sb3:path=MODEL.zip``.

The model is one saved by :mod:`train.libraries.sb3_maskable_ppo` (``--save``), or any
MaskablePPO model over the environment's observation dict.  Each decision
encodes the position from the acting player's side
(:func:`yinsh_env.envs.observation.encode`) and takes the policy's distribution
with the legal-action mask applied: ``greedy=true`` (default) plays its most
likely legal action, ``greedy=false`` samples from it with the agent's seeded
generator.  A missing, corrupt or mismatched model file, or one with NaN or
infinite weights, fails when the agent is built, with a ``ValueError`` naming
the file.

An SB3 zip may hold pickles, and unpickling runs the code its author put in
them.  The loader never unpickles: it builds every pickled entry the
example's models hold from the readable fields beside it
(:mod:`agents.learned.sb3_safe`) and refuses a model with any other one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned.library_agent import LegalSlots, SavedPolicyAgent, slot_probabilities
from agents.learned.renamed import SB3_RENAMED, old_module_names
from agents.learned.sb3_safe import safe_custom_objects
from agents.network.checkpoint import check_weights, load_failure
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import OBS_SHAPE, encode


def policy_probabilities(policy: Any, state: State) -> np.ndarray:
    """A MaskablePPO policy's probabilities over all actions for ``state``, 0 where illegal."""
    mask = state.legal_mask().astype(bool)
    observation, _ = policy.obs_to_tensor({"observation": encode(state), "action_mask": mask})
    with torch.no_grad():
        probs = policy.get_distribution(observation, action_masks=mask).distribution.probs[0]
    return probs.numpy().astype(np.float64) * mask


def batch_policy_probabilities(policy: Any, planes: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A MaskablePPO policy's probabilities for n observations at once, 0 where illegal.

    ``planes`` (n, 11, 11, 17) and ``masks`` (n, 2142), each from its player's
    side: one forward pass of the policy for all n.
    """
    legal = np.asarray(masks).astype(bool)
    if hasattr(policy, "legal_probabilities"):  # PlanesPolicy: no distribution object
        with torch.inference_mode():
            planes_tensor = torch.as_tensor(planes, dtype=torch.float32, device=policy.device)
            probs = policy.legal_probabilities(planes_tensor, torch.from_numpy(legal))
        return probs.cpu().numpy().astype(np.float64)
    with torch.inference_mode():
        # The arrays as tensors as they are (SB3's obs_to_tensor deep-copies them first);
        # the policy's preprocessing makes them float.
        masks_tensor = torch.from_numpy(legal)
        observation = {
            "observation": torch.as_tensor(planes, device=policy.device),
            "action_mask": masks_tensor.to(policy.device),
        }
        probs = policy.get_distribution(observation, action_masks=masks_tensor).distribution.probs
    return probs.cpu().numpy().astype(np.float64) * legal


def packed_policy_probabilities(
    policy: Any, planes: np.ndarray, masks: np.ndarray, slots: LegalSlots
) -> np.ndarray:
    """:func:`batch_policy_probabilities` in ``slots``' order (0 in the padding).

    A :class:`~agents.learned.sb3_models.PlanesPolicy` computes the logits of
    the legal actions only; another policy's full distribution is gathered.
    """
    if not hasattr(policy, "action_logits"):
        dense = batch_policy_probabilities(policy, planes, masks)
        return np.take_along_axis(dense, slots.actions, axis=1) * slots.valid
    device = policy.device  # SB3 finds it by walking the parameters: once
    with torch.inference_mode():
        planes_tensor = torch.as_tensor(planes, dtype=torch.float32, device=device)
        actions = torch.from_numpy(slots.actions).to(device)
        return slot_probabilities(policy.action_logits(planes_tensor, actions), slots)


def model_file(path: str) -> Path:
    """The model file ``path`` names (SB3 adds ``.zip`` when it is missing)."""
    if not path:
        raise ValueError("the sb3 agent needs path=MODEL.zip")
    for candidate in (Path(path), Path(f"{path}.zip")):
        if candidate.is_file():
            return candidate
        if candidate.exists():  # a device, a pipe, a folder: reading it could block or never end
            raise ValueError(f"SB3 model {str(candidate)!r} is not a regular file")
    raise ValueError(f"SB3 model {path!r} not found")


def load_maskable_ppo(path: str) -> Any:
    """Load a MaskablePPO model for CPU inference; ValueError naming the file otherwise."""
    file = model_file(path)
    from sb3_contrib import MaskablePPO

    replacements = safe_custom_objects(file, SB3_RENAMED)  # ValueError: only a pickle gives it
    try:
        with old_module_names(SB3_RENAMED):
            model = MaskablePPO.load(file, device="cpu", custom_objects=replacements)
    except Exception as exc:  # SB3 raises many kinds for a bad file (zip, pickle, torch)
        raise ValueError(f"cannot load SB3 model {str(file)!r}: {load_failure(exc)}") from None
    spaces: Any = model.observation_space
    try:
        planes = tuple(spaces["observation"].shape)
        actions = int(getattr(model.action_space, "n", 0))
    except (KeyError, TypeError):
        planes, actions = (), 0
    if planes != OBS_SHAPE or actions != N_ACTIONS:
        raise ValueError(
            f"SB3 model {str(file)!r} is not a YINSH policy: observation {spaces}, "
            f"action space {model.action_space}"
        )
    check_weights(dict(model.policy.state_dict()), f"SB3 model {str(file)!r}")
    from agents.learned.sb3_masking import use_fast_masking

    use_fast_masking(model.policy)
    policy: Any = model.policy
    if getattr(policy, "bf16", False):
        policy.bf16 = False  # trained in bf16 or not, a saved model plays in float32
    return model


class SB3Agent(SavedPolicyAgent):
    """Plays a trained MaskablePPO policy, masks applied."""

    def load(self, path: str) -> Path:
        file = model_file(path)
        self.model = load_maskable_ppo(str(file))
        return file

    def legal_probabilities(self, state: State) -> np.ndarray:
        return policy_probabilities(self.model.policy, state)

    def batch_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return batch_policy_probabilities(self.model.policy, observations, masks)

    def packed_probabilities(
        self, observations: np.ndarray, masks: np.ndarray, slots: LegalSlots
    ) -> np.ndarray:
        return packed_policy_probabilities(self.model.policy, observations, masks, slots)
