"""The small convolutional trunk the RL-library examples (SB3, RLlib) share.

Two 3x3 convolutions and a 1x1 squeeze over the (channel-first) observation
planes, then one dense layer: a few hundred thousand weights, so a policy
trains fast on a CPU and saves to a few MB (a flattened 2,142-wide MLP was 34 MB).
"""

from __future__ import annotations

from torch import nn

from yinsh_env.envs.observation import GRID, N_PLANES


def conv_trunk(
    channels: int, features: int, planes: int = N_PLANES, cells: int = GRID * GRID
) -> nn.Sequential:
    """(B, planes, 11, 11) -> (B, features)."""
    return nn.Sequential(
        nn.Conv2d(planes, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels, 8, 1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(8 * cells, features),
        nn.ReLU(),
    )
