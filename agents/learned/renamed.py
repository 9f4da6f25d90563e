"""Saved models that name their classes by the module paths of before the layout change.

An SB3 zip or an RLlib checkpoint pickles its network classes by module path
(``train.sb3_maskable_ppo.PlanesCNN``, later ``agents.libraries.sb3_models``);
those classes now live in :mod:`agents.learned`.  While a loader unpickles, :func:`old_module_names`
lets each old path resolve to the module that holds its classes now, so
files saved before the move keep loading; no module stays at the old path.
(Network checkpoints, ``.pt``, hold only tensors and plain values: no path.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Final

#: Old module path -> the module holding its pickled classes now (SB3 zips).
SB3_RENAMED: Final = {
    "train.sb3_maskable_ppo": "agents.learned.sb3_models",
    "train.sb3_warmstart": "agents.learned.sb3_models",
    "train.small_cnn": "agents.learned.small_cnn",
    "agents.libraries.sb3_models": "agents.learned.sb3_models",
    "agents.libraries.sb3_masking": "agents.learned.sb3_masking",
    "agents.libraries.small_cnn": "agents.learned.small_cnn",
}
#: Old module path -> the module holding its pickled classes now (RLlib checkpoints).
RLLIB_RENAMED: Final = {
    "train.rllib_example": "agents.learned.rllib_models",
    "train.small_cnn": "agents.learned.small_cnn",
    "agents.libraries.rllib_models": "agents.learned.rllib_models",
    "agents.libraries.small_cnn": "agents.learned.small_cnn",
}


@contextmanager
def old_module_names(renamed: Mapping[str, str]) -> Iterator[None]:
    """While inside: each old module path in ``renamed`` imports as its new module.

    Only paths no loaded module holds are added, and they are removed on leaving.
    """
    added = []
    for old, new in renamed.items():
        if old not in sys.modules:
            sys.modules[old] = importlib.import_module(new)
            added.append(old)
    try:
        yield
    finally:
        for old in added:
            sys.modules.pop(old, None)
