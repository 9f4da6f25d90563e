"""YINSH as a PettingZoo AEC environment (``yinsh_v0``).

``raw_env`` is the bare environment; :func:`env` adds what PettingZoo's
standard wrappers for classic games add (illegal moves end the game, calls
out of order raise), in one layer (:class:`ClassicWrapper`).  ``pettingzoo.make("aec", "yinsh_v0")``
builds the same once this module is imported.  A game of random moves:

>>> from yinsh_env import env
>>> e = env()
>>> e.reset(seed=0)
>>> for agent in e.agent_iter():
...     observation, reward, termination, truncation, info = e.last()
...     mask = observation["action_mask"]
...     action = None if termination or truncation else e.action_space(agent).sample(mask)
...     e.step(action)
>>> e.unwrapped.game.is_terminal
True

Agents are ``player_0`` (White, moves first) and ``player_1`` (Black).  One
action is one decision of the engine's flat action space (``Discrete(2142)``,
see :mod:`yinsh_env.engine.actions`), so the same agent acts several times in a row
while it removes rows and rings, and the opponent may remove rows the mover
made for it before its own move: ``agent_selection`` always names the agent
to act.  Observations are ``{"observation": planes, "action_mask": int8}``
(planes documented in :mod:`yinsh_env.envs.observation`), from the observing
agent's point of view; the waiting agent's mask is all zeros.  Every
``observe`` / ``last`` returns a new dict of new arrays: the caller's to edit
or keep (a library that writes tensors into it changes nothing here).  The mask's
dtype is ``int8`` (1 legal, 0 not), what Gymnasium's
``action_space.sample(mask=...)`` takes.  Rewards are +1 / -1 / 0 for win /
loss / draw, given when the game ends.

Actions, in both ``env()`` and ``raw_env``: an index in any integer form
(Python or numpy integer, 0-d or one-element integer array or tensor: what
``MaskablePPO.predict`` or an RLlib module returns) or the action's
notation (``"E5-E8"``).  Anything else (a float, a bool, ``None`` for an
agent that must act, several values, an index outside ``0..2141``, malformed
notation) raises :class:`~yinsh_env.engine.errors.NotAnActionError` or
:class:`~yinsh_env.engine.errors.NotationError` (both ``ValueError``) naming the
value, and changes nothing (:mod:`yinsh_env.engine.action_input`).

An illegal move (a valid index that the rules forbid here) is where the two
differ.  ``env()`` follows PettingZoo's classic games: the game ends, -1 for
the agent that made it, 0 for the other, every agent terminated and
truncated, the board unchanged (the arena scores it as a forfeit).
``raw_env`` raises :class:`~yinsh_env.engine.errors.IllegalActionError` (a
``ValueError``) and leaves the environment as it was, as it does for a
malformed start position.  Once the game is over and every agent has taken
its final ``step(None)``, ``step`` and ``last`` raise ``IllegalActionError``
(reset first) in both, where PettingZoo's wrappers only warn (and its base
raises ``KeyError``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

from yinsh_env.engine.action_input import as_action
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.engine.errors import IllegalActionError
from yinsh_env.engine.state import DEFAULT_RINGS_TO_WIN, State
from yinsh_env.envs.env_base import (
    AGENT_INDEX,
    AGENTS,
    ENV_NAME,
    ILLEGAL_REWARD,
    RENDER_MODES,
    check_flag,
    check_opening_plies,
    check_options,
    check_render_mode,
    check_seed,
    check_shaping,
    check_weight,
    make_observation_space,
    play_opening,
    render_game,
    shaping_potential,
    start_state,
)
from yinsh_env.envs.observation import encode
from yinsh_env.render import svg_board
from yinsh_env.render.layout import check_picture_size


def env(**kwargs: Any) -> AECEnv[str, dict[str, np.ndarray], int]:
    """A YINSH AEC environment with PettingZoo's standard wrappers for classic games.

    Takes :class:`raw_env`'s keyword arguments.  An illegal action ends the
    game: -1 for the agent that made it, 0 for the other (PettingZoo's
    ``TerminateIllegalWrapper``); a value that is no action (a float, an
    index outside the space) raises :class:`~yinsh_env.engine.errors.NotAnActionError`
    and changes nothing, where ``AssertOutOfBoundsWrapper`` would assert;
    calls out of order are caught (``OrderEnforcingWrapper``).  See
    :class:`ClassicWrapper`.

    >>> e = env()
    >>> e.reset(seed=0)
    >>> e.agent_selection
    'player_0'
    >>> observation, reward, termination, truncation, info = e.last()
    >>> observation["observation"].shape, int(observation["action_mask"].sum())
    ((11, 11, 17), 85)
    >>> e.step("E5")
    >>> e.agent_selection
    'player_1'
    """
    return ClassicWrapper(raw_env(**kwargs))


def standard_wrappers(
    base: AECEnv[str, dict[str, np.ndarray], int],
) -> AECEnv[str, dict[str, np.ndarray], int]:
    """``base`` wrapped in PettingZoo's three classic-game wrappers, one by one.

    Behaves as :func:`env`'s :class:`ClassicWrapper` (the tests check it),
    only slower; kept for comparison and for tools that look for the
    individual wrapper classes.
    """
    wrapped = wrappers.TerminateIllegalWrapper(base, illegal_reward=ILLEGAL_REWARD)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


def _forward(name: str) -> property:
    """A read-only attribute served by the wrapped raw environment."""

    def get(self: ClassicWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(get, doc=f"The wrapped environment's ``{name}``.")


class ClassicWrapper(wrappers.OrderEnforcingWrapper[str, dict[str, np.ndarray], int]):
    """PettingZoo's wrapper stack for classic games, in one layer.

    Same behaviour as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
    TerminateIllegalWrapper(env, illegal_reward=-1)))`` (see
    :func:`standard_wrappers`; a test plays both side by side), except that
    actions are read by value (:func:`~yinsh_env.engine.action_input.as_action`:
    a 0-d array is its index, a float is refused rather than asserted), but the
    attributes read on every step (``agent_selection``, ``terminations``,
    ...) are forwarded in one hop instead of three ``__getattr__`` chains,
    which otherwise cost more than the whole YINSH step.
    """

    env: raw_env

    agent_selection = _forward("agent_selection")
    agents = _forward("agents")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    _cumulative_rewards = _forward("_cumulative_rewards")

    @property
    def num_agents(self) -> int:
        """Agents still in the game (``len(agents)``)."""
        return len(self.agents)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: the planes and its legal-action mask."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(
        self, observe: bool = True
    ) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """(observation, reward, termination, truncation, info) of the agent to act."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable[str, Any, int]:
        """The agents in the order they act, until every agent has left the game."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _ClassicIterable(self, max_iter)

    def step(self, action: Any) -> None:
        """Play ``action`` (an index or notation) for the agent to act.

        An illegal one ends the game with -1 for that agent.
        """
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        base = self.env
        base.require_agents("step")  # where PettingZoo's wrapper only warns
        agent = base.agent_selection
        if base.terminations[agent] or base.truncations[agent]:
            self._has_updated = True
            base._was_dead_step(action)  # ValueError unless the action is None
            return
        index = as_action(action)  # refuses what is no action, before anything changes
        self._has_updated = True
        try:
            base.play(agent, index)
        except IllegalActionError:  # raised before anything changed
            EnvLogger.warn_on_illegal_move()
            base.end_on_illegal_action(agent, ILLEGAL_REWARD)


class _ClassicIterable(AECOrderEnforcingIterable[str, Any, int]):
    def __iter__(self) -> AECOrderEnforcingIterator[str, Any, int]:
        return _ClassicIterator(self.env, self.max_iter)


class _ClassicIterator(AECOrderEnforcingIterator[str, Any, int]):
    """PettingZoo's order-enforcing ``agent_iter``, reading the raw environment directly."""

    def __next__(self) -> str:
        wrapper = self.env
        base = wrapper.env
        if not base.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return base.agent_selection


