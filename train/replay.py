"""The replay window: recent self-play games, sampled into augmented training batches.

Positions are stored compactly (about 330 bytes each): every observation
plane holds a single non-zero value (pieces are 1, counters are constant
planes), so a position is the bit mask of its non-zero cells plus one value
per plane (:func:`pack_planes`).  Policy targets are sparse, over the legal
actions.  A sampled batch is unpacked with a few vectorised numpy calls and
augmented with one of the board's 12 symmetries per sample: the planes go
through :func:`yinsh_env.envs.observation.transform_planes` and the policy target
and legal mask through :data:`yinsh_env.engine.actions.ACTION_SYMMETRIES`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields
from typing import Any, Final

import numpy as np
import torch

from yinsh_env.engine.actions import ACTION_SYMMETRIES, N_ACTIONS
from yinsh_env.engine.geometry import N_SYMMETRIES
from yinsh_env.envs.observation import GRID, N_PLANES, OBS_SHAPE, transform_planes

_N_VALUES: Final = GRID * GRID * N_PLANES
_N_BYTES: Final = (_N_VALUES + 7) // 8
#: ACTION_PERMUTATIONS[k, a]: the image of action a under symmetry k.
ACTION_PERMUTATIONS: Final = np.asarray(ACTION_SYMMETRIES, dtype=np.int64)


def pack_planes(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planes (..., 11, 11, 17) as (bit mask of non-zero cells, value per plane).

    Raises ValueError if a plane holds two different non-zero values, which
    would make the packing lossy (the observation layout guarantees it never
    does).
    """
    planes = np.asarray(planes, dtype=np.float32)
    lead = planes.shape[:-3]
    flat = planes.reshape(-1, GRID * GRID, N_PLANES)
    nonzero = flat != 0
    values = np.abs(flat).max(axis=1)
    values = np.where(flat.min(axis=1) < 0, -values, values).astype(np.float32)
    if not np.array_equal(np.where(nonzero, values[:, None, :], 0.0), flat):
        raise ValueError("planes hold several non-zero values in one plane: cannot pack them")
    bits = np.packbits(nonzero.reshape(len(flat), _N_VALUES), axis=1)
    return bits.reshape(*lead, _N_BYTES), values.reshape(*lead, N_PLANES)


