"""What the three environments share: seats, rewards, the observation, option checks, shaping.

The PettingZoo environment (:mod:`yinsh_env.envs.aec_env`), ``Yinsh-v0``
(:mod:`yinsh_env.envs.gym_env`) and the vector environment
(:mod:`yinsh_env.vector.env`) take the same options and check them the same
way, here, where each is made: the agents' names and the learner's seat
(:func:`parse_learner`), the reward for an illegal action (:func:`check_reward`),
the observation dict (:func:`make_observation_space`), ``reset``'s seed and
options and the episode's start (:func:`start_state`), flags, render modes, and
dense rewards.

Dense rewards are potential-based shaping from rings removed (Ng, Harada and
Russell, 1999): adding ``F = gamma * phi(s') - phi(s)`` to every reward leaves
the optimal policy unchanged.  Here ``phi`` is ``weight * (own rings removed -
opponent's) / rings_to_win`` from the learner's side, taken at the learner's
decision points, and zero once the game is over; it is zero at the start too,
so over a finished game the shaping terms' ``gamma``-discounted sum is exactly
zero.  Never the default: ``weight = 0`` turns it off.  The vector environment
takes ``dense_reward=`` and ``gamma=``; ``Yinsh-v0`` takes them through
:class:`~yinsh_env.envs.gym_env.ShapedReward`.  ``threat_reward=`` adds a
second potential, rows threatened (:func:`threat_potential`), the same way.
The PettingZoo environment takes all three for both seats at once, each
agent's potential taken at its own decision points (:func:`shaping_potential`):
the shaping is zero-sum, so self-play stays a zero-sum game.

Openings: the arena opens every game with :data:`ARENA_OPENING_PLIES` uniformly
random ring placements (:func:`play_opening`); every environment takes
``opening_plies=`` to start its episodes the same way, drawn from its
``reset`` seed, so a learner trains on the games it is judged on.  The
default, 0, is the empty board.

>>> parse_learner("white"), parse_learner("player_1"), parse_learner("alternate")
(0, 1, 'alternate')
>>> check_shaping(0.5, 0.99)
(0.5, 0.99)
>>> check_flag("self_play", "false")
Traceback (most recent call last):
...
TypeError: self_play must be True or False, got 'false'
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Final

import gymnasium
import numpy as np
from gymnasium import spaces

from yinsh_env.engine.action_input import as_action
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.engine.errors import PositionError, bounded_repr
from yinsh_env.engine.geometry import POINTS, SEGMENTS
from yinsh_env.engine.state import State
from yinsh_env.engine.vocabulary import Phase
from yinsh_env.envs.observation import GRID, OBS_SHAPE, encode
from yinsh_env.render import ansi_board, rgb_board, svg_board

#: Agent names, indexed by engine player (Player.WHITE = 0, Player.BLACK = 1).
AGENTS: Final = ("player_0", "player_1")
AGENT_INDEX: Final = {name: i for i, name in enumerate(AGENTS)}
RENDER_MODES: Final = ("ansi", "rgb_array", "human")
ENV_NAME: Final = "yinsh_v0"
#: Reward for the agent making an illegal move in :func:`env` (PettingZoo's convention).
ILLEGAL_REWARD: Final = -1.0

ActionLike = int | np.integer[Any] | str


def make_observation_space() -> spaces.Dict:
    """The observation space: float planes in [0, 1] and an int8 legal-action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(low=0.0, high=1.0, shape=OBS_SHAPE, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(N_ACTIONS,), dtype=np.int8),
        }
    )


def start_state(
    rings_to_win: int,
    state: State | str | None = None,
    actions: Iterable[ActionLike] = (),
) -> State:
    """The game an episode starts from: a new game, or a given position plus actions.

    ``state`` is a :class:`State` (copied) or its text form; ``actions`` are
    applied after it (indices or notation).  Raises
    :class:`~yinsh_env.engine.errors.YinshError` naming the problem; a finished game
    is refused since an episode needs someone to act.
    """
    if state is None:
        game = State(rings_to_win=rings_to_win)
    elif isinstance(state, State):
        game = state.copy()
    elif isinstance(state, str):
        game = State.from_text(state)
    else:
        raise PositionError(f"start state must be a State or its text form, got {state!r}")
    if isinstance(actions, (str, bytes)) or not isinstance(actions, Iterable):
        raise PositionError(
            f"start actions must be a sequence of actions, got {bounded_repr(actions)}"
        )
    for action in actions:
        game.apply(as_action(action))
    if game.is_terminal:
        raise PositionError(f"cannot start an episode from a finished game: {game.to_text()}")
    return game


