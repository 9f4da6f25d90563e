"""What a network player needs of a training config: the network's shape and its search.

A checkpoint holds its run's whole config (:mod:`train.config`, which builds
on these sections); a player reads only :class:`NetworkConfig` (to build the
network), :class:`SearchConfig` (to search with it) and the variant it was
trained for (:class:`PlayConfig`), so playing a checkpoint needs nothing of the
trainer.  The sections are pydantic dataclasses with the trainer's field types
(strict integers and booleans, finite numbers), so a value out of range is
refused wherever a config is read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic import dataclasses as pydantic_dataclasses

from agents.params import MAX_SIMS
from yinsh_env.util.numeric_text import parse_float


def _number(value: object) -> object:
    """Numbers stay numbers; YAML reads ``1e-3`` (no dot) as a string, so numeric
    strings become floats, read as strictly as any user's number
    (:func:`yinsh_env.util.numeric_text.parse_float`: no ``1_0.5``); booleans are
    refused (``True == 1`` in Python)."""
    if isinstance(value, bool):
        raise ValueError("must be a number")
    if isinstance(value, str):
        try:
            return parse_float(value)
        except ValueError:
            raise ValueError("must be a number") from None
    return value


# Field types: integers and booleans are strict (no 2.0, no "yes"); numbers are
# finite (no nan, no inf).
#: An integer (no 2.0, no "3").
Int = Annotated[int, Field(strict=True)]
#: An integer above 0.
PositiveInt = Annotated[int, Field(strict=True, gt=0)]
#: An integer, 0 or more.
NonNegativeInt = Annotated[int, Field(strict=True, ge=0)]
#: Simulations of a search: 1..:data:`~agents.params.MAX_SIMS`, as any agent spec.
Simulations = Annotated[int, Field(strict=True, ge=1, le=MAX_SIMS)]
#: A network's depth in residual blocks.
Depth = Annotated[int, Field(strict=True, ge=1, le=256)]
#: A network's size: far above any useful one, below what no machine holds.
Width = Annotated[int, Field(strict=True, ge=1, le=4096)]
#: ``true`` or ``false`` (no "yes", no 1).
Bool = Annotated[bool, Field(strict=True)]
#: A finite number (YAML's ``1e-3`` too; no booleans).
Number = Annotated[float, BeforeValidator(_number), Field(allow_inf_nan=False)]
#: A finite number above 0.
PositiveNumber = Annotated[Number, Field(gt=0)]
#: A finite number, 0 or more.
NonNegativeNumber = Annotated[Number, Field(ge=0)]
#: A number from 0 to 1.
UnitInterval = Annotated[Number, Field(ge=0, le=1)]

#: Every section is a pydantic dataclass that refuses unknown keys.
SECTION_SCHEMA = ConfigDict(extra="forbid")


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class NetworkConfig:
    """The residual tower; see :mod:`agents.network.network`."""

    blocks: Depth = 6
    channels: Width = 64
    #: Hidden units of the value (and auxiliary margin) head.
    value_hidden: Width = 64
    #: An auxiliary head predicting the opponent's next action (KataGo), trained
    #: with ``optim.opponent_policy_weight``; unused in play.
    opponent_policy: Bool = False


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class SearchConfig:
    """The tree search used by self-play and by the network agent."""

    #: ``gumbel``: Gumbel root selection with sequential halving (strong with few
    #: simulations); ``puct``: AlphaZero's PUCT with Dirichlet root noise.
    algorithm: Literal["gumbel", "puct"] = "gumbel"
    #: Simulations of a full search (the moves that become policy targets).
    simulations: Simulations = 64
    c_puct: NonNegativeNumber = 1.5
    #: First-play urgency: an unvisited child is valued at the parent's mean
    #: value minus this (PUCT only).
    fpu_reduction: Number = 0.2
    dirichlet_alpha: NonNegativeNumber = 0.25
    dirichlet_fraction: UnitInterval = 0.25
    #: KataGo's forced playouts with policy-target pruning, k (2 in KataGo; 0
    #: disables): PUCT only; Gumbel's sequential halving and improved-policy
    #: target already do their job (:class:`agents.search.rules.PUCT`).
    forced_playouts: NonNegativeNumber = 0.0
    #: Actions sampled at the root by Gumbel-top-k (Gumbel only).
    gumbel_considered: PositiveInt = 16
    #: sigma(q) = (c_visit + max visits) * c_scale * q01, as in Gumbel MuZero
    #: (c_visit 50, c_scale 1): with q01 = (q + 1) / 2, a value gap of 0.4 (a
    #: row made) weighs about 10 logits in the policy target.
    gumbel_c_visit: Number = 50.0
    gumbel_c_scale: Number = 1.0
    #: Map Q to [0, 1] by its min and max over the edges (mctx) instead of its
    #: fixed range [-1, 1]; min-max turns an untrained value head's noise into
    #: confident policy targets, which slows early learning.
    gumbel_rescale_q: Bool = False
    #: Keep the chosen child's subtree for the next move.
    reuse_tree: Bool = True


@pydantic_dataclasses.dataclass(config=ConfigDict(extra="ignore"))
class _Variant:
    """The one self-play setting a player needs: the rings a win takes."""

    rings_to_win: Annotated[int, Field(strict=True, ge=1, le=5)] = 3


@pydantic_dataclasses.dataclass(config=ConfigDict(extra="ignore"))
class PlayConfig:
    """The sections of a run's config that a player reads (the others are ignored)."""

    network: NetworkConfig = Field(default_factory=NetworkConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    selfplay: _Variant = Field(default_factory=_Variant)

    @property
    def rings_to_win(self) -> int:
        """The variant the network was trained for."""
        return self.selfplay.rings_to_win


_PLAY: TypeAdapter[PlayConfig] = TypeAdapter(PlayConfig)


def play_config(data: Any) -> PlayConfig:
    """The player's sections of a saved config (a mapping); ValueError naming the key."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a mapping of sections, got {type(data).__name__}")
    try:
        return _PLAY.validate_python(data)
    except ValidationError as err:
        error = err.errors()[0]
        key = ".".join(str(part) for part in error["loc"])
        raise ValueError(f"{key}: {error['msg']}") from None