def unpack_planes(bits: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_planes` for a batch: (B, 11, 11, 17) float32."""
    mask = np.unpackbits(bits, axis=1, count=_N_VALUES).reshape(len(bits), GRID * GRID, N_PLANES)
    return (mask * values[:, None, :]).reshape(len(bits), *OBS_SHAPE).astype(np.float32)


@dataclass
class GameSamples:
    """The training positions of one self-play game and what it ended with."""

    #: Packed planes of the recorded positions (see :func:`pack_planes`).
    bits: np.ndarray  # (P, 258) uint8
    plane_values: np.ndarray  # (P, 17) float32
    #: The player to act at each position.
    players: np.ndarray  # (P,) int8
    #: Sparse policy targets: position i's legal actions and probabilities are
    #: ``policy_actions[offsets[i]:offsets[i + 1]]`` and the same slice of probs.
    policy_actions: np.ndarray  # (L,) int16
    policy_probs: np.ndarray  # (L,) float32
    policy_offsets: np.ndarray  # (P + 1,) int64
    #: Final result (White's, Black's): +1 win, -1 loss, 0 draw.
    returns: np.ndarray  # (2,) float32
    #: Final (White's, Black's) rings removed and rings to win; the margin
    #: target is unknown (masked) for resigned games.
    removed: np.ndarray  # (2,) float32
    rings_to_win: int
    finished: bool
    #: Final markers: (2, 11, 11) planes of White's and Black's markers.
    final_markers: np.ndarray  # (2, 11, 11) int8
    #: The search's value of each position for its player to act (NaN where no
    #: search ran: forced moves); None for games recorded before it was kept.
    search_values: np.ndarray | None = None  # (P,) float32
    #: The other player's next action after each position (-1: the game ended
    #: first); None for games recorded before it was kept.
    opponent_actions: np.ndarray | None = None  # (P,) int16

    def __len__(self) -> int:
        return len(self.players)

    def to_dict(self) -> dict[str, Any]:
        """Tensors and plain values only (loadable with ``torch.load(weights_only=True)``)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = (
                torch.from_numpy(np.ascontiguousarray(value))
                if isinstance(value, np.ndarray)
                else value
            )
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameSamples:
        kwargs: dict[str, Any] = {
            k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in data.items()
        }
        return cls(**kwargs)


@dataclass
class Batch:
    """A training batch, every target from the player to act's view."""

    planes: np.ndarray  # (B, 11, 11, 17) float32
    legal: np.ndarray  # (B, 2142) bool
    policy: np.ndarray  # (B, 2142) float32, zero off the legal actions
    value: np.ndarray  # (B,) float32
    margin: np.ndarray  # (B,) float32
    margin_mask: np.ndarray  # (B,) float32: 1 where the margin is known
    ownership: np.ndarray  # (B, 11, 11) float32
    symmetries: np.ndarray  # (B,) int64: the symmetry applied to each sample
    #: The search's root value (0 where unknown) and 1 where it is known.
    search_value: np.ndarray  # (B,) float32
    search_value_mask: np.ndarray  # (B,) float32
    #: The opponent's next action under the sample's symmetry; -1 where unknown.
    opponent_action: np.ndarray  # (B,) int64


class ReplayBuffer:
    """The most recent ``window`` positions, whole games at a time."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.games: deque[GameSamples] = deque()
        self.positions = 0
        #: Games ever added (the window keeps the latest).
        self.games_added = 0
        self._ends: np.ndarray | None = None

    def __len__(self) -> int:
        return self.positions

    def add(self, game: GameSamples) -> None:
        if len(game) == 0:
            return
        self.games.append(game)
        self.positions += len(game)
        self.games_added += 1
        while self.positions - len(self.games[0]) >= self.window:
            self.positions -= len(self.games.popleft())
        self._ends = None

    def sample(self, batch_size: int, rng: np.random.Generator, symmetries: bool = True) -> Batch:
        """``batch_size`` positions drawn uniformly, each under a random symmetry."""
        if self.positions == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        if self._ends is None:
            self._ends = np.cumsum([len(g) for g in self.games])
        picks = rng.integers(0, self.positions, size=batch_size)
        game_index = np.searchsorted(self._ends, picks, side="right")
        starts = self._ends[game_index] - np.array([len(self.games[i]) for i in game_index])
        ks = (
            rng.integers(0, N_SYMMETRIES, size=batch_size)
            if symmetries
            else np.zeros(batch_size, np.int64)
        )
        return make_batch(
            [(self.games[g], int(p - s)) for g, p, s in zip(game_index, picks, starts)], ks
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "games_added": self.games_added,
            "games": [g.to_dict() for g in self.games],
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.games = deque(GameSamples.from_dict(g) for g in data["games"])
        self.positions = sum(len(g) for g in self.games)
        self.games_added = int(data["games_added"])
        self._ends = None


def make_batch(items: list[tuple[GameSamples, int]], symmetries: np.ndarray) -> Batch:
    """Unpack the positions ``(game, index)`` and apply ``symmetries[j]`` to item j."""
    n = len(items)
    bits = np.stack([g.bits[i] for g, i in items])
    values = np.stack([g.plane_values[i] for g, i in items])
    planes = unpack_planes(bits, values)
    players = np.array([g.players[i] for g, i in items], dtype=np.int64)
    policy = np.zeros((n, N_ACTIONS), dtype=np.float32)
    legal = np.zeros((n, N_ACTIONS), dtype=bool)
    value = np.empty(n, dtype=np.float32)
    margin = np.zeros(n, dtype=np.float32)
    margin_mask = np.zeros(n, dtype=np.float32)
    ownership = np.empty((n, GRID, GRID, 1), dtype=np.float32)
    searched = np.array(
        [np.nan if g.search_values is None else g.search_values[i] for g, i in items],
        dtype=np.float32,
    )
    known = ~np.isnan(searched)
    opponent = np.array(
        [-1 if g.opponent_actions is None else g.opponent_actions[i] for g, i in items],
        dtype=np.int64,
    )
    seen = opponent >= 0
    opponent[seen] = ACTION_PERMUTATIONS[np.asarray(symmetries)[seen], opponent[seen]]
    for j, (game, i) in enumerate(items):
        me = players[j]
        lo, hi = game.policy_offsets[i], game.policy_offsets[i + 1]
        actions = ACTION_PERMUTATIONS[symmetries[j], game.policy_actions[lo:hi]]
        policy[j, actions] = game.policy_probs[lo:hi]
        legal[j, actions] = True
        value[j] = game.returns[me]
        if game.finished:
            margin[j] = (game.removed[me] - game.removed[1 - me]) / game.rings_to_win
            margin_mask[j] = 1.0
        ownership[j, :, :, 0] = game.final_markers[me] - game.final_markers[1 - me]
    for k in np.unique(symmetries):
        if k:
            sel = symmetries == k
            planes[sel] = transform_planes(planes[sel], int(k))
            ownership[sel] = transform_planes(ownership[sel], int(k))
    return Batch(
        planes=planes,
        legal=legal,
        policy=policy,
        value=value,
        margin=margin,
        margin_mask=margin_mask,
        ownership=ownership[..., 0],
        symmetries=np.asarray(symmetries, dtype=np.int64),
        search_value=np.where(known, searched, 0.0).astype(np.float32),
        search_value_mask=known.astype(np.float32),
        opponent_action=opponent,
    )
