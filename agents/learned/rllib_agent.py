"""A policy trained by the RLlib example as an agent: spec ``rllib:path=CHECKPOINT``.

``CHECKPOINT`` is the learner's module as :mod:`train.libraries.rllib_example` saves
it (``--save DIR``), or a whole RLlib algorithm checkpoint
(``algo.save_to_path``), whose ``learner_group/learner/rl_module/learner``
module is then used.  Each decision encodes the position from the acting
player's side and takes the masked module's logits: ``greedy=true`` (default)
plays the most likely legal action, ``greedy=false`` samples with the agent's
seeded generator.  A missing or corrupt checkpoint, or one with NaN or
infinite weights, fails when the agent is built, with a ``ValueError`` naming
it.  Needs the ``rllib`` extra; Ray itself
is not started.

An RLlib checkpoint is a set of pickles, and RLlib unpickles them: a pickle
can run any code its author put in it.  So every ``*.pkl`` file of the module
is first read with an unpickler that resolves only the classes the example's
checkpoints name (:mod:`agents.learned.pickle_check`); one naming anything
else is refused unread.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned.library_agent import SavedPolicyAgent
from agents.learned.pickle_check import RLLIB_ALLOWED, check_pickles
from agents.learned.renamed import RLLIB_RENAMED, old_module_names
from agents.network.checkpoint import check_weights
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode

#: Where an algorithm checkpoint keeps the learner's module.
ALGORITHM_MODULE_DIR = Path("learner_group", "learner", "rl_module")


def module_dir(path: str, module_id: str) -> Path:
    """The module checkpoint directory ``path`` names (itself, or inside an algorithm's)."""
    if not path:
        raise ValueError("the rllib agent needs path=CHECKPOINT_DIR")
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"RLlib checkpoint {path!r} not found (expected a directory)")
    inside = root / ALGORITHM_MODULE_DIR / module_id
    # Absolute: RLlib reads checkpoints through pyarrow, which takes a relative path for a URI.
    return (inside if inside.is_dir() else root).resolve()


def load_masked_module(path: str) -> Any:
    """Load the example's :class:`~agents.learned.rllib_models.MaskedPolicyModule`
    from a checkpoint (one saved under the old module names too)."""
    from agents.learned import rllib_models

    directory = module_dir(path, rllib_models.LEARNER)
    with old_module_names(RLLIB_RENAMED):  # before RLlib unpickles anything
        check_pickles(directory, RLLIB_ALLOWED, RLLIB_RENAMED, "RLlib checkpoint")
    from ray.rllib.core.rl_module.rl_module import RLModule

    # RLlib's RLModule constructor logs a deprecation against RLlib's own code.
    deprecations = logging.getLogger("ray._common.deprecation")
    level = deprecations.level
    deprecations.setLevel(logging.ERROR)
    try:
        with old_module_names(RLLIB_RENAMED):
            module: Any = RLModule.from_checkpoint(directory)
    except Exception as exc:  # RLlib raises many kinds for a bad directory (pickle, io)
        raise ValueError(f"cannot load RLlib checkpoint {str(directory)!r}: {exc}") from exc
    finally:
        deprecations.setLevel(level)
    if not callable(getattr(module, "masked_logits", None)):
        raise ValueError(
            f"RLlib checkpoint {str(directory)!r} holds a {type(module).__name__}, "
            "not the example's MaskedPolicyModule (no masked_logits)"
        )
    check_weights(dict(module.state_dict()), f"RLlib checkpoint {str(directory)!r}")
    module.eval()
    return module


class RLlibAgent(SavedPolicyAgent):
    """Plays the RLlib example's trained masked policy."""

    def load(self, path: str) -> Path:
        self.module = load_masked_module(path)
        from agents.learned.rllib_models import LEARNER

        # Written beside the module by the example's --save (none: any variant).
        return module_dir(path, LEARNER)

    def legal_probabilities(self, state: State) -> np.ndarray:
        mask = state.legal_mask()
        logits = self.module.masked_logits({"observation": encode(state), "action_mask": mask})
        return np.exp(logits - logits.max()) * (mask > 0)

    def batch_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self.module.masked_logits_batch(
            {"observation": observations, "action_mask": masks}
        )
        return np.exp(logits - logits.max(axis=1, keepdims=True)) * (np.asarray(masks) > 0)
