"""An engine whose agent calls sys.exit() answers an engine failure and serves on."""

from __future__ import annotations

from agents import RandomAgent
from agents.protocol.line_protocol import EngineSession
from yinsh_env import State


class _Exits(RandomAgent):
    def act(self, state: State) -> int:
        raise SystemExit(3)


def test_an_agent_that_exits_is_an_engine_failure_and_the_engine_serves_on() -> None:
    session = EngineSession(_Exits(seed=0))
    assert session.handle("go") == "error engine failure: exited: SystemExit(3)"
    assert session.handle("ping") == "pong"
