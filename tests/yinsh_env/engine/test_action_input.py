"""Actions as libraries give them (issue 20, item 3): one value, one action, in every env.

A legal index is the same action as a Python int, a numpy scalar, a 0-d or
one-element array, or a torch tensor, in ``env()``, ``raw_env`` and
``Yinsh-v0``; anything else is refused with an error naming it, leaving the
game as it was (never a forfeit).  Only a valid index the rules forbid is an
illegal move (PettingZoo's convention: -1 for the offender, 0 for the other).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from yinsh_env import (
    N_ACTIONS,
    IllegalActionError,
    NotAnActionError,
    NotationError,
    State,
    env,
    raw_env,
    str_to_action,
)
from yinsh_env.engine.action_input import as_action
from yinsh_env.envs.gym_env import YinshGymEnv

torch = pytest.importorskip("torch")

E5 = str_to_action("E5")


def forms(index: int) -> list[Any]:
    """``index`` in every form a library may hand it over."""
    return [
        index,
        np.int64(index),
        np.int32(index),
        np.uint16(index),
        np.array(index),  # MaskablePPO.predict for one observation
        np.array([index]),  # a batch of one
        np.array(index, dtype=np.int16),
        torch.tensor(index),
        torch.tensor([index]),
        torch.tensor(index, dtype=torch.int32),
    ]


#: Values that are no action: (value, words the error must contain).
NOT_ACTIONS: list[tuple[Any, str]] = [
    (float(E5), "float"),
    (np.float64(E5), "float64"),
    (np.array(float(E5)), "float64"),
    (torch.tensor(float(E5)), "float32"),
    (True, "bool"),
    (np.bool_(True), "bool"),
    (np.array(True), "bool"),
    (torch.tensor(True), "bool"),
    (None, "None"),
    (np.array([E5, E5 + 1]), "shape (2,)"),
    (np.array([[E5]]), "shape (1, 1)"),
    (np.zeros(0, dtype=np.int64), "shape (0,)"),
    (torch.tensor([E5, 1]), "shape (2,)"),
    ([E5], "list"),
    (Decimal(E5), "Decimal"),
    (1j, "complex"),
    (-1, "-1"),
    (N_ACTIONS, str(N_ACTIONS)),
    (np.int64(-1), "-1"),
    (np.array(N_ACTIONS), str(N_ACTIONS)),
    (10**30, str(10**30)),
]


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():  # PettingZoo warns on illegal moves by design
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("form", forms(E5), ids=lambda f: f"{type(f).__name__}{f!r}"[:40])
def test_every_integer_form_reads_as_its_index(form: Any) -> None:
    assert as_action(form) == E5 and type(as_action(form)) is int


@pytest.mark.parametrize(("value", "named"), NOT_ACTIONS, ids=lambda v: repr(v)[:30])
def test_what_is_no_action_is_refused_by_name(value: Any, named: str) -> None:
    with pytest.raises(NotAnActionError, match=None) as info:
        as_action(value)
    assert named in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_errors_echo_a_bounded_slice_of_a_huge_value() -> None:
    for huge in (list(range(100_000)), np.arange(100_000), "x" * 100_000):
        with pytest.raises(ValueError) as info:
            as_action(huge)
        assert len(str(info.value)) < 400


def test_notation_is_read_and_malformed_notation_named() -> None:
    assert as_action("e5") == E5
    with pytest.raises(NotationError, match="Z9"):
        as_action("Z9")
    with pytest.raises(NotAnActionError, match="string"):
        as_action("E5", notation=False)


# --- the three environments -----------------------------------------------------------


class Driver:
    """One environment behind one interface: step, what it looks like, whether it ended."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        if kind == "gym":
            self.gym = YinshGymEnv(learner="player_0", opponent=lambda obs: first(obs))
            self.gym.reset(seed=0)
        else:
            self.aec = env() if kind == "env" else raw_env()
            self.aec.reset(seed=0)

    @property
    def game(self) -> State:
        return self.gym.game if self.kind == "gym" else self.aec.unwrapped.game

    def step(self, action: Any) -> None:
        if self.kind == "gym":
            self.gym.step(action)
        else:
            self.aec.step(action)

    def snapshot(self) -> tuple[Any, ...]:
        if self.kind == "gym":
            return (self.game.to_text(), self.gym._done)
        e = self.aec
        return (self.game.to_text(), e.agent_selection, dict(e.rewards), dict(e.terminations))