class raw_env(AECEnv[str, dict[str, np.ndarray], int]):
    """The bare YINSH AEC environment.

    Args:
        render_mode: ``None``, ``"ansi"`` (text board), ``"rgb_array"``
            (uint8 H x W x 3) or ``"human"`` (drawn after every step: inline
            SVG in notebooks, text elsewhere).
        rings_to_win: rings a player must remove to win: 3 standard, 1 Blitz.
        legal_moves_in_info: put the acting agent's legal actions in notation
            in ``infos[agent]["legal_moves"]`` (for people printing games).
        render_size: image size in pixels for ``rgb_array`` and SVG drawing.
        opening_plies: every game opens with uniformly random ring placements
            until this many rings are on the board, drawn from ``reset``'s
            seed, as the arena opens its games (``ARENA_OPENING_PLIES`` of
            :mod:`~yinsh_env.envs.env_base`); 0, the default, is the empty board.
        dense_reward, threat_reward, gamma: potential-based shaping from rings
            removed and rows threatened, for both seats, each agent's at its own
            decision points (:func:`~yinsh_env.envs.env_base.shaping_potential`);
            zero-sum, and over a finished game with ``gamma=1`` it sums to zero.
            Off by default (weights 0).

    ``reset(options=...)`` understands ``{"state": State or position text,
    "actions": [...]}`` to start from a given position (other keys are
    ignored, as PettingZoo's API test requires); the opening, if any, follows
    it.  ``step`` takes an action index in any integer form or in notation
    (``"E5-E8"``; see the module docstring).  The engine state of the game in
    progress is :attr:`game` (read it, don't modify it); searches work on
    :meth:`copy_state`, so their simulations skip the env's per-step work.

    >>> from yinsh_env import raw_env
    >>> e = raw_env()
    >>> e.reset(options={"actions": ["E5", "F6"]})
    >>> e.game.ply, e.agent_selection
    (2, 'player_0')
    >>> e.step("E5")
    Traceback (most recent call last):
    ...
    yinsh_env.engine.errors.IllegalActionError: illegal action E5 (32): White is to act ...
    >>> e.game.ply
    2
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 (PettingZoo's class attribute)
        "name": ENV_NAME,
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        rings_to_win: int = DEFAULT_RINGS_TO_WIN,
        legal_moves_in_info: bool = False,
        render_size: int = 480,
        opening_plies: int = 0,
        dense_reward: float = 0.0,
        threat_reward: float = 0.0,
        gamma: float = 0.99,
    ) -> None:
        super().__init__()
        check_render_mode(render_mode)
        self.opening_plies = check_opening_plies(opening_plies)
        self.dense_reward, self.gamma = check_shaping(dense_reward, gamma)
        self.threat_reward = check_weight("threat_reward", threat_reward)
        self.render_mode = render_mode
        self.rings_to_win = rings_to_win
        self.legal_moves_in_info = check_flag("legal_moves_in_info", legal_moves_in_info)
        self.render_size = check_picture_size(render_size)
        self.possible_agents = list(AGENTS)
        self.observation_spaces = {agent: make_observation_space() for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(N_ACTIONS) for agent in AGENTS}
        self.np_random, self.np_random_seed = seeding.np_random()
        self._start(State(rings_to_win=rings_to_win))  # validates rings_to_win

    # --- spaces --------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The planes and the action mask (the same object on every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(2142)``: the actions of :mod:`yinsh_env.engine.actions` (one object)."""
        return self.action_spaces[agent]

    # --- episode -------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``seed`` also seeds the action spaces (for ``sample``)."""
        seed = check_seed(seed)
        options = check_options(options)
        game = start_state(self.rings_to_win, options.get("state"), options.get("actions", ()))
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
            for i, agent in enumerate(AGENTS):
                self.action_spaces[agent].seed(seed + i)
        play_opening(game, self.opening_plies, self.np_random)
        self._start(game)
        if self.render_mode == "human":
            self.render()

    @property
    def game(self) -> State:
        """The engine state of the game in progress: the position the observations encode.

        Read it, don't modify it (the env's caches and rewards follow its own steps).
        """
        return self._game

    def copy_state(self) -> State:
        """A copy of :attr:`game` to search or play on (about half a microsecond; no history)."""
        return self._game.copy()

    def _start(self, game: State) -> None:
        self._game = game
        self.last_action: int | None = None
        self.agents = list(AGENTS)
        self.rewards = {agent: 0.0 for agent in AGENTS}
        self._cumulative_rewards = {agent: 0.0 for agent in AGENTS}
        self._phi = {agent: self._potential(i) for i, agent in enumerate(AGENTS)}
        self.terminations = {agent: False for agent in AGENTS}
        self.truncations = {agent: False for agent in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[game.to_act]
        self._skip_agent_selection = None
        self._update_infos()

    def step(self, action: Any) -> None:
        """Apply the selected agent's action (an index in any integer form, or notation).

        Raises :class:`~yinsh_env.engine.errors.NotAnActionError` for a value that is
        no action, :class:`~yinsh_env.engine.errors.IllegalActionError` for an
        illegal one or once the game is over, leaving the environment unchanged.
        A finished agent's ``step(None)`` removes it, as PettingZoo's API wants.
        """
        self.require_agents("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # ValueError unless the action is None
            return
        self.play(agent, as_action(action))

    def require_agents(self, call: str) -> None:
        """Raise IllegalActionError (``call`` named) once every agent has left the game.

        PettingZoo's base would raise ``KeyError: 'player_1'`` from deep inside.
        """
        if not self.agents:
            raise IllegalActionError(
                f"the game is over ({self._game.result}) and every agent has left: "
                f"call reset() before {call}()"
            )

    def play(self, agent: str, action: int) -> None:
        """``step`` for ``agent``, the selected agent, known to be live, with an index in range."""
        game = self._game
        game.apply(action)  # checks legality; unchanged on error
        self.last_action = action
        self._cumulative_rewards[agent] = 0.0
        if game.is_terminal:
            white, black = game.returns()
            self.rewards = {
                AGENTS[0]: white - self._phi[AGENTS[0]],
                AGENTS[1]: black - self._phi[AGENTS[1]],
            }
            self.terminations = {a: True for a in self.agents}
            self._accumulate_rewards()
        elif self.dense_reward or self.threat_reward:
            self._shape(AGENTS[game.to_act])
        self.agent_selection = AGENTS[game.to_act]
        if self.legal_moves_in_info:
            self._update_infos()
        if self.render_mode == "human":
            self.render()

    def _potential(self, player: int) -> float:
        if not (self.dense_reward or self.threat_reward):
            return 0.0
        return shaping_potential(self._game, player, self.dense_reward, self.threat_reward)

    def _shape(self, agent: str) -> None:
        """Credit ``agent``, now to decide, with ``gamma * phi(now) - phi(its last decision)``."""
        phi = self._potential(AGENT_INDEX[agent])
        self.rewards = {a: 0.0 for a in AGENTS}
        self.rewards[agent] = self.gamma * phi - self._phi[agent]
        self._phi[agent] = phi
        self._accumulate_rewards()

    def end_on_illegal_action(self, agent: str, reward: float) -> None:
        """End the game as PettingZoo's ``TerminateIllegalWrapper`` does.

        ``agent`` gets ``reward``, everyone else 0; all agents are terminated
        and truncated.  The board is left as it was.
        """
        self._cumulative_rewards[agent] = 0.0
        self.terminations = {a: True for a in self.agents}
        self.truncations = {a: True for a in self.agents}
        self.rewards = {a: 0.0 for a in self.agents}
        self.rewards[agent] = float(reward)
        self._accumulate_rewards()
        self._deads_step_first()

    def _update_infos(self) -> None:
        if not self.legal_moves_in_info:
            return
        acting = self.agent_selection
        for agent in self.agents:
            info: dict[str, Any] = {}
            if agent == acting and not self.game.is_terminal:
                info["legal_moves"] = self.game.legal_action_names()
            self.infos[agent] = info

    # --- observations --------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: a new dict of new arrays on every call, the caller's.

        Made afresh rather than cached and copied: a loop asks once per step,
        and making the arrays costs about what copying cached ones would.
        """
        player = self._player(agent)
        return {"observation": encode(self._game, player), "action_mask": self._mask(player)}

    def _player(self, agent: str) -> int:
        try:
            return AGENT_INDEX[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; agents are {AGENTS}") from None

    def _mask(self, player: int) -> np.ndarray:
        """A new mask: the legal actions for the player to act (none once over), else zeros."""
        game = self._game
        return game.legal_mask() if player == game.to_act else np.zeros(N_ACTIONS, dtype=np.int8)

    def last(
        self, observe: bool = True
    ) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """(observation, reward, termination, truncation, info) of the agent to act."""
        self.require_agents("last")
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The legal-action mask of ``agent`` (default: the agent to act): a new array."""
        return self._mask(self._player(self.agent_selection if agent is None else agent))

    # --- rendering -----------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """The board in ``render_mode``: text (``ansi``), an RGB array, or shown (``human``)."""
        return render_game(self.game, self.render_mode, self.last_action, self.render_size)

    def svg(self, **kwargs: Any) -> str:
        """The board as SVG (keyword arguments go to :func:`yinsh_env.render.svg_board`)."""
        kwargs.setdefault("last_action", self.last_action)
        kwargs.setdefault("size", self.render_size)
        return svg_board(self.game, **kwargs)

    def close(self) -> None:
        """Nothing to release: rendering opens no window."""


def _register() -> None:
    """Register ``yinsh_v0`` with PettingZoo's registry where it has one (1.25+)."""
    import pettingzoo

    register = getattr(pettingzoo, "register", None)
    registry = getattr(pettingzoo, "aec_registry", None)
    if register is not None and registry is not None and "yinsh-v0" not in registry:
        register("aec", "yinsh_v0", entry_point="yinsh_env.envs.aec_env:env")


_register()

__all__ = [
    "AGENTS",
    "ENV_NAME",
    "RENDER_MODES",
    "ClassicWrapper",
    "check_seed",
    "env",
    "make_observation_space",
    "raw_env",
    "render_game",
    "standard_wrappers",
    "start_state",
]
