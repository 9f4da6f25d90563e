"""The greedy baseline for many games at once: :mod:`agents.baselines.greedy` in array operations.

:meth:`agents.baselines.greedy.GreedyAgent.act_batch` decides with it, so
``make_agent("greedy")`` is a batch opponent of the vector environment
(:mod:`yinsh_env.vector.batch_agents`); it runs on the batched engine of
:mod:`yinsh_env.vector`.

For each game, every legal action is applied to a copy (all games' copies in
one batch), the mover's further decisions of the same turn (rows, then
rings) are expanded the same way and the best is kept, and each position
reached when the turn passes or the game ends is scored with
:func:`agents.baselines.heuristics.evaluate`'s terms, computed for the whole batch:
rings removed, a pending ring, ring threats, fours and threes of markers
(segments holding an opponent's ring do not count), markers on the board
and ring mobility.  The values equal the scalar agent's exactly (every term
is a multiple of 0.25), so the choices are the scalar agent's best actions;
ties are broken at random with the generator :meth:`GreedyOpponent.act_batch`
is given (the agent passes one seeded from its own, so seeded games repeat,
though not move for move with :meth:`~agents.baselines.greedy.GreedyAgent.act`).
"""

from __future__ import annotations

import numpy as np

from agents.baselines import heuristics as h
from yinsh_env.vector import (
    MARKER_CODE,
    OVER,
    RING,
    RING_CODE,
    SEGMENT_POINTS_T,
    BatchState,
    apply,
    decode,
    move_destinations,
    outcome,
)

__all__ = ["GreedyOpponent", "evaluate", "turn_values"]


def _side_score(state: BatchState, player: np.ndarray) -> np.ndarray:
    """The heuristic's score of ``player``'s side in every game (agents.baselines.heuristics)."""
    points = state.cells.T  # (86, m): point-major, so segment gathers copy whole rows
    own_markers = points == MARKER_CODE[player]
    own_rings = np.take(points == RING_CODE[player], SEGMENT_POINTS_T, axis=0).any(axis=0)
    opp_rings = np.take(points == RING_CODE[1 - player], SEGMENT_POINTS_T, axis=0).any(axis=0)
    count = np.take(own_markers, SEGMENT_POINTS_T, axis=0).sum(axis=0)  # (123, m)
    four = count == 4
    with_ring = four & own_rings
    rows = (count == 5).sum(axis=0)
    threats = with_ring.sum(axis=0)
    fours = (four & ~with_ring & ~opp_rings).sum(axis=0)
    threes = ((count == 3) & ~opp_rings).sum(axis=0)
    arange = np.arange(state.num_games)
    pending = np.minimum(rows, 1) + ((state.phase == RING) & (state.to_act == player))
    mobility = move_destinations(state.cells, state.ring_pos[arange, player]).sum(axis=(1, 2, 3))
    return np.asarray(
        h.RING_VALUE * state.removed[arange, player]
        + h.PENDING_RING_VALUE * pending
        + h.RING_THREAT_VALUE * threats
        + h.FOUR_VALUE * fours
        + h.THREE_VALUE * threes
        + h.MARKER_VALUE * own_markers.sum(axis=0)
        + h.MOBILITY_VALUE * mobility,
        dtype=np.float64,
    )


def evaluate(state: BatchState, player: np.ndarray) -> np.ndarray:
    """``heuristics.evaluate`` of every game of ``state`` for ``player`` (m,)."""
    value = _side_score(state, player) - _side_score(state, 1 - player)
    over = np.flatnonzero(state.phase == OVER)
    if over.size:
        winner, _ = outcome(state, over)
        won = np.where(winner == player[over], h.WIN_SCORE, -h.WIN_SCORE)
        value[over] = np.where(winner < 0, 0.0, won)
    return value


def turn_values(state: BatchState, player: np.ndarray) -> np.ndarray:
    """:func:`agents.baselines.greedy.best_turn_value` of every game: the best value ``player``
    reaches by finishing their own decisions of this turn greedily (m,)."""
    values = np.empty(state.num_games, dtype=np.float64)
    going = (state.phase != OVER) & (state.to_act == player)
    done = np.flatnonzero(~going)
    if done.size:
        values[done] = evaluate(state.take(done), player[done])
    parents = np.flatnonzero(going)
    if parents.size:
        values[parents] = _best_children(state.take(parents), player[parents])
    return values


def _best_children(state: BatchState, player: np.ndarray) -> np.ndarray:
    """Each game's best :func:`turn_values` over its legal actions."""
    game, _, children = _children(state)
    values = turn_values(children, player[game])
    return np.asarray(np.maximum.reduceat(values, _starts(game)))


def _children(state: BatchState) -> tuple[np.ndarray, np.ndarray, BatchState]:
    """(game, action, children): every legal action of every game, game-major, and the
    positions they reach (one game of ``children`` per action)."""
    game, action = np.nonzero(state.mask)
    children = state.take(game)
    apply(children, np.arange(game.size), action)
    return game, action, children


def _starts(game: np.ndarray) -> np.ndarray:
    """Where each game's run begins in the game-major ``game`` (for ``reduceat``)."""
    return np.flatnonzero(np.r_[True, game[1:] != game[:-1]])


class GreedyOpponent:
    """The greedy agent as a batch opponent (``noise`` as ``GreedyAgent``'s)."""

    observes = True
    name = "greedy"

    def __init__(self, noise: float = 0.0) -> None:
        if not 0.0 <= noise < float("inf"):
            raise ValueError(f"noise must be finite and at least 0, got {noise!r}")
        self.noise = float(noise)

    def values(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...]:
        """(game, action, value) of every legal action of every game, game-major."""
        state = decode(observations, masks)
        game, action, children = _children(state)
        return game, action, turn_values(children, state.to_act[game])

    def act_batch(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        if observations is None:
            raise ValueError("GreedyOpponent needs the observations")
        game, action, value = self.values(observations, masks)
        if self.noise:
            value = value + rng.random(value.size) * self.noise
        starts = _starts(game)
        best = np.maximum.reduceat(value, starts)[
            np.searchsorted(starts, np.arange(game.size), "right") - 1
        ]
        key = np.where(value == best, rng.random(value.size), -1.0)  # random among the best
        order = np.lexsort((key, game))  # by game, then key: each game's last is its choice
        ends = np.r_[starts[1:], game.size] - 1
        return np.asarray(action[order[ends]], dtype=np.int64)