def first(observation: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


KINDS = ["env", "raw_env", "gym"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_legal_action_in_any_form_is_played(kind: str) -> None:
    for form in forms(E5):
        driver = Driver(kind)
        driver.step(form)
        assert driver.game.actions[0] == E5, form
        assert not driver.game.is_terminal


@pytest.mark.parametrize("kind", KINDS)
def test_what_is_no_action_raises_and_changes_nothing(kind: str) -> None:
    driver = Driver(kind)
    driver.step(E5)
    if kind != "gym":
        driver.step(str_to_action("F6"))
    before = driver.snapshot()
    for value, named in [*NOT_ACTIONS, ("Z9", "Z9")]:
        with pytest.raises(ValueError, match=None) as info:
            driver.step(value)
        assert named in str(info.value) and not isinstance(info.value, IllegalActionError)
        assert driver.snapshot() == before, value
    driver.step(np.array(str_to_action("G7")))  # the game goes on
    assert str_to_action("G7") in driver.game.actions[-2:]  # (Yinsh-v0's opponent replied)


@pytest.mark.parametrize("form", [E5, np.array(E5), torch.tensor([E5])], ids=repr)
def test_an_illegal_index_in_any_form_follows_the_convention(form: Any) -> None:
    # env(): the game ends, -1 for the offender, 0 for the other (PettingZoo's classic games).
    e = env()
    e.reset()
    e.step(E5)
    e.step(form)  # E5 is occupied: illegal for player_1
    assert e.rewards == {"player_0": 0.0, "player_1": -1.0}
    assert all(e.terminations.values()) and e.unwrapped.game.ply == 1
    # Yinsh-v0: the episode ends with -1 (illegal_reward), or raises when asked.
    g = YinshGymEnv(learner="player_1", opponent=lambda obs: E5)  # White places on E5
    g.reset(seed=0)
    _, reward, terminated, _, info = g.step(form)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, E5)
    assert g.game.ply == 1
    strict = YinshGymEnv(learner="player_0", illegal_reward=None)
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(np.array(N_ACTIONS - 1))  # pass: illegal while placing
    # raw_env: raises, nothing changes.
    r = raw_env()
    r.reset()
    r.step(E5)
    with pytest.raises(IllegalActionError):
        r.step(form)
    assert r.game.ply == 1 and not any(r.terminations.values())


def test_finished_agents_step_none_then_a_finished_raw_env_refuses_clearly() -> None:
    r = raw_env()
    r.reset(options={"state": "4/1m3rr/2MMMMRr/4m2r1/5mr3/3M5/2R2m4/6R2/8/7/4 w move - 2-0 42 0 3"})
    while not r.game.is_terminal:
        r.step(first(r.observe(r.agent_selection)))
    with pytest.raises(ValueError, match="None"):
        r.step(0)  # a terminated agent's only action is None (PettingZoo's rule)
    for _ in range(2):
        r.step(None)  # the standard AEC convention for dead agents still works
    assert r.agents == []
    for action in (None, 0, np.array(0)):
        with pytest.raises(IllegalActionError, match="reset"):
            r.step(action)
    r.reset()
    r.step(E5)  # playable again


def test_a_finished_gym_episode_asks_for_reset() -> None:
    g = YinshGymEnv(learner="player_0")
    g.reset(seed=0)
    g.step(N_ACTIONS - 1)  # pass while placing: illegal, the episode ends
    with pytest.raises(gym.error.ResetNeeded):
        g.step(np.array(E5))


@pytest.mark.parametrize("kind", ["env", "gym"])
def test_one_mask_dtype_that_masked_sampling_takes(kind: str) -> None:
    if kind == "gym":
        g = YinshGymEnv()
        obs, _ = g.reset(seed=0)
        masks = [obs["action_mask"], g.action_masks()]
        space: gym.spaces.Discrete = g.action_space
    else:
        e = env()
        e.reset(seed=0)
        masks = [e.observe("player_0")["action_mask"], e.unwrapped.action_mask()]
        space = e.action_space("player_0")
    for mask in masks:
        assert mask.dtype == np.int8 and mask.shape == (N_ACTIONS,)
        assert all(mask[space.sample(mask=mask)] == 1 for _ in range(20))


def sampled_actions(step: Callable[[Any], None], masks: Callable[[], np.ndarray]) -> None:
    """Drive an environment for a few steps with torch-tensor actions (a tensor policy)."""
    for _ in range(12):
        legal = torch.from_numpy(masks()).nonzero()
        step(legal[0, 0])  # a 0-d int64 tensor


def test_torch_tensor_actions_play_whole_stretches_of_games() -> None:
    g = YinshGymEnv(learner="player_1", rings_to_win=1)
    g.reset(seed=3)
    sampled_actions(g.step, g.action_masks)
    assert len(g.game.actions) >= 24 and not g.game.is_terminal
    e = env(rings_to_win=1)
    e.reset(seed=3)
    sampled_actions(e.step, lambda: e.observe(e.agent_selection)["action_mask"])
    assert e.unwrapped.game.ply == 12
