"""An engine agent's log= that is a FIFO nobody reads is an error naming it, not a hang."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from agents import make_agent
from yinsh_env import State

ENGINE = (
    shutil.which("yinsh-engine") or f"{shlex.quote(sys.executable)} -m agents.protocol.engine_cli"
)


def test_a_log_fifo_without_a_reader_fails_the_decision_naming_it(tmp_path: Path) -> None:
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    agent = make_agent(f"engine:cmd={ENGINE} random,log={fifo}")
    try:
        with pytest.raises(ValueError, match=f"log '{fifo}' cannot be written"):
            agent.act(State())
    finally:
        agent.close()
