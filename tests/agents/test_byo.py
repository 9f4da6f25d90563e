"""Bring your own agent: py: specs, entry points, observation callables, travel to workers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents import AgentSpecError, make_agent
from agents.byo import as_agent, legal_mask, observation
from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.travel import AgentTravelError, travel_problem
from agents.spec import available_agents, check_spec, unregister_agent
from yinsh_env import State, env

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''
import numpy as np
from agents.base import Agent


def make_agent(path: str = "", first: bool = True):
    """A plain-PyTorch user would load ``path`` here; this one plays a fixed rule."""
    def policy(obs):
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[0] if first else legal[-1])
    return policy


class Mine(Agent):
    def __init__(self, seed=None, depth: int = 1):
        super().__init__(seed)
        self.depth = depth

    def act(self, state):
        legal = state.legal_actions()
        return legal[self.rng.randrange(len(legal))]


class Duck:
    def act(self, state):
        return state.legal_actions()[-1]


def broken(path: str = ""):
    raise FileNotFoundError(f"no model at {path!r}")


def not_an_agent():
    return 42


NOT_CALLABLE = 3
'''


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the user's module, as the current folder (not on sys.path)."""
    folder = tmp_path / "user"
    folder.mkdir()
    name = f"my_agents_{os.getpid()}"
    (folder / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the cwd the import adds goes away
    monkeypatch.delitem(sys.modules, name, raising=False)
    return folder / f"{name}.py"


@pytest.mark.slow
def test_a_py_spec_plays_an_observation_callable_in_workers_too(user_folder: Path) -> None:
    module = user_folder.stem
    spec = f"py:{module}:make_agent,path=model.pt,first=false"
    check_spec(spec)
    alone = run_arena([spec, "random"], 4, MatchSettings(seed=1), progress=False)
    pooled = run_arena([spec, "random"], 4, MatchSettings(seed=1, workers=2), progress=False)
    assert alone.pairings[0].a_forfeits == 0  # every action legal
    assert [g.actions for g in pooled.games] == [g.actions for g in alone.games]
    assert alone.agents[0] == spec


def test_py_specs_name_classes_duck_types_and_files(user_folder: Path) -> None:
    module = user_folder.stem
    mine = make_agent(f"py:{module}:Mine,depth=3", seed=2)
    assert mine.depth == 3 and mine.spec == f"py:{module}:Mine,depth=3"  # type: ignore[attr-defined]
    duck = make_agent(f"py:{module}:Duck")
    state = State()
    assert duck.act(state) == state.legal_actions()[-1]
    from_file = make_agent(f"py:./{user_folder.name}:make_agent")
    assert from_file.act(state) == state.legal_actions()[0]
    with pytest.raises(AgentSpecError, match="depth must be an integer"):
        check_spec(f"py:{module}:Mine,depth=deep")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:make", "cannot import module 'no_such_module_xyz'"),
        ("{module}:missing", "has no attribute 'missing'"),
        ("{module}:NOT_CALLABLE", "is not callable"),
        ("{module}:broken,path=x.pt", "no model at 'x.pt'"),
        ("{module}:not_an_agent", "is not an agent"),
        ("./nowhere.py:make", "no Python file './nowhere.py'"),
        ("{module}", "expected py:MODULE:CALLABLE"),
    ],
)
def test_a_py_spec_that_cannot_be_built_is_refused_before_any_game(
    target: str,
    message: str,
    user_folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = "py:" + target.format(module=user_folder.stem)
    out = tmp_path / "out.json"
    assert eval_main([spec, "random", "--games", "2", "--json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    assert eval_main(["--rate", spec, "--json", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_an_unknown_name_points_at_the_ways_to_bring_an_agent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert eval_main(["mine:path=x.pt", "random", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'mine'" in err and "py:MODULE:CALLABLE" in err


def test_an_installed_package_adds_agents_through_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    package = site / "yinsh_plugin_demo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(MODULE)
    info = site / "yinsh_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: yinsh-plugin-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[yinsh.agents]\ndemo_first = yinsh_plugin_demo:make_agent\n"
    )
    monkeypatch.syspath_prepend(str(site))
    try:
        assert "demo_first" in available_agents()
        result = run_arena(
            ["demo_first:first=true", "random"], 2, MatchSettings(seed=0), progress=False
        )
        assert result.pairings[0].games == 2 and result.pairings[0].a_forfeits == 0
    finally:
        unregister_agent("demo_first")  # its package leaves sys.path with this test


def test_the_protocol_helpers_give_what_the_environment_observes() -> None:
    game = env()
    game.reset(seed=0, options={"actions": ["E5", "F6"]})
    expected = game.observe(game.agent_selection)
    state = game.unwrapped.copy_state()
    mine = observation(state)
    assert np.array_equal(mine["observation"], expected["observation"])
    assert np.array_equal(mine["action_mask"], expected["action_mask"])
    assert np.array_equal(legal_mask(state), expected["action_mask"])


def first_legal(obs: dict[str, Any]) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.mark.slow
def test_objects_play_in_process_and_travel_when_importable() -> None:
    agent = as_agent(first_legal)
    assert agent.act(State()) == State().legal_actions()[0]
    result = run_arena([first_legal, "random"], 2, MatchSettings(seed=0, workers=2), progress=False)
    assert result.agents[0] == "first_legal" and result.pairings[0].a_forfeits == 0
    with pytest.raises(TypeError, match="not an agent"):
        as_agent(42)


def test_what_workers_cannot_rebuild_is_refused_with_the_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lam = lambda obs: first_legal(obs)  # noqa: E731
    with pytest.raises(AgentTravelError, match="lambda") as info:
        run_arena(
            [lam, "random"], 2, MatchSettings(workers=2), progress=False, records_dir=tmp_path / "r"
        )
    assert "py:my_agents:NAME" in str(info.value) and "--workers 1" in str(info.value)
    assert not (tmp_path / "r").exists()  # refused before any game
    assert (
        run_arena([lam, "random"], 2, MatchSettings(workers=1), progress=False).pairings[0].games
        == 2
    )

    # A class defined in a notebook cell: its module is __main__, which has no file.
    notebook_class = type("NotebookAgent", (), {"act": lambda self, s: s.legal_actions()[0]})
    notebook_class.__module__ = "__main__"
    main = type(sys)("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert "notebook" in (travel_problem(notebook_class()) or "")
    script = tmp_path / "unguarded.py"
    script.write_text("print('hello')\n")
    main.__file__ = str(script)
    assert "guard" in (travel_problem(notebook_class()) or "")


SCRIPT = """
import numpy as np
from agents.evaluation.arena import MatchSettings, run_arena
from agents.base import Agent


class Mine(Agent):
    def act(self, state):
        return state.legal_actions()[0]

{body}
"""


@pytest.mark.slow
@pytest.mark.parametrize("guarded", [False, True])
def test_a_script_agent_with_two_workers_errs_clearly_or_plays(
    guarded: bool, tmp_path: Path
) -> None:
    settings = "MatchSettings(workers=2)"
    call = f'print(run_arena([Mine(), "random"], 2, {settings}, progress=False).pairings[0].games)'
    body = f'if __name__ == "__main__":\n    {call}' if guarded else call
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT.format(body=body)))
    env_vars = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], env=env_vars, capture_output=True, text=True, timeout=300
    )
    if guarded:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "2"
    else:
        assert done.returncode != 0
        assert "cannot travel to worker processes" in done.stderr
        assert 'if __name__ == "__main__":' in done.stderr
        assert "BrokenProcessPool" not in done.stderr


def test_the_guides_example_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    import torch

    guide = (ROOT / "docs" / "guide" / "evaluation.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(# my_agents\.py.*?)```", guide, re.S)
    assert block, "the evaluation guide shows my_agents.py"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "my_agents", raising=False)
    (tmp_path / "my_agents.py").write_text(block.group(1))
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(11 * 11 * 17, 2142))
    torch.save(net, tmp_path / "policy.pt")
    result = run_arena(["py:my_agents:make_agent,path=policy.pt", "random"], 2, progress=False)
    assert result.pairings[0].games == 2 and result.pairings[0].a_forfeits == 0
