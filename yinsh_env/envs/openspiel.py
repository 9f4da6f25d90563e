"""YINSH as an OpenSpiel game: ``import yinsh_env.envs.openspiel`` registers ``"yinsh"``.

Needs the optional extra (``pip install -e ".[openspiel]"``); nothing else in
:mod:`yinsh_env` imports :mod:`pyspiel`.  After the import::

    import pyspiel
    game = pyspiel.load_game("yinsh")                    # or "yinsh(rings_to_win=1)": Blitz
    state = game.new_initial_state()                     # or new_initial_state(position_text)
    state.apply_action(state.string_to_action("E5"))

The game is sequential, deterministic, of perfect information, zero-sum, with
terminal rewards (+1 / -1 / 0), exactly like the engine (:class:`~yinsh_env.State`)
it wraps:

* **Players.**  0 is White (moves first), 1 is Black.  One action is one
  decision, so a player acts several times in a row while removing rows and
  rings, as in the PettingZoo environment.
* **Actions.**  The project's flat action space (2,142 distinct actions,
  :mod:`yinsh_env.engine.actions`); action strings are the project's notation
  (``E5``, ``E5-E8``, ``xE5-E9``, ``xE5``, ``pass``).
* **Observations.**  The observation tensor is the project's planes
  (:func:`yinsh_env.envs.observation.encode`, shape (11, 11, 17), channel-last)
  from the asking player's point of view; the observation string is the
  position text (:meth:`~yinsh_env.State.to_text`).  ``observation_tensor``
  returns a new list each call; an observer from ``make_observation`` owns
  its ``tensor``, which each ``set_from`` overwrites whole (OpenSpiel's
  contract), so edits to it never reach the game.  The information state
  string (perfect information) is the history of actions.
* **Serialisation.**  A state serialises (``state.serialize()``, pickling)
  through the position text: the Python side of the state pickles as
  ``State.to_text()`` and is read back with ``State.from_text``.
* **Length.**  ``max_game_length`` is a proven bound: every ring move takes a
  marker from the pool of 51 and each of at most ``2 * rings_to_win - 1``
  removed rows gives five back; at most one pass follows each move; ten
  placements and one ring per row removed make the rest (173 decisions
  standard, 125 Blitz).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yinsh_env.engine.actions import N_ACTIONS, action_to_str
from yinsh_env.engine.state import DEFAULT_RINGS_TO_WIN, State
from yinsh_env.engine.vocabulary import Phase
from yinsh_env.envs.observation import OBS_SHAPE, encode

try:
    import pyspiel
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'yinsh_env.envs.openspiel needs OpenSpiel, an optional extra: pip install -e ".[openspiel]"'
        " (or pip install open_spiel)"
    ) from exc

GAME_NAME = "yinsh"
NUM_PLAYERS = 2
#: Markers in the pool at the start, and markers a removed row gives back.
_POOL, _ROW_LENGTH, _RINGS = 51, 5, 10

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="YINSH",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"rings_to_win": DEFAULT_RINGS_TO_WIN},
)


def max_game_length(rings_to_win: int = DEFAULT_RINGS_TO_WIN) -> int:
    """An upper bound on the decisions of a game (see the module docstring)."""
    rows = 2 * rings_to_win - 1  # the game ends when either player removes rings_to_win
    moves = _POOL + _ROW_LENGTH * rows
    passes = moves + 1
    return _RINGS + moves + passes + 2 * rows  # each row: its removal and a ring's


def game_info(rings_to_win: int = DEFAULT_RINGS_TO_WIN) -> Any:
    return pyspiel.GameInfo(
        num_distinct_actions=N_ACTIONS,
        max_chance_outcomes=0,
        num_players=NUM_PLAYERS,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=max_game_length(rings_to_win),
    )


class _Position:
    """The engine state inside an OpenSpiel state: copied without its undo stack,
    pickled as its position text (OpenSpiel clones by ``deepcopy`` and
    serialises by pickling the Python state's attributes)."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict[int, object]) -> _Position:
        return _Position(self.state.copy())

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (_position_from_text, (self.state.to_text(),))


def _position_from_text(text: str) -> _Position:
    return _Position(State.from_text(text))


class YinshGame(pyspiel.Game):
    """The OpenSpiel game; parameter ``rings_to_win`` (3 standard, 1 Blitz)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        rings_to_win = int(params.get("rings_to_win", DEFAULT_RINGS_TO_WIN))
        State(rings_to_win=rings_to_win)  # a ValueError naming a bad value, before OpenSpiel
        super().__init__(GAME_TYPE, game_info(rings_to_win), params)
        self.rings_to_win = rings_to_win

    def new_initial_state(self, position: str | State | None = None) -> YinshState:
        """The start of a game, or the position given as text (``State.to_text()``) or State."""
        if position is None:
            return YinshState(self, State(rings_to_win=self.rings_to_win))
        start = State.from_text(position) if isinstance(position, str) else position.copy()
        if start.rings_to_win != self.rings_to_win:
            raise ValueError(
                f"position {start.to_text()!r} is for rings_to_win={start.rings_to_win}, "
                f"the game for rings_to_win={self.rings_to_win}"
            )
        return YinshState(self, start)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        """The planes observer, or the history for information-state requests."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return PlanesObserver(params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class YinshState(pyspiel.State):
    """An OpenSpiel state holding one engine :class:`~yinsh_env.State`."""

    def __init__(self, game: YinshGame, start: State) -> None:
        super().__init__(game)
        self._position = _Position(start)

    @property
    def yinsh_state(self) -> State:
        """The engine state (read it; apply actions through OpenSpiel)."""
        return self._position.state

    def current_player(self) -> int:
        state = self._position.state
        return int(pyspiel.PlayerId.TERMINAL) if state.phase == Phase.OVER else state.to_act

    def _legal_actions(self, player: int) -> list[int]:
        return self._position.state.legal_actions()

    def _apply_action(self, action: int) -> None:
        self._position.state.apply(action)  # IllegalActionError (a ValueError) if illegal

    def _action_to_string(self, player: int, action: int) -> str:
        return action_to_str(action)

    def is_terminal(self) -> bool:
        return self._position.state.phase == Phase.OVER

    def returns(self) -> list[float]:
        return list(self._position.state.returns())

    def __str__(self) -> str:
        state = self._position.state
        return f"{state}\n{state.to_text()}"


class PlanesObserver:
    """OpenSpiel's Python observer interface over :func:`yinsh_env.envs.observation.encode`."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        if params:
            raise ValueError(f"the yinsh observer takes no parameters, got {params}")
        shape = OBS_SHAPE
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: YinshState, player: int) -> None:
        self.dict["observation"][...] = encode(state.yinsh_state, player)

    def string_from(self, state: YinshState, player: int) -> str:
        return state.yinsh_state.to_text()


pyspiel.register_game(GAME_TYPE, YinshGame)
