"""Dense rewards as an option: potential-based shaping from rings removed.

Ng, Harada and Russell (1999): adding ``F = gamma * phi(s') - phi(s)`` to
every reward leaves the optimal policy unchanged.  Here ``phi`` is
``weight * (own rings removed - opponent's) / rings_to_win`` from the
learner's side, taken at the learner's decision points, and zero once the
game is over; it is zero at the start too (no ring removed), so over a
finished game the shaping terms' ``gamma``-discounted sum is exactly zero and
the discounted return equals the unshaped one (with ``gamma = 1`` the plain
sums are equal).  Never the default: ``weight = 0`` turns it off.

:class:`ShapedReward` adds the same shaping to the scalar Gymnasium
environment (``Yinsh-v0``) as a wrapper; the vector environment takes
``dense_reward=`` and ``gamma=`` itself.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium
import numpy as np

from yinsh_env.engine.errors import bounded_repr

__all__ = ["MAX_WEIGHT", "ShapedReward", "check_shaping", "ring_potential"]

#: The largest shaping weight the environments (and the PPO command line) take: the
#: potential then moves by at most 10 per ring, which shapes the +-1 result without
#: swamping it, and no weight can overflow a float (1e308 gave NaN rewards).
MAX_WEIGHT = 10.0

_REAL = (int, float, np.integer, np.floating)


def _real(name: str, value: object) -> float:
    """``value`` as a float if it is a real number (a bool is not), else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, _REAL):
        raise ValueError(f"{name} must be a number, got {bounded_repr(value)}")
    try:
        return float(value)
    except OverflowError:  # an int beyond any float
        raise ValueError(f"{name} must be a finite number, got {bounded_repr(value)}") from None


def check_shaping(weight: float, gamma: float) -> tuple[float, float]:
    """``(weight, gamma)`` as floats; ValueError naming the bad one."""
    weight = _real("dense_reward", weight)
    if not 0.0 <= weight <= MAX_WEIGHT:  # NaN fails too
        raise ValueError(f"dense_reward must be a number in [0, {MAX_WEIGHT:g}], got {weight!r}")
    gamma = _real("gamma", gamma)
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    return weight, gamma


def ring_potential(
    own: np.ndarray, opp: np.ndarray, rings_to_win: int, weight: float
) -> np.ndarray:
    """``phi``: ``weight * (own - opp) / rings_to_win`` (arrays of rings removed)."""
    return np.asarray(weight * (own - opp) / rings_to_win, dtype=np.float64)


class ShapedReward(gymnasium.Wrapper[Any, Any, Any, Any]):
    """``Yinsh-v0`` with potential-based shaping added to its reward (module docstring).

    Wraps a :class:`~yinsh_env.envs.gym_env.YinshGymEnv` (or a wrapper of one);
    ``info["shaping"]`` holds the term added at each step.
    """

    def __init__(self, env: gymnasium.Env[Any, Any], weight: float = 0.1, gamma: float = 0.99):
        super().__init__(env)
        self.weight, self.gamma = check_shaping(weight, gamma)
        self._phi = 0.0

    def _potential(self) -> float:
        base = self.env.unwrapped
        game = base.game  # type: ignore[attr-defined]
        if game.is_terminal:
            return 0.0
        me = 0 if base.learner == "player_0" else 1  # type: ignore[attr-defined]
        removed = np.array(game.removed)
        return float(ring_potential(removed[me], removed[1 - me], game.rings_to_win, self.weight))

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self._phi = self._potential()
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated or truncated else self._potential()
        shaping = self.gamma * phi - self._phi
        self._phi = phi
        info["shaping"] = shaping
        return observation, float(reward) + shaping, terminated, truncated, info
