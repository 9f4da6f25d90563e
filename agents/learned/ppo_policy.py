"""The single-file PPO's network, its saved-policy file, and batched play.

:class:`PPOPolicy` is the actor-critic that :mod:`train.libraries.ppo`
trains: a small residual CNN over the observation planes with the project
network's convolutional policy head (few weights, every board region alike)
and a value head over the pooled features.
It lives here, not beside the trainer, because the ``ppo:`` agent plays it
and nothing in ``agents`` imports ``train``.

Masked play: illegal actions get the logit :data:`ILLEGAL_LOGIT`, so their
probability is exactly zero in float32 (``exp(-1e9 - max)`` underflows) while
the softmax of a row stays finite; every row of a legal mask has at least one
legal action.

A saved policy is a ``torch.save`` of plain values and tensors only
(``format``, ``version``, ``channels``, ``blocks``, ``rings_to_win``,
``state_dict``), read back with ``weights_only=True``.  The TorchRL recipe
(:mod:`train.libraries.torchrl_ppo`) trains this network too and saves it the
same way under its own ``format`` (:class:`PolicyFiles`), so each agent knows
whose file it is given and playing needs no TorchRL.
"""

from __future__ import annotations

import pickle
import warnings
import zipfile
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents.network.checkpoint import check_weights, load_failure
from agents.network.network import POLICY_PLANES, raw_gather
from yinsh_env.engine.geometry import N_POINTS
from yinsh_env.envs.observation import BOARD_PLANE, GRID, N_PLANES
from yinsh_env.util.atomic_write import write_atomic

__all__ = [
    "FORMAT",
    "ILLEGAL_LOGIT",
    "PPO_FILES",
    "PPOPolicy",
    "PolicyFiles",
    "PolicyOpponent",
    "load_policy",
    "masked_logits",
    "save_policy",
]

FORMAT: Final = "yinsh-ppo-policy"
VERSION: Final = 1


class PolicyFiles(NamedTuple):
    """Whose saved policies: the files' ``format`` tag, the module that trains them,
    the agent spec's name that plays them, and what messages call them."""

    format: str
    trainer: str
    agent: str
    label: str


#: The single-file PPO's policies (``ppo:path=FILE``).
PPO_FILES: Final = PolicyFiles(FORMAT, "train.libraries.ppo", "ppo", "PPO policy")

#: The logit an illegal action gets: far below any real logit, still finite.
ILLEGAL_LOGIT: Final = -1e9


def masked_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action where ``masks`` is 0 set to :data:`ILLEGAL_LOGIT`."""
    return torch.where(masks.bool(), logits, torch.full_like(logits, ILLEGAL_LOGIT))


class _Block(nn.Module):
    """Two 3x3 convolutions and a skip connection (no batch norm: PPO's rollouts and
    updates then see the same function)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.conv2(F.relu(self.conv1(x))))


