"""``reset(options=...)`` checks its options: a misspelt key is an error, not ignored."""

from __future__ import annotations

from typing import Any

import pytest

from yinsh_env import State, env
from yinsh_env.envs.gym_env import YinshGymEnv


def _resets() -> list[Any]:
    return [
        lambda options: env().reset(options=options),
        lambda options: YinshGymEnv().reset(options=options),
    ]


@pytest.mark.parametrize("reset", _resets(), ids=["aec", "gym"])
@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ([1], TypeError, "must be a dict"),
        ("actions", TypeError, "must be a dict"),
        ({"actoins": ["E5"]}, ValueError, "unknown reset option(s) 'actoins'"),
        ({"actions": ["E5"], "stat": None}, ValueError, "'stat'"),
        ({1: 2}, TypeError, "names must be strings"),
        ({"actions": 5}, ValueError, "start actions must be a sequence of actions, got 5"),
        ({"actions": b"E5"}, ValueError, "start actions must be a sequence of actions"),
        ({"state": 3}, ValueError, "start state must be a State or its text form, got 3"),
    ],
)
def test_bad_options_raise_naming_them(reset: Any, options: Any, error: type, words: str) -> None:
    with pytest.raises(error) as caught:
        reset(options)
    assert words in str(caught.value)


def test_good_options_still_start_where_they_say() -> None:
    aec = env()
    aec.reset(options={"actions": ["E5"], "state": State().to_text()})
    assert aec.unwrapped.game.ply == 1
    aec.reset(options=None)
    assert aec.unwrapped.game.ply == 0
    gym = YinshGymEnv(learner="white")
    _, info = gym.reset(options={"actions": ["E5", "F6"], "learner": "white"})
    assert info["learner"] == "player_0"
    with pytest.raises(ValueError, match="unknown reset option"):
        YinshGymEnv().reset(options={"leaner": "white"})
