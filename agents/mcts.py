"""MCTS baseline: UCT with random rollouts, backed up per player.

Each tree node remembers which player made the decision that led to it, and
its value is that player's own mean result.  Back-up adds every player's own
result to the nodes they chose, so nothing assumes that players alternate:
consecutive decisions by one player (a move, a row removal, a ring removal) and
the opponent's row removals after our move are all handled by the same rule.

Rewards are in [0, 1] (1 a win, 0.5 a draw).  A simulation's leaf is valued by
a uniformly random rollout on a copy of the position
(:meth:`~yinsh_env.State.apply_unchecked`).  Random play to the end of a YINSH
game says little (rows form by chance, most games end with the pool), so by
default the rollout stops after ``rollout_limit`` random decisions and is scored
by the hand-made evaluation's odds (:func:`agents.heuristics.evaluate`, one ring
up being about 3 to 1), and the leaf's value mixes that rollout result with the
evaluation of the leaf itself, weight ``eval_weight`` (the mixing AlphaGo used
for its value network and rollouts).  ``rollout_limit=0,eval_weight=0`` is
plain UCT with rollouts to the end of the game; measured at 400 simulations it
only ties the greedy agent, while the default beats it.

Random rollouts judge a won position and a merely good one alike (a player one
ring short of winning wins most random games either way), so the tree also
keeps proofs (an MCTS-Solver): a finished game is proven for its winner; a node
is proven for the player to act there as soon as one child is proven for them,
and for the other player once every child is.  Selection skips children proven
lost and the root plays a proven win at once.  Proofs name players rather than
assume alternation, so they too follow one player's consecutive decisions.
"""

from __future__ import annotations

import math
import time

from yinsh_env import WHITE, State

from .base import Agent
from .heuristics import RING_VALUE, evaluate

#: Evaluation units per logit when a cut-off rollout is scored.
_EVAL_SCALE = RING_VALUE


class Node:
    """A decision in the tree: its statistics, children and proof."""

    __slots__ = ("children", "player", "proven", "to_act", "untried", "visits", "wins")

    def __init__(self, player: int, to_act: int, untried: list[int], proven: int) -> None:
        #: The player who made the decision leading here (whose result ``wins`` sums).
        self.player = player
        #: The player to act here (-1 once the game is over).
        self.to_act = to_act
        self.untried = untried
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.wins = 0.0
        #: The player this node is a proven win for, or -1 (unproven).
        self.proven = proven

    def update_proof(self) -> bool:
        """Prove this node from its children if possible; True when it became proven."""
        if self.proven >= 0:
            return False
        me = self.to_act
        children = self.children.values()
        if any(child.proven == me for child in children):
            self.proven = me
            return True
        if not self.untried and all(child.proven == 1 - me for child in children):
            self.proven = 1 - me
            return True
        return False