#: The options ``reset`` of the AEC env takes.
RESET_OPTIONS = ("state", "actions")
#: Keys ``reset`` ignores: PettingZoo's ``api_test`` passes ``{"options": 1}``
#: to see that ``reset`` takes an ``options`` argument.
IGNORED_OPTIONS = ("options",)


def check_options(options: Any, known: Iterable[str] = RESET_OPTIONS) -> dict[str, Any]:
    """``reset``'s ``options``: None or a dict of ``known`` keys, else an error naming it.

    A misspelt key would otherwise be ignored and the episode start from the
    wrong position without a word: ``TypeError`` for what is no dict (or a
    key that is no string), ``ValueError`` naming unknown keys.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"reset options must be a dict or None, got {bounded_repr(options)}")
    names = sorted(known)
    odd = [key for key in options if not isinstance(key, str)]
    if odd:
        raise TypeError(f"reset option names must be strings, got {bounded_repr(odd[0])}")
    unknown = sorted(key for key in options if key not in names and key not in IGNORED_OPTIONS)
    if unknown:
        shown = ", ".join(bounded_repr(key) for key in unknown[:5])
        raise ValueError(f"unknown reset option(s) {shown} (known: {', '.join(names)})")
    return dict(options)  # the values are checked by start_state


def check_seed(seed: Any) -> int | None:
    """``seed`` for ``reset``: None or an integer ``>= 0`` (numpy's too), else an error naming it.

    Gymnasium's seeding raises its own ``gymnasium.error.Error`` (no
    ``ValueError``) for a negative seed; a bool or a float is no seed either.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be None or an integer >= 0, got {bounded_repr(seed)}")
    if seed < 0:
        raise ValueError(f"seed must be None or an integer >= 0, got {int(seed)}")
    return int(seed)


def render_game(
    game: State, mode: str | None, last_action: int | None = None, size: int = 480
) -> str | np.ndarray | None:
    """Draw ``game`` for a render mode: ANSI text, an RGB array, or shown to a human.

    ``human`` displays the SVG board inline in a Jupyter notebook and prints
    the coloured text board elsewhere.
    """
    if mode is None:
        gymnasium.logger.warn(
            "render() was called without a render_mode; pass render_mode= to the environment"
        )
        return None
    if mode == "ansi":
        return ansi_board(game, last_action=last_action)
    if mode == "rgb_array":
        return rgb_board(game, size=size, last_action=last_action)
    if mode == "human":
        if _in_notebook():
            from IPython.display import SVG, display

            display(SVG(svg_board(game, size=size, last_action=last_action)))
        else:
            print(ansi_board(game, last_action=last_action))
        return None
    raise ValueError(f"unknown render mode {mode!r}; expected one of {RENDER_MODES}")


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def check_flag(name: str, value: object) -> bool:
    """``value`` if it is a bool (``"yes"`` or ``0`` is not), else TypeError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {bounded_repr(value)}")
    return bool(value)


def check_render_mode(render_mode: str | None) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"unknown render_mode {render_mode!r}; expected one of {RENDER_MODES}")


#: What the learner's seat may be given as (besides 0, 1, ``"white"``, ``"black"``).
LEARNER_CHOICES: Final = ("alternate", "random", *AGENTS)


def check_reward(value: object) -> float | None:
    """``illegal_reward``: None (an illegal action raises) or a finite number."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"illegal_reward must be None or a number, got {bounded_repr(value)}")
    if not math.isfinite(value):
        raise ValueError(f"illegal_reward must be finite, got {value!r}")
    return float(value)


def parse_learner(learner: str | int) -> str | int:
    """``"alternate"``, ``"random"`` or the learner's player index (0 White, 1 Black)."""
    if (
        isinstance(learner, (int, np.integer))
        and not isinstance(learner, bool)
        and learner in (0, 1)
    ):
        return int(learner)
    if isinstance(learner, str):
        key = learner.strip().lower()
        if key in AGENT_INDEX:
            return AGENT_INDEX[key]
        if key in ("white", "black"):
            return 0 if key == "white" else 1
        if key in ("alternate", "random"):
            return key
    raise ValueError(
        f"unknown learner side {learner!r}; expected one of {LEARNER_CHOICES}, 0, 1, "
        "'white' or 'black'"
    )


# --- dense rewards -----------------------------------------------------------------

#: The largest shaping weight the environments (and the PPO command line) take: the
#: potential then moves by at most 10 per ring, which shapes the +-1 result without
#: swamping it, and no weight can overflow a float (1e308 gave NaN rewards).
MAX_WEIGHT = 10.0

