"""YINSH as a single-agent Gymnasium environment: a learner against a fixed opponent.

The learner plays one side (fixed, alternating between episodes, or drawn at
random) and an opponent policy plays the other; one :meth:`YinshGymEnv.step`
is one decision of the learner, after which the opponent makes all of its
decisions until the learner must act again (or the game ends):

>>> import gymnasium as gym
>>> import yinsh_env.envs.gym_env  # registers "Yinsh-v0"
>>> env = gym.make("Yinsh-v0", opponent=None)  # None: uniformly random moves
>>> obs, info = env.reset(seed=0)
>>> done = False
>>> while not done:
...     mask = env.unwrapped.action_masks()
...     obs, reward, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))
...     done = terminated or truncated
>>> sorted(info)  # the last step's info says how the game ended
['end_reason', 'opponent_actions', 'result']

Observations and actions are the PettingZoo environment's (see
:mod:`yinsh_env.envs.aec_env`), from the learner's point of view; each ``reset``
and ``step`` returns a new dict of new arrays, the caller's to edit or keep
(TorchRL's ``GymWrapper`` writes tensors into it); the reward is
+1 / -1 / 0 for the learner when the game ends.  :meth:`action_masks` serves
sb3-contrib's ``MaskablePPO``; it is the observation's ``int8`` mask (1
legal), which Gymnasium's ``action_space.sample(mask=...)`` takes too.

``step`` reads its action as the PettingZoo environment does (an index in
any integer form, e.g. ``MaskablePPO.predict``'s 0-d array, or notation;
anything else raises :class:`~yinsh_env.engine.errors.NotAnActionError` and
changes nothing: :mod:`yinsh_env.engine.action_input`).  An illegal move (a valid
index the rules forbid here) follows PettingZoo's classic games by default:
the episode ends with -1 for the learner (``illegal_reward``; the arena
scores it as a forfeit), or, with ``illegal_reward=None``, raises
:class:`~yinsh_env.engine.errors.IllegalActionError`.  ``step`` after the episode
ended raises ``gymnasium.error.ResetNeeded``.

The opponent can be ``None`` (uniformly random, seeded by ``reset``), an
object with ``act(state) -> action`` (agents of the :mod:`agents` package,
which read the engine state directly), an object with
``act_observation(observation) -> action``, or any callable taking the
observation dict.  Objects with ``act`` or ``act_observation`` that also have
``reset(seed=...)`` are reseeded at every episode, so seeded runs repeat.

The opponent can also be a sampler of :mod:`yinsh_env.envs.matchmaking` (a pool of
snapshots and fixed agents, a curriculum, a league of both): at every
``reset`` it chooses the episode's opponent (any of the kinds above) with
the environment's seeded generator, ``info["opponent"]`` names it, and when
the game ends the learner's reward goes back to the sampler (its win rates,
a curriculum's promotion).
"""

from __future__ import annotations

from typing import Any, Final, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces

from yinsh_env.engine.action_input import as_action
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.engine.errors import IllegalActionError, PositionError
from yinsh_env.engine.state import DEFAULT_RINGS_TO_WIN, State
from yinsh_env.envs.aec_env import raw_env
from yinsh_env.envs.env_base import (
    AGENTS,
    ILLEGAL_REWARD,
    RENDER_MODES,
    RESET_OPTIONS,
    check_flag,
    check_opening_plies,
    check_options,
    check_render_mode,
    check_reward,
    check_seed,
    check_shaping,
    check_weight,
    make_observation_space,
    parse_learner,
    render_game,
    shaping_potential,
)
from yinsh_env.envs.matchmaking import Entry, is_sampler
from yinsh_env.render.layout import check_picture_size

GYM_ID: Final = "Yinsh-v0"

Observation = dict[str, Any]


class OpponentError(RuntimeError):
    """The opponent raised while choosing its action; the episode ended, reset() starts anew."""


def opponent_kind(opponent: Any) -> str:
    """How an opponent is asked for moves: ``random``, ``state``, ``observation``, ``call``
    or ``sampler`` (it chooses one of the others every episode).

    Raises :class:`TypeError` for an object that cannot choose moves.
    """
    if opponent is None:
        return "random"
    if is_sampler(opponent):
        return "sampler"
    if callable(getattr(opponent, "act", None)):
        return "state"
    if callable(getattr(opponent, "act_observation", None)):
        return "observation"
    if callable(opponent):
        return "call"
    raise TypeError(
        f"opponent {opponent!r} is neither None, an agent (act / act_observation) nor callable"
    )


