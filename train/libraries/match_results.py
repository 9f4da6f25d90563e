"""A trained policy's results against an opponent: the closing line of a library run.

The SB3 and RLlib examples (:mod:`train.libraries.sb3_maskable_ppo`,
:mod:`train.libraries.rllib_example`) end by playing the trained policy against
a fixed opponent, every move checked legal; :class:`Evaluation` counts the
games and writes the line.  Neither library is needed to import it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.evaluation.elo import Tally


@dataclass
class Evaluation(Tally):
    """Results of the trained policy against the opponent."""

    moves: int = 0  # learner decisions, every one checked legal

    def add_reward(self, reward: float) -> None:
        """Count a game that ended with the policy's ``reward`` (+1 won, 0 drawn, -1 lost)."""
        self.add(0.5 + 0.5 * reward)

    def summary(self, opponent: str) -> str:
        """The closing line of a run: the results against ``opponent`` and the moves checked."""
        return (
            f"vs {opponent}: {self.wins} wins, {self.draws} draws, {self.losses} losses "
            f"in {self.games} games (score {self.score:.2f}); {self.moves} legal moves"
        )


__all__ = ["Evaluation"]