class PPOPolicy(nn.Module):
    """Actor-critic over the observation planes: (B, 11, 11, 17) -> logits, value.

    A convolutional stem and ``blocks`` residual blocks of ``channels``; the
    policy head is the project network's fully convolutional one (each
    action's logit read from policy planes at its board points,
    :func:`agents.network.network.policy_gather`), the pass logit and the
    value come from the features' mean and max over the board.
    """

    gather_primary: torch.Tensor
    gather_secondary: torch.Tensor
    board: torch.Tensor

    def __init__(self, channels: int = 32, blocks: int = 2) -> None:
        super().__init__()
        if channels < 1 or blocks < 0:
            raise ValueError(f"channels >= 1 and blocks >= 0, got {channels}, {blocks}")
        self.channels, self.blocks = int(channels), int(blocks)
        c = self.channels
        self.stem = nn.Sequential(nn.Conv2d(N_PLANES, c, 3, padding=1), nn.ReLU())
        self.tower = nn.Sequential(*(_Block(c) for _ in range(self.blocks)))
        self.policy_planes = nn.Conv2d(c, POLICY_PLANES, 1)
        self.pass_logit = nn.Linear(2 * c, 1)
        self.value = nn.Sequential(nn.Linear(2 * c, 64), nn.ReLU(), nn.Linear(64, 1))
        nn.init.normal_(self.policy_planes.weight, std=0.01)  # a near-uniform start
        nn.init.zeros_(self.policy_planes.bias)  # type: ignore[arg-type]
        primary, secondary = raw_gather()
        self.register_buffer("gather_primary", torch.from_numpy(primary.copy()), persistent=False)
        self.register_buffer(
            "gather_secondary", torch.from_numpy(secondary.copy()), persistent=False
        )
        board = torch.from_numpy(np.array(BOARD_PLANE)).view(1, 1, GRID, GRID)
        self.register_buffer("board", board, persistent=False)

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw logits (B, 2142) and values (B,) of channel-last planes."""
        x = self.tower(self.stem(planes.permute(0, 3, 1, 2)))
        mean = (x * self.board).sum(dim=(2, 3)) / float(N_POINTS)
        peak = (x + (self.board - 1.0) * 1e4).amax(dim=(2, 3))
        pooled = torch.cat([mean, peak], dim=1)
        flat = F.pad(self.policy_planes(x).flatten(1), (0, 1))
        raw = torch.cat([flat, self.pass_logit(pooled)], dim=1)
        logits = raw[:, self.gather_primary] + raw[:, self.gather_secondary]
        return logits, self.value(pooled).squeeze(-1)

    @torch.no_grad()
    def choose(
        self, planes: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None
    ) -> np.ndarray:
        """(n,) legal actions: sampled with ``rng`` (Gumbel-max), or the most likely if None."""
        logits, _ = self(torch.as_tensor(planes, dtype=torch.float32))
        scores = masked_logits(logits, torch.as_tensor(masks)).numpy().astype(np.float64)
        if rng is not None:
            scores = scores + rng.gumbel(size=scores.shape)
        return np.asarray(scores.argmax(axis=1), dtype=np.int64)


class PolicyOpponent:
    """A frozen policy as a batch opponent (``act_batch``): samples from its masked policy.

    ``load_state_dict`` refreshes it in place, so a snapshot slot keeps one
    identity in a vector environment however often its weights change.
    """

    observes = True

    def __init__(self, policy: PPOPolicy, name: str = "snapshot", sample: bool = True) -> None:
        self.policy = policy.eval()
        self.name = name
        self.sample = sample

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.policy.load_state_dict(state)

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        if observations is None:
            raise ValueError("a policy opponent needs the observations")
        return self.policy.choose(observations, masks, rng if self.sample else None)

    def __repr__(self) -> str:
        return f"PolicyOpponent({self.name!r})"


def save_policy(
    path: str | Path, policy: PPOPolicy, rings_to_win: int, files: PolicyFiles = PPO_FILES
) -> None:
    """Write ``policy`` to ``path`` (atomically) as the ``files.agent`` agent reads it."""
    data: dict[str, Any] = {
        "format": files.format,
        "version": VERSION,
        "channels": policy.channels,
        "blocks": policy.blocks,
        "rings_to_win": int(rings_to_win),
        "state_dict": {k: v.detach().clone() for k, v in policy.state_dict().items()},
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda tmp: torch.save(data, tmp))


def load_policy(path: str | Path, files: PolicyFiles = PPO_FILES) -> tuple[PPOPolicy, int]:
    """(the policy, its rings_to_win) saved at ``path`` by ``files.trainer``; ValueError
    naming the file otherwise."""
    file, label = Path(path), files.label
    if not file.is_file():
        problem = "is not a regular file" if file.exists() else "not found"
        raise ValueError(f"{label} {str(path)!r} {problem}")
    if not zipfile.is_zipfile(file):
        raise ValueError(f"{label} {str(file)!r} is not a PyTorch file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = torch.load(file, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, OSError, EOFError) as exc:
        raise ValueError(f"cannot load {label} {str(file)!r}: {load_failure(exc)}") from None
    if not isinstance(data, dict) or data.get("format") != files.format:
        raise ValueError(f"{str(file)!r} is not a policy saved by {files.trainer}")
    if data.get("version") != VERSION:
        raise ValueError(f"{label} {str(file)!r}: version {data.get('version')!r}, not {VERSION}")
    sizes = (data.get("channels"), data.get("blocks"), data.get("rings_to_win"))
    if not all(type(v) is int and 0 <= v <= 4096 for v in sizes) or not 1 <= sizes[2] <= 5:  # type: ignore[operator]
        raise ValueError(f"{label} {str(file)!r}: bad sizes {sizes}")
    state = data.get("state_dict")
    check_weights(state, f"{label} {str(file)!r}")
    assert isinstance(state, dict)  # check_weights refuses anything else
    policy = PPOPolicy(int(sizes[0]), int(sizes[1]))  # type: ignore[arg-type]
    try:
        policy.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"{label} {str(file)!r} does not fit its network: {exc}") from None
    return policy.eval(), int(sizes[2])  # type: ignore[arg-type]
