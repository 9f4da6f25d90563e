"""Many YINSH games stepped at once: a batched engine and vector environments.

* :mod:`.tables`: geometric tables (rays, segments, move paths), built at import;
* :mod:`.state`: :class:`BatchState`, N games as arrays with a batch axis;
* :mod:`.legal`, :mod:`.step`: the rules over a batch (legal masks, one decision);
* :mod:`.observe`: the scalar environment's observation planes, for a batch.

The encodings (actions, observation planes, masks) are the scalar engine's
and environment's; the differential tests hold the two to the same games ply
by ply.
"""

from __future__ import annotations

from .state import BatchState, from_states, new_batch, reset_games, to_state
from .step import apply, outcome

__all__ = ["BatchState", "apply", "from_states", "new_batch", "outcome", "reset_games", "to_state"]