class MCTSAgent(Agent):
    """UCT search: ``sims`` simulations per decision (or ``time`` seconds if given).

    ``c`` is the exploration constant of UCB1 on rewards in [0, 1];
    ``rollout_limit`` caps the random decisions per rollout (0: play to the
    end), a cut-off rollout being scored by the evaluation; ``eval_weight`` is
    the weight of the leaf's evaluation against the rollout's result (0: the
    rollout alone).
    """

    def __init__(
        self,
        seed: int | None = None,
        sims: int = 400,
        time: float = 0.0,
        c: float = 1.0,
        rollout_limit: int = 10,
        eval_weight: float = 0.5,
    ) -> None:
        super().__init__(seed)
        if sims < 1:
            raise ValueError(f"sims must be >= 1, got {sims}")
        if time < 0 or c < 0 or rollout_limit < 0:
            raise ValueError("time, c and rollout_limit must be >= 0")
        if not 0.0 <= eval_weight <= 1.0:
            raise ValueError(f"eval_weight must be in [0, 1], got {eval_weight}")
        self.eval_weight = eval_weight
        self.sims = sims
        self.time_budget = time
        self.c = c
        self.rollout_limit = rollout_limit
        #: Simulations run for the last decision.
        self.last_sims = 0
        #: Visit count per root action after the last decision.
        self.last_visits: dict[int, int] = {}

    def act(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self._choose(self.search(state))

    def search(self, state: State) -> Node:
        """Run the simulations from ``state`` (not modified) and return the tree's root."""
        root = self._new_node(state, player=1 - state.to_act)
        deadline = time.perf_counter() + self.time_budget if self.time_budget else 0.0
        sims = 0
        while True:
            self._simulate(root, state.copy())
            sims += 1
            if deadline:
                if time.perf_counter() >= deadline:
                    break
            elif sims >= self.sims:
                break
            if root.proven >= 0:
                break  # the result is known: more simulations cannot change the choice
        self.last_sims = sims
        self.last_visits = {a: child.visits for a, child in root.children.items()}
        return root

    @staticmethod
    def _choose(root: Node) -> int:
        """A proven win, else the most visited child not proven lost (ties: best mean)."""
        me = root.to_act
        children = root.children
        for action, child in children.items():
            if child.proven == me:
                return action
        candidates = [a for a, c in children.items() if c.proven != 1 - me] or list(children)
        return max(
            candidates, key=lambda a: (children[a].visits, children[a].wins / children[a].visits)
        )

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """:meth:`act` with ``sims`` simulations or ``time`` seconds instead of the settings."""
        saved = self.sims, self.time_budget
        if sims is not None:
            self.sims, self.time_budget = max(1, sims), 0.0
        if time is not None:
            self.time_budget = max(time, 1e-3)
        try:
            return self.act(state)
        finally:
            self.sims, self.time_budget = saved

    def _new_node(self, state: State, player: int) -> Node:
        if state.is_terminal:
            winner = state.winner
            return Node(player, -1, [], -1 if winner is None else winner)
        untried = list(state.legal_actions())
        self.rng.shuffle(untried)
        return Node(player, state.to_act, untried, -1)

    def _simulate(self, root: Node, state: State) -> None:
        path = [root]
        node = root
        # Selection: descend through fully expanded, unproven nodes by UCB1, each
        # node's children judged by the player to act there; children proven
        # lost for that player are skipped (an unproven node has another child).
        while node.proven < 0 and not node.untried and node.children:
            log_n = math.log(node.visits)
            c = self.c
            lost = 1 - node.to_act
            best_score = -1.0
            best_action = -1
            best_child = node
            for action, child in node.children.items():
                if child.proven == lost:
                    continue
                score = child.wins / child.visits + c * math.sqrt(log_n / child.visits)
                if score > best_score:
                    best_score, best_action, best_child = score, action, child
            if best_action < 0:
                break  # every child proven lost: the proof above will say so
            state.apply_unchecked(best_action)
            node = best_child
            path.append(node)
        # Expansion: one new child.
        if node.proven < 0 and node.untried:
            action = node.untried.pop()
            player = state.to_act
            state.apply_unchecked(action)
            node = self._new_node(state, player)
            path[-1].children[action] = node
            path.append(node)
        # Rollout (or the proven result) and back-up.
        if node.proven >= 0:
            rewards = (1.0, 0.0) if node.proven == 0 else (0.0, 1.0)
        else:
            weight = self.eval_weight
            if weight:
                white = _eval_odds(state)
                rollout = self._rollout(state)
                white = weight * white + (1.0 - weight) * rollout[WHITE]
                rewards = (white, 1.0 - white)
            else:
                rewards = self._rollout(state)
        for visited in path:
            visited.visits += 1
            visited.wins += rewards[visited.player]
        # Proofs climb from the leaf while nodes keep becoming proven.
        for parent in reversed(path[:-1]):
            if not parent.update_proof():
                break

    def _rollout(self, state: State) -> tuple[float, float]:
        """Play random actions to the end (or the limit); (White's, Black's) reward in [0, 1]."""
        rng = self.rng
        limit = self.rollout_limit or 1 << 30
        steps = 0
        while not state.is_terminal and steps < limit:
            legal = state.legal_actions()
            state.apply_unchecked(legal[int(rng.random() * len(legal))])
            steps += 1
        if not state.is_terminal:
            white = _eval_odds(state)
            return (white, 1.0 - white)
        winner = state.winner
        if winner is None:
            return (0.5, 0.5)
        return (1.0, 0.0) if winner == WHITE else (0.0, 1.0)


def _eval_odds(state: State) -> float:
    """White's expected result by the evaluation's odds (one ring up: about 3 to 1)."""
    return 1.0 / (1.0 + math.exp(-evaluate(state, WHITE) / _EVAL_SCALE))
