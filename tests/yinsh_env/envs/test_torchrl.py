"""TorchRL takes the three environments as they are, no glue.

``PettingZooWrapper(env(), use_mask=True)``, ``GymWrapper(gym.make("Yinsh-v0"))``
and ``GymWrapper`` over the vector environment pass TorchRL's
``check_env_specs`` and a rollout whose policy samples legal actions from the
masks TorchRL returns.  Skipped where TorchRL is not installed (the ``torchrl``
test extra).
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest

pytest.importorskip("torchrl", reason='optional test extra: pip install -e ".[torchrl]"')

import torch
from gymnasium.vector import AutoresetMode
from tensordict import TensorDictBase
from torchrl.envs import EnvBase, GymWrapper, PettingZooWrapper
from torchrl.envs.utils import check_env_specs

import yinsh_env.envs.gym_env  # noqa: F401 (registers Yinsh-v0)
from yinsh_env import N_ACTIONS, env
from yinsh_env.envs.env_base import AGENTS

pytestmark = pytest.mark.slow  # TorchRL's import and spec checks take seconds


def legal_indices(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One legal action per row of ``mask`` (uniform); 0 where a row has none."""
    rows = mask.reshape(-1, mask.shape[-1]).bool()
    weights = rows.float()
    weights[~rows.any(dim=1), 0] = 1.0  # a waiting agent's empty mask: its action is unused
    chosen = torch.multinomial(weights, 1, generator=generator)
    return chosen.reshape(mask.shape[:-1])


def one_hot_policy(seed: int):  # type: ignore[no-untyped-def]
    """A policy for GymWrapper: legal one-hot actions from ``td["action_mask"]``."""
    generator = torch.Generator().manual_seed(seed)

    def act(td: TensorDictBase) -> TensorDictBase:
        index = legal_indices(td["action_mask"], generator)
        td["action"] = torch.nn.functional.one_hot(index, N_ACTIONS).to(torch.int64)
        return td

    return act


def check_legal_rollout(rollout: TensorDictBase) -> None:
    """Every action legal under the mask it was chosen from; whole games played."""
    chosen = rollout["action"].argmax(-1, keepdim=True)
    assert rollout["action_mask"].bool().gather(-1, chosen).all()
    done = rollout["next", "done"]
    assert done.any(), "no game ended"
    rewards = rollout["next", "reward"]
    assert set(rewards[done].tolist()) <= {-1.0, 0.0, 1.0}
    assert (rewards[~done] == 0).all()


def test_gymnasium_env_in_gym_wrapper() -> None:
    wrapped = GymWrapper(gym.make("Yinsh-v0"))
    check_env_specs(wrapped)
    wrapped.set_seed(0)
    rollout = wrapped.rollout(150, policy=one_hot_policy(0), break_when_any_done=False)
    check_legal_rollout(rollout)


def make_vector(num_envs: int) -> EnvBase:
    return GymWrapper(
        gym.make_vec(
            "Yinsh-v0",
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=AutoresetMode.DISABLED,
        )
    )


def test_vector_env_in_gym_wrapper() -> None:
    wrapped = make_vector(3)
    assert wrapped.batch_size == torch.Size([3])
    check_env_specs(wrapped)
    wrapped.set_seed(1)
    rollout = wrapped.rollout(120, policy=one_hot_policy(1), break_when_any_done=False)
    check_legal_rollout(rollout)
    assert rollout["next", "done"].sum() >= 3  # games were reset by TorchRL and played on


def test_pettingzoo_env_in_pettingzoo_wrapper() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        wrapped = PettingZooWrapper(env(), use_mask=True)
    check_env_specs(wrapped)
    generator = torch.Generator().manual_seed(2)

    def act(td: TensorDictBase) -> TensorDictBase:
        for agent in AGENTS:
            td[agent, "action"] = legal_indices(td[agent, "action_mask"], generator)
        return td

    wrapped.set_seed(2)
    rollout = wrapped.rollout(400, policy=act, break_when_any_done=True)
    ended = rollout["next", "done"]
    assert ended[-1].all(), "the game did not end within the rollout"
    for agent in AGENTS:
        acting = rollout[agent, "mask"].squeeze(-1)
        mask = rollout[agent, "action_mask"][acting].bool()
        chosen = rollout[agent, "action"][acting].unsqueeze(-1)
        assert mask.gather(-1, chosen).all()  # the acting agent always chose a legal action
    rewards = [float(rollout["next", agent, "reward"][-1]) for agent in AGENTS]
    assert sorted(rewards) in ([-1.0, 1.0], [0.0, 0.0])
