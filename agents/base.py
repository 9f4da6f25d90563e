"""The agent interface shared by the arena, environment loops and the trainer."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.search.analysis import Analysis
from yinsh_env import State


class AgentFailure(RuntimeError):
    """An agent could not produce a move (crashed engine, timeout, bad answer).

    The arena scores the game as a loss for that agent and records ``reason``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def batch_arrays(observations: Any, masks: Any) -> tuple[np.ndarray, np.ndarray]:
    """``act_batch``'s inputs checked: (n, 11, 11, 17) float32 planes, (n, 2142) bool masks.

    The batched agent interface (:mod:`yinsh_env.vector.batch_agents`) gives n
    games' observations and masks, each from its player's side.  Raises
    ValueError naming the input whose shape is wrong, or the first row of
    ``masks`` without a legal action.
    """
    planes = np.asarray(observations, dtype=np.float32)
    legal = np.asarray(masks) > 0
    if planes.ndim != 4 or legal.ndim != 2 or len(planes) != len(legal):
        raise ValueError(
            f"observations (n, 11, 11, 17) and masks (n, 2142), got {planes.shape}, {legal.shape}"
        )
    empty = np.flatnonzero(~legal.any(axis=1))
    if empty.size:
        raise ValueError(f"masks row {int(empty[0])} has no legal action")
    return planes, legal


class Agent:
    """A YINSH player.

    Subclasses implement :meth:`act`, which picks a legal action for the player
    to act in an engine :class:`~yinsh_env.State` (search agents work on the
    engine directly).  :meth:`act_observation` serves environment users: it
    reads the exact position back from a PettingZoo/Gymnasium observation.

    Agents are seeded through :meth:`reset`, called before every game, so a
    game between seeded agents replays exactly.

    >>> from agents import Agent
    >>> from yinsh_env import action_to_str, new_game
    >>> class FirstLegal(Agent):
    ...     def act(self, state):
    ...         return state.legal_actions()[0]
    >>> action_to_str(FirstLegal().act(new_game()))
    'A2'
    """

    #: The spec string that built the agent (set by :func:`agents.make_agent`).
    spec: str = ""
    #: The variant (rings to win) the agent was made for; None plays any.  A
    #: match refuses to pair an agent with a game of another variant.
    rings_to_win: int | None = None

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    @property
    def name(self) -> str:
        return self.spec or type(self).__name__

    def reset(self, seed: int | None = None) -> None:
        """Forget anything kept from a previous game; reseed when ``seed`` is given."""
        if seed is not None:
            self.rng.seed(seed)

    def act(self, state: State) -> int:
        """The action to play for ``state.to_act``; must not modify ``state``."""
        raise NotImplementedError

    def act_with_budget(
        self, state: State, sims: int | None = None, time: float | None = None
    ) -> int:
        """:meth:`act` under a per-move budget (the engine protocol's ``go sims= time=``).

        ``sims`` is a number of simulations/nodes, ``time`` seconds of thinking;
        None means the agent's own setting.  Search agents override this to
        honour the budget; by default it is ignored and :meth:`act` decides.
        """
        return self.act(state)

    def analyse(self, state: State) -> Analysis:
        """The agent's move for ``state`` and what lies behind it: the one analysis hook.

        Search agents report their root value, priors, visits and Q per action
        (:class:`~agents.search.analysis.Analysis`); by default only the move.
        Like :meth:`act`, it must not modify ``state``.
        """
        return Analysis(action=self.act(state), player=state.to_act)

    def act_observation(self, observation: Mapping[str, Any] | np.ndarray) -> int:
        """The action for an environment observation (``{"observation", "action_mask"}``)."""
        from yinsh_env.envs.observation import decode

        planes = observation["observation"] if isinstance(observation, Mapping) else observation
        return self.act(decode(np.asarray(planes)))

    def __call__(self, state_or_observation: State | Mapping[str, Any]) -> int:
        if isinstance(state_or_observation, State):
            return self.act(state_or_observation)
        return self.act_observation(state_or_observation)

    def files(self) -> list[str]:
        """Files the agent plays from (a network's checkpoint): their hashes identify it.

        The results database records them (:mod:`agents.evaluation.results_db`).
        """
        return []

    def identity(self) -> str | None:
        """What makes this player the player it is, when its spec does not say it all.

        None (the default) means the canonical spec
        (:func:`agents.spec.canonical_spec`) identifies it; a network agent
        names its weights by their hash instead of a path, so that the same
        network reached by two paths is one player on the rating scale.
        """
        return None

    def close(self) -> None:
        """Release resources (processes, files); the agent is unusable afterwards."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RandomAgent(Agent):
    """Uniformly random over the legal actions: the bottom of the ladder."""

    #: :meth:`act_batch` reads the masks only: the vector environment makes no planes for it.
    observes = False

    def act(self, state: State) -> int:
        legal = state.legal_actions()
        return legal[self.rng.randrange(len(legal))]

    def act_observation(self, observation: Mapping[str, Any] | np.ndarray) -> int:
        # No need to rebuild the position: the mask says everything.
        if isinstance(observation, Mapping) and "action_mask" in observation:
            legal = np.flatnonzero(np.asarray(observation["action_mask"]))
            if len(legal) == 0:
                raise ValueError("observation's action_mask has no legal action")
            return int(legal[self.rng.randrange(len(legal))])
        return super().act_observation(observation)

    def act_batch(
        self, observations: Any, masks: Any, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """(n,) a uniformly random legal action in each of n games, from ``masks`` (n, 2142)
        alone, drawn with the agent's own generator as :meth:`act` does (``rng`` unused)."""
        legal = np.asarray(masks) > 0
        if legal.ndim != 2:
            raise ValueError(f"masks must be (n, 2142), got {legal.shape}")
        rows = [np.flatnonzero(row) for row in legal]
        empty = [i for i, row in enumerate(rows) if not len(row)]
        if empty:
            raise ValueError(f"masks row {empty[0]} has no legal action")
        return np.array([row[self.rng.randrange(len(row))] for row in rows], dtype=np.int64)
