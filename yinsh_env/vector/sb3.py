"""Stable-Baselines3's ``VecEnv`` over :class:`~.env.YinshVectorEnv`: no process or copy per game.

``MaskablePPO`` (sb3-contrib) reads masks with ``env_method("action_masks")``
on a ``VecEnv``; here that returns the games' current masks, which after an
autoreset are the new games' masks, as the algorithm needs::

    from sb3_contrib import MaskablePPO
    from yinsh_env.vector.sb3 import YinshSB3VecEnv

    env = YinshSB3VecEnv(num_envs=64, opponent=None)  # YinshVectorEnv's arguments
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64).learn(100_000)

Finished games follow SB3's convention: ``done`` is True, the observation is
the next game's, and ``infos[i]["terminal_observation"]`` is the finished
game's last one (with ``result``, ``end_reason``, ``learner`` beside it).
Observations, rewards, dones, infos and masks are new arrays on every call
(the vector environment's), the caller's to edit or keep.
This module imports ``stable_baselines3``; nothing else in
:mod:`yinsh_env` imports this module, so the engine does not need SB3.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from yinsh_env.vector.env import YinshVectorEnv

__all__ = ["YinshSB3VecEnv"]


class YinshSB3VecEnv(VecEnv):
    """SB3's vector interface over a :class:`YinshVectorEnv` (given, or built from ``kwargs``)."""

    def __init__(self, env: YinshVectorEnv | None = None, **kwargs: Any) -> None:
        self.env = env if env is not None else YinshVectorEnv(**kwargs)
        if env is not None and kwargs:
            raise ValueError(f"give either env or YinshVectorEnv's arguments, not both: {kwargs}")
        if self.env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError(
                f"SB3 resets a finished game inside the step: autoreset_mode "
                f"{self.env.autoreset_mode} is not AutoresetMode.SAME_STEP"
            )
        super().__init__(
            self.env.num_envs, self.env.single_observation_space, self.env.single_action_space
        )
        self._actions: np.ndarray | None = None

    def reset(self) -> VecEnvObs:
        seed = self._seeds[0]
        observations, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        observations, rewards, terminated, truncated, info = self.env.step(actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        final = info.get("final_info", {})
        # Gymnasium's flag beside each key (``_key``) says which games hold it (none: all).
        present = {k: final.get(f"_{k}") for k in final if not k.startswith("_")}
        for i in np.flatnonzero(dones):
            infos[i] = {
                key: final[key][i] for key, flags in present.items() if flags is None or flags[i]
            }
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return observations, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, 2142) bool: each game's legal actions (MaskablePPO's masks)."""
        return self.env.action_masks().astype(np.bool_)

    def close(self) -> None:
        self.env.close()

    # --- SB3's per-environment attribute and method access ----------------------------

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "action_masks":
            return [self.action_masks] * len(list(self._get_indices(indices)))
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        chosen: Iterable[int] = self._get_indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in chosen]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in chosen]

    def env_is_wrapped(
        self,
        wrapper_class: type[gymnasium.Wrapper[Any, Any, Any, Any]],
        indices: VecEnvIndices = None,
    ) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
