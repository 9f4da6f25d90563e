"""sb3:path= never unpickles: a model's pickled entries are rebuilt from their readable
fields, and a model holding any other pickle is refused, its code never run."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import PicklePayload

pytest.importorskip("sb3_contrib")

import cloudpickle
import torch

from agents import make_agent
from agents.learned.sb3_agent import load_maskable_ppo
from yinsh_env import State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def tiny_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import train.libraries.sb3_maskable_ppo as example

    torch.set_num_threads(1)
    env = example.make_vec_env("random", seed=0, rings_to_win=1, envs=2)
    model = example.build_model(env, n_steps=32, batch_size=32, n_epochs=1, channels=4, features=16)
    model.learn(total_timesteps=32)
    path = tmp_path_factory.mktemp("sb3") / "tiny.zip"
    model.save(path)
    return path


def _with_data(source: Path, target: Path, change: Any) -> Path:
    """A copy of the model ``source`` whose ``data`` entry ``change(data)`` rewrote."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            raw = old.read(name)
            if name == "data":
                data = json.loads(raw)
                change(data)
                raw = json.dumps(data).encode()
            new.writestr(name, raw)
    return target


def _pickled(obj: Any) -> dict[str, str]:
    return {
        ":type:": "<class 'object'>",
        ":serialized:": base64.b64encode(pickle.dumps(obj)).decode(),
    }


def test_the_examples_model_loads_without_unpickling_anything(
    tiny_zip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("unpickled")

    monkeypatch.setattr(cloudpickle, "loads", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    model = load_maskable_ppo(str(tiny_zip))
    assert type(model.policy.features_extractor).__name__ == "PlanesCNN"
    assert make_agent(f"sb3:path={tiny_zip}").act(State()) in State().legal_actions()


@pytest.mark.parametrize("key", ["evil", "policy_class", "lr_schedule", "observation_space"])
def test_a_pickled_payload_never_runs(tiny_zip: Path, tmp_path: Path, key: str) -> None:
    marker = tmp_path / "ran.txt"

    def plant(data: dict[str, Any]) -> None:
        entry = _pickled(PicklePayload(marker))
        if isinstance(data.get(key), dict):  # keep the readable fields, swap the pickle
            entry = {**data[key], ":serialized:": entry[":serialized:"]}
        data[key] = entry

    evil = _with_data(tiny_zip, tmp_path / "evil.zip", plant)
    try:
        make_agent(f"sb3:path={evil}").close()
    except ValueError as exc:
        assert str(evil) in str(exc) and key == "evil", exc
        assert "refused to unpickle its 'evil' entry" in str(exc)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("key", "field", "value", "words"),
    [
        (
            "policy_class",
            "__init__",
            "<function Popen.__init__ at 0x1>",
            "is not one a YINSH model",
        ),
        ("policy_kwargs", "features_extractor_class", "<class 'os.system'>", "is not one a YINSH"),
        ("policy_kwargs", "net_arch", "__import__('os').system('true')", "no plain value"),
        ("observation_space", "spaces", "{'obs': Box(0, 1)}", "not YINSH's"),
    ],
)
def test_readable_fields_name_only_what_a_yinsh_model_may_hold(
    tiny_zip: Path, tmp_path: Path, key: str, field: str, value: str, words: str
) -> None:
    def forge(data: dict[str, Any]) -> None:
        if not isinstance(data.get(key), dict) or ":serialized:" not in data[key]:
            data[key] = {":type:": "<class 'dict'>", ":serialized:": "", **(data.get(key) or {})}
        data[key][field] = value

    forged = _with_data(tiny_zip, tmp_path / "forged.zip", forge)
    with pytest.raises(ValueError, match=words) as caught:
        load_maskable_ppo(str(forged))
    assert str(forged) in str(caught.value)