_REAL = (int, float, np.integer, np.floating)


def _real(name: str, value: object) -> float:
    """``value`` as a float if it is a real number (a bool is not), else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, _REAL):
        raise ValueError(f"{name} must be a number, got {bounded_repr(value)}")
    try:
        return float(value)
    except OverflowError:  # an int beyond any float
        raise ValueError(f"{name} must be a finite number, got {bounded_repr(value)}") from None


def check_weight(name: str, weight: object) -> float:
    """A shaping weight ``name`` as a float in ``[0, MAX_WEIGHT]``, else ValueError naming it."""
    value = _real(name, weight)
    if not 0.0 <= value <= MAX_WEIGHT:  # NaN fails too
        raise ValueError(f"{name} must be a number in [0, {MAX_WEIGHT:g}], got {value!r}")
    return value


def check_shaping(weight: float, gamma: float) -> tuple[float, float]:
    """``(weight, gamma)`` as floats; ValueError naming the bad one."""
    weight = check_weight("dense_reward", weight)
    gamma = _real("gamma", gamma)
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    return weight, gamma


def ring_potential(
    own: np.ndarray, opp: np.ndarray, rings_to_win: int, weight: float
) -> np.ndarray:
    """``phi``: ``weight * (own - opp) / rings_to_win`` (arrays of rings removed)."""
    return np.asarray(weight * (own - opp) / rings_to_win, dtype=np.float64)


def shaping_potential(game: State, player: int, weight: float, threat: float) -> float:
    """``phi`` of ``game`` from ``player``'s side: rings removed (``weight``) plus rows
    threatened (``threat``); 0 once the game is over."""
    if game.is_terminal:
        return 0.0
    removed = np.array(game.removed)
    phi = float(ring_potential(removed[player], removed[1 - player], game.rings_to_win, weight))
    if threat:
        phi += float(threat_potential(encode(game, player)[None], threat)[0])
    return phi


#: (segments, 5) flat cells ``(number - 1) * 11 + column`` of every five-point segment.
SEGMENT_CELLS: Final = np.array(
    [[(POINTS[p][1] - 1) * GRID + POINTS[p][0] for p in s] for s in SEGMENTS]
)


def threat_potential(planes: np.ndarray, weight: float) -> np.ndarray:
    """(n,) ``weight * (fours + threes / 4)``, own minus opponent's, of observations.

    A four (three) is a five-point segment holding four (three) of a side's
    markers and none of the other's: rows threatened, seen from the side the
    planes are drawn for (planes 2 and 3: own and opponent's markers).
    """
    cells = planes.reshape(len(planes), GRID * GRID, -1)
    own = cells[:, SEGMENT_CELLS, 2].sum(axis=2)
    opp = cells[:, SEGMENT_CELLS, 3].sum(axis=2)
    mine = np.where(opp == 0, own, 0)
    theirs = np.where(own == 0, opp, 0)
    value = (
        (mine == 4).sum(1) - (theirs == 4).sum(1) + ((mine == 3).sum(1) - (theirs == 3).sum(1)) / 4
    )
    return np.asarray(weight * value, dtype=np.float64)


# --- the arena's opening -------------------------------------------------------------

#: Uniformly random ring placements opening every arena game (``yinsh-eval
#: --opening-plies``; this is the one place the number lives): pass it to an
#: environment as ``opening_plies=`` to train on the games the arena judges.
ARENA_OPENING_PLIES: Final = 4
#: Every ring placed, five a side: the longest opening.
MAX_OPENING_PLIES: Final = 10


def check_opening_plies(plies: object) -> int:
    """``opening_plies`` as an int in ``0..MAX_OPENING_PLIES``, else ValueError naming it."""
    if (
        isinstance(plies, (bool, np.bool_))
        or not isinstance(plies, (int, np.integer))
        or not 0 <= plies <= MAX_OPENING_PLIES
    ):
        raise ValueError(
            f"opening_plies must be an integer in 0..{MAX_OPENING_PLIES} (ring placements), "
            f"got {bounded_repr(plies)}"
        )
    return int(plies)


def play_opening(game: State, plies: int, rng: np.random.Generator) -> list[int]:
    """Uniformly random ring placements in ``game`` until ``plies`` rings are on the
    board, as the arena opens its games (none once placement is over): the actions."""
    played: list[int] = []
    while (
        game.phase == Phase.PLACE and game.rings[0].bit_count() + game.rings[1].bit_count() < plies
    ):
        legal = game.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        game.apply_unchecked(action)
        played.append(action)
    return played
