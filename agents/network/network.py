"""The policy-value network: a residual tower over the observation planes.

Input: :func:`yinsh_env.envs.observation.encode` planes, (11, 11, 17) channel-last,
permuted to (17, 11, 11).  Output: policy logits over the 2,142 flat actions,
a value in [-1, 1] for the player to act, and auxiliary predictions that
give the tower denser targets than the game result alone (KataGo's idea): the
final rings-removed margin, the final owner of each point's marker and, with
``network.opponent_policy``, the opponent's next action (a second set of policy
planes on the same policy features, over all actions: the opponent's legal
ones are not known yet).

The policy head is fully convolutional, like AlphaZero's chess head: each
action reads its logit from a plane at a board point, so the head has few
weights and treats every region of the board alike.

=================  ==========================================================
actions            logit
=================  ==========================================================
place on p         plane ``place`` at p
move a -> b        plane ``from[direction, distance]`` at a + ``to[direction]`` at b
remove row         plane ``row[direction]`` at the row's lower end point
remove ring at p   plane ``ring`` at p
pass               a linear unit over the pooled tower
=================  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from agents.network.play_config import NetworkConfig

# Re-exported: the policy's layout is defined without torch (ONNX inference reads it too).
from agents.network.policy_map import POLICY_PLANES as POLICY_PLANES
from agents.network.policy_map import policy_gather
from agents.network.policy_map import raw_gather as raw_gather
from yinsh_env.engine.actions import N_ACTIONS, PASS_ACTION
from yinsh_env.engine.geometry import N_POINTS
from yinsh_env.envs.observation import BOARD_PLANE, GRID, N_PLANES


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a skip connection: one block of the tower."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: Tensor) -> Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


@dataclass
class NetOutput:
    """Network predictions for a batch, all from the player to act's view."""

    #: (B, 2142) logits; illegal actions are -inf when a mask was given.
    policy: Tensor
    #: (B,) expected result in [-1, 1].
    value: Tensor
    #: (B,) final (own - opponent's) rings removed / rings to win, in [-1, 1].
    margin: Tensor
    #: (B, 11, 11) final marker owner per point: +1 own, -1 opponent's, 0 none.
    ownership: Tensor
    #: (B, 2142) logits of the opponent's next action (``network.opponent_policy``).
    opponent_policy: Tensor | None = None


class PolicyValueNet(nn.Module):
    """Residual CNN with a convolutional policy head and pooled value heads."""

    gather_primary: Tensor
    gather_secondary: Tensor
    #: (1, 1, 11, 11) mask of the board's points.
    board: Tensor

    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.config = config
        c = config.channels
        self.stem = nn.Sequential(
            nn.Conv2d(N_PLANES, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()
        )
        self.tower = nn.Sequential(*(ResidualBlock(c) for _ in range(config.blocks)))
        self.policy_conv = nn.Sequential(
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()
        )
        self.policy_planes = nn.Conv2d(c, POLICY_PLANES, 1)
        self.pass_logit = nn.Linear(2 * c, 1)
        self.value_fc = nn.Sequential(nn.Linear(2 * c, config.value_hidden), nn.ReLU())
        self.value_out = nn.Linear(config.value_hidden, 1)
        self.margin_out = nn.Linear(config.value_hidden, 1)
        self.ownership_out = nn.Conv2d(c, 1, 1)
        if config.opponent_policy:
            self.opponent_planes = nn.Conv2d(c, POLICY_PLANES, 1)
            self.opponent_pass = nn.Linear(2 * c, 1)
        primary, secondary = policy_gather()
        self.register_buffer("gather_primary", torch.from_numpy(primary), persistent=False)
        self.register_buffer("gather_secondary", torch.from_numpy(secondary), persistent=False)
        board = torch.from_numpy(np.array(BOARD_PLANE)).view(1, 1, GRID, GRID)
        self.register_buffer("board", board, persistent=False)

    def forward(self, planes: Tensor, mask: Tensor | None = None) -> NetOutput:
        """``planes``: (B, 11, 11, 17) as encoded; ``mask``: (B, 2142) bool, True = legal."""
        x, pooled, features = self._trunk(planes)
        logits = self._logits(self.policy_planes(features), self.pass_logit(pooled))
        if mask is not None:
            logits = logits.masked_fill(~mask, float("-inf"))
        opponent = None
        if self.config.opponent_policy:
            opponent = self._logits(self.opponent_planes(features), self.opponent_pass(pooled))
        hidden = self.value_fc(pooled)
        return NetOutput(
            policy=logits,
            value=torch.tanh(self.value_out(hidden)).squeeze(1),
            margin=torch.tanh(self.margin_out(hidden)).squeeze(1),
            ownership=torch.tanh(self.ownership_out(x)).squeeze(1),
            opponent_policy=opponent,
        )

    def _logits(self, planes: Tensor, pass_logit: Tensor) -> Tensor:
        """The 2,142 action logits read from policy planes (see the module docstring)."""
        flat = F.pad(planes.flatten(1), (0, 1))  # the padding zero that non-move actions add
        board_logits = flat[:, self.gather_primary] + flat[:, self.gather_secondary]
        return torch.cat([board_logits, pass_logit], dim=1)

    def raw_policy_value(self, planes: Tensor) -> tuple[Tensor, Tensor]:
        """The policy before its gather, and the value: what ONNX inference exports.

        ``raw[:, :-1]`` are the flattened policy planes and the padding zero,
        ``raw[:, -1]`` the pass logit; action ``a``'s logit is
        ``raw[:, primary[a]] + raw[:, secondary[a]]`` with :func:`raw_gather`'s
        indices: the same sum :meth:`forward` makes.  Gathering only a leaf's
        legal actions outside the graph spares the graph two gathers over all
        2,142 actions per position.
        """
        _, pooled, features = self._trunk(planes)
        flat = F.pad(self.policy_planes(features).flatten(1), (0, 1))  # as in _logits
        raw = torch.cat([flat, self.pass_logit(pooled)], dim=1)
        return raw, torch.tanh(self.value_out(self.value_fc(pooled))).squeeze(1)

    def _trunk(self, planes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The tower's output, its pooled summary, and the policy head's features."""
        x = self.tower(self.stem(planes.permute(0, 3, 1, 2)))
        return x, self._pool(x), self.policy_conv(x)

    def _pool(self, x: Tensor) -> Tensor:
        """Mean and max of the tower's features over the 85 board points."""
        board = self.board.to(x.dtype)
        mean = (x * board).sum(dim=(2, 3)) / float(N_POINTS)
        peak = (x + (board - 1.0) * 1e4).amax(dim=(2, 3))
        return torch.cat([mean, peak], dim=1)


assert N_ACTIONS == PASS_ACTION + 1


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
