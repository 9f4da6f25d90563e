"""Saved SB3 zips and RLlib checkpoints name their classes by module path: those
saved before the layout change (``train.sb3_maskable_ppo.PlanesCNN``) keep loading."""

from __future__ import annotations

import base64
import json
import sys
import types
import zipfile
from pathlib import Path

import pytest

from agents import AgentSpecError, make_agent
from yinsh_env.engine.state import State


def saved_under(monkeypatch: pytest.MonkeyPatch, cls: type, old_module: str) -> None:
    """Make ``cls`` pickle as ``old_module.<name>``, as files saved before the move do."""
    module = types.ModuleType(old_module)
    setattr(module, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, old_module, module)
    monkeypatch.setattr(cls, "__module__", old_module)


#: The module paths SB3 zips were saved under before each layout change.
OLD_SB3_PATHS = ["train.sb3_maskable_ppo", "agents.libraries.sb3_models"]


def sb3_zip_saved_under_old_names(tmp_path: Path, old: str = OLD_SB3_PATHS[0]) -> Path:
    pytest.importorskip("sb3_contrib", reason='optional extra: pip install -e ".[sb3]"')
    from agents.learned.sb3_models import PlanesCNN
    from train.libraries import sb3_maskable_ppo as example

    path = tmp_path / "old.zip"
    with pytest.MonkeyPatch.context() as patch:
        saved_under(patch, PlanesCNN, old)
        env = example.make_vec_env("random", seed=0, rings_to_win=1, envs=1)
        model = example.build_model(env, n_steps=32, batch_size=32, channels=4, features=16)
        model.save(path)
    assert old not in sys.modules
    with zipfile.ZipFile(path) as archive:
        data = json.loads(archive.read("data"))
    pickled = base64.b64decode(data["policy_kwargs"][":serialized:"])
    assert old.encode() in pickled and b"agents.learned" not in pickled
    return path


@pytest.mark.parametrize("old", OLD_SB3_PATHS)
def test_an_sb3_zip_saved_under_the_old_module_paths_loads_and_plays(
    tmp_path: Path, old: str
) -> None:
    path = sb3_zip_saved_under_old_names(tmp_path, old)
    agent = make_agent(f"sb3:path={path}", seed=1)
    state = State()
    assert agent.act(state) in state.legal_actions()
    assert old not in sys.modules  # the old name is not left behind


def test_without_the_old_names_that_zip_would_not_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sb3_zip_saved_under_old_names(tmp_path)
    from agents.learned import sb3_agent

    monkeypatch.setattr(sb3_agent, "SB3_RENAMED", {})
    with pytest.raises(AgentSpecError, match=r"'train\.sb3_maskable_ppo\.PlanesCNN'"):
        make_agent(f"sb3:path={path}")


@pytest.mark.ray
def test_an_rllib_module_saved_under_the_old_module_path_loads_and_plays(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ray.rllib", reason='optional extra: pip install -e ".[rllib]"')
    from agents.learned.rllib_models import MaskedPolicyModule
    from train.libraries import rllib_example as example

    env = example.make_env({"rings_to_win": 1})
    with pytest.MonkeyPatch.context() as patch:
        saved_under(patch, MaskedPolicyModule, "train.rllib_example")
        module = MaskedPolicyModule(
            observation_space=env.observation_space["player_0"],
            action_space=env.action_space["player_0"],
            model_config={"channels": 4, "hidden": 8},
        )
        module.save_to_path(str(tmp_path / "old"))
    assert b"train.rllib_example" in (tmp_path / "old" / "class_and_ctor_args.pkl").read_bytes()
    agent = make_agent(f"rllib:path={tmp_path / 'old'}", seed=1)
    state = State()
    assert agent.act(state) in state.legal_actions()
    assert "train.rllib_example" not in sys.modules