class YinshGymEnv(gymnasium.Env[Observation, np.int64]):
    """The learner's side of a YINSH game against ``opponent``.

    Args:
        opponent: see the module docstring; ``None`` plays uniformly random moves.
        learner: ``"player_0"`` (White), ``"player_1"`` (Black), ``0``/``1``,
            ``"alternate"`` (White first, then switching every episode;
            ``reset(seed=...)`` restarts with White) or ``"random"``.
        rings_to_win: 3 standard, 1 Blitz.
        render_mode: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"``.
        illegal_reward: an illegal learner action ends the episode with
            this reward (-1, PettingZoo's convention; what learners without
            masking need); ``None`` raises
            :class:`~yinsh_env.engine.errors.IllegalActionError` instead, with the
            state unchanged.
        legal_moves_in_info: put the learner's legal actions in notation in
            ``info["legal_moves"]``.
        render_size: pixels for ``rgb_array``.
        opening_plies: episodes open with uniformly random ring placements
            until this many rings are on the board (both sides'), as the
            arena opens its games (``ARENA_OPENING_PLIES`` of
            :mod:`~yinsh_env.envs.env_base`), drawn from the env's seeded
            generator; 0, the default, is the empty board.

    ``reset(options=...)`` takes ``"state"`` / ``"actions"`` (start position,
    as in :class:`~yinsh_env.envs.aec_env.raw_env`) and ``"learner"`` (the side
    for this episode).  ``info`` holds ``"learner"`` (the learner's agent
    name), ``"opponent_actions"`` (the opponent's decisions since the learner
    last acted), ``"opponent"`` (the name a sampler gave the episode's
    opponent) and, when the game is over, ``"result"`` and ``"end_reason"``.

    The learner as Black against an opponent that always takes the first legal
    action (a callable reading the observation):

    >>> from yinsh_env.envs.gym_env import YinshGymEnv
    >>> def first_legal(observation):
    ...     return int(observation["action_mask"].argmax())
    >>> env = YinshGymEnv(opponent=first_legal, learner="player_1")
    >>> obs, info = env.reset(seed=0)
    >>> info  # White placed on A2 (action 0) before the learner's first decision
    {'opponent_actions': [0], 'learner': 'player_1'}
    >>> obs, reward, terminated, truncated, info = env.step("E5")
    >>> reward, terminated, info
    (0.0, False, {'opponent_actions': [1]})
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 (Gymnasium's class attribute)
        "render_modes": list(RENDER_MODES),
        "render_fps": 2,
    }

    def __init__(
        self,
        opponent: Any = None,
        learner: str | int = "alternate",
        rings_to_win: int = DEFAULT_RINGS_TO_WIN,
        render_mode: str | None = None,
        illegal_reward: float | None = ILLEGAL_REWARD,
        legal_moves_in_info: bool = False,
        render_size: int = 480,
        opening_plies: int = 0,
    ) -> None:
        check_render_mode(render_mode)
        self.opening_plies = check_opening_plies(opening_plies)
        self._side_choice = parse_learner(learner)
        self.render_mode = render_mode
        self.render_size = check_picture_size(render_size)
        self.illegal_reward = check_reward(illegal_reward)
        self.legal_moves_in_info = check_flag("legal_moves_in_info", legal_moves_in_info)
        self.opponent = opponent
        self._sampler_kind = opponent_kind(opponent)
        self._entry: Entry | None = None  # what a sampler chose, until it hears the result
        self.opponent_name: str | None = None  # the name a sampler gave this episode's opponent
        self._active = opponent  # the opponent of this episode
        self._opponent_kind = self._sampler_kind
        self._aec = raw_env(rings_to_win=rings_to_win, opening_plies=self.opening_plies)
        self.observation_space = make_observation_space()
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._episode = 0
        self._learner = 0
        self._done = True

    # --- properties ------------------------------------------------------------------

    @property
    def game(self) -> State:
        """The engine state of the current game (read it, don't modify it)."""
        return self._aec.game

    @property
    def learner(self) -> str:
        """The learner's agent name in the current episode."""
        return AGENTS[self._learner]

    # --- episode -------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode; the opponent plays first when the learner is Black."""
        seed = check_seed(seed)
        options = check_options(options, (*RESET_OPTIONS, "learner"))
        super().reset(seed=seed)
        if seed is not None:
            self._episode = 0
        side = parse_learner(options["learner"]) if "learner" in options else self._side_choice
        if side == "alternate":
            self._learner = self._episode % 2
        elif side == "random":
            self._learner = int(self.np_random.integers(2))
        else:
            self._learner = int(side)
        self._episode += 1
        # the opening is drawn from this env's generator (no draw without one, as before)
        opening_seed = int(self.np_random.integers(2**31)) if self.opening_plies else None
        self._aec.reset(
            seed=opening_seed,
            options={k: options[k] for k in ("state", "actions") if k in options},
        )
        if self._sampler_kind == "sampler":
            self._entry = self.opponent.sample(self.np_random)
            self.opponent_name = self._entry.name
            self._active = self._entry.opponent
            self._opponent_kind = opponent_kind(self._active)
            if self._opponent_kind == "sampler":
                raise TypeError(f"{self.opponent!r} chose a sampler, not an opponent")
        reseed = getattr(self._active, "reset", None)
        if callable(reseed) and self._opponent_kind in ("state", "observation"):
            reseed(seed=int(self.np_random.integers(2**31)))
        self._done = False
        played = self._play_opponent()
        if self._done:
            raise PositionError(
                f"the game ends before the learner ({self.learner}) acts: "
                f"{self._aec.game.to_text()}"
            )
        info = self._info(played)
        info["learner"] = self.learner
        if self.render_mode == "human":
            self.render()
        return self._aec.observe(self.learner), info

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the opponent's decisions up to the learner's turn."""
        if self._done:
            raise gymnasium.error.ResetNeeded("the episode is over: call reset() before step()")
        index = as_action(action)  # refuses what is no action, before anything changes
        game = self._aec.game
        agent = self.learner
        if self.illegal_reward is not None and not game.is_legal(index):
            self._finish(float(self.illegal_reward))
            info = self._info([])
            info["illegal_action"] = index
            observation = self._aec.observe(agent)  # the position is unchanged
            return observation, float(self.illegal_reward), True, False, info
        self._aec.step(index)  # raises IllegalActionError, unchanged state, if illegal
        played = self._play_opponent()
        reward = game.returns()[self._learner] if self._done else 0.0
        if self._done:
            self._finish(reward)
        if self.render_mode == "human":
            self.render()
        return self._aec.observe(agent), reward, self._done, False, self._info(played)

    def _finish(self, reward: float) -> None:
        """The episode is over: a sampler hears the learner's reward (once)."""
        self._done = True
        if self._entry is not None:
            entry, self._entry = self._entry, None
            self.opponent.record(entry, reward)

    def _play_opponent(self) -> list[int]:
        """Let the opponent act until the learner must act; returns its actions."""
        aec = self._aec
        game = aec.game
        played = []
        while not game.is_terminal and game.to_act != self._learner:
            try:
                action = self._opponent_action()
            except Exception as err:
                self._done = True  # the game cannot go on: step() now asks for reset()
                raise OpponentError(
                    f"opponent {self._active!r} raised {type(err).__name__}: {err} "
                    f"at {game.to_text()}; the episode is over: call reset()"
                ) from err
            try:
                index = as_action(action)
                aec.step(index)
            except ValueError as err:
                self._done = True
                raise IllegalActionError(
                    f"opponent {self._active!r} chose an illegal action: {err}; "
                    "the episode is over: call reset()"
                ) from None
            played.append(index)
        self._done = game.is_terminal
        return played

    def _opponent_action(self) -> Any:
        game = self._aec.game
        kind = self._opponent_kind
        if kind == "random":
            legal = game.legal_actions()
            return legal[int(self.np_random.integers(len(legal)))]
        if kind == "state":
            return self._active.act(game.copy())
        observation = self._aec.observe(AGENTS[game.to_act])
        if kind == "observation":
            return self._active.act_observation(observation)
        return self._active(observation)

    def _info(self, played: list[int]) -> dict[str, Any]:
        game = self._aec.game
        info: dict[str, Any] = {"opponent_actions": played}
        if self.opponent_name is not None:
            info["opponent"] = self.opponent_name
        if game.is_terminal:
            info["result"] = game.result
            info["end_reason"] = game.end_reason
        elif self.legal_moves_in_info:
            info["legal_moves"] = game.legal_action_names()
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as an ``int8`` mask (sb3-contrib's MaskablePPO).

        The observation's own mask dtype, which Gymnasium's masked sampling
        also takes; a new array on every call.
        """
        return self._aec.action_mask(self.learner)

    # --- rendering -----------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """The board in ``render_mode``: text (``ansi``), an RGB array, or shown (``human``)."""
        return render_game(
            self._aec.game, self.render_mode, self._aec.last_action, self.render_size
        )

    def close(self) -> None:
        """Close the opponent (a pool or league) where it has something to release."""
        close = getattr(self.opponent, "close", None)
        if callable(close) and self._sampler_kind in ("state", "observation", "sampler"):
            close()


class ShapedReward(gymnasium.Wrapper[Any, Any, Any, Any]):
    """``Yinsh-v0`` with potential-based shaping added to its reward (module docstring).

    Wraps a :class:`~yinsh_env.envs.gym_env.YinshGymEnv` (or a wrapper of one);
    ``weight`` weighs rings removed, ``threat_reward`` rows threatened (the
    vector environment's ``dense_reward`` and ``threat_reward``);
    ``info["shaping"]`` holds the term added at each step.
    """

    def __init__(
        self,
        env: gymnasium.Env[Any, Any],
        weight: float = 0.1,
        gamma: float = 0.99,
        threat_reward: float = 0.0,
    ):
        super().__init__(env)
        self.weight, self.gamma = check_shaping(weight, gamma)
        self.threat_reward = check_weight("threat_reward", threat_reward)
        self._phi = 0.0

    def _potential(self) -> float:
        base = self.env.unwrapped
        me = 0 if base.learner == "player_0" else 1  # type: ignore[attr-defined]
        return shaping_potential(base.game, me, self.weight, self.threat_reward)  # type: ignore[attr-defined]

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


def _register() -> None:
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYM_ID,
            entry_point="yinsh_env.envs.gym_env:YinshGymEnv",
            vector_entry_point="yinsh_env.vector.env:YinshVectorEnv",
        )


_register()

__all__ = ["GYM_ID", "ShapedReward", "YinshGymEnv", "opponent_kind"]
