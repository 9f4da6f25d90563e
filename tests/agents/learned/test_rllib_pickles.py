"""rllib:path= reads a checkpoint's pickles with an allowlist first: one naming anything a
YINSH policy never holds is refused, its code never run."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import PicklePayload

pytest.importorskip("ray.rllib")

from agents import make_agent
from agents.learned.pickle_check import RLLIB_ALLOWED, check_pickles
from agents.spec import AgentSpecError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def saved_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import train.libraries.rllib_example as example

    env = example.make_env({"rings_to_win": 1})
    observations: Any = env.observation_space
    actions: Any = env.action_space
    module = example.MaskedPolicyModule(
        observation_space=observations["player_0"],
        action_space=actions["player_0"],
        model_config={"channels": 4, "hidden": 8},
    )
    folder = tmp_path_factory.mktemp("rllib") / "module"
    module.save_to_path(str(folder))
    return folder


def test_the_examples_module_passes_the_allowlist(saved_module: Path) -> None:
    check_pickles(saved_module, RLLIB_ALLOWED)
    assert make_agent(f"rllib:path={saved_module}").name


@pytest.mark.parametrize("name", ["class_and_ctor_args.pkl", "module_state.pkl", "extra/other.pkl"])
def test_a_payload_in_any_pickle_is_refused_unread(
    saved_module: Path, tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "module"
    shutil.copytree(saved_module, folder)
    marker = tmp_path / "ran.txt"
    (folder / name).parent.mkdir(exist_ok=True)
    (folder / name).write_bytes(pickle.dumps({"state": PicklePayload(marker)}))
    with pytest.raises(AgentSpecError, match=r"names pathlib\.Path\.write_text.*refused unread"):
        make_agent(f"rllib:path={folder}")
    assert not marker.exists()


def test_os_system_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "class_and_ctor_args.pkl").write_bytes(
        b"cos\nsystem\n(S'touch " + str(tmp_path / "ran").encode() + b"'\ntR."
    )
    with pytest.raises(ValueError, match=r"names os\.system"):
        check_pickles(tmp_path, RLLIB_ALLOWED)
    assert not (tmp_path / "ran").exists()
