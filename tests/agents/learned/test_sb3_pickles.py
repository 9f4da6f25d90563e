"""sb3:path= never unpickles: a model's pickled entries are rebuilt from their readable
fields, and a model holding any other pickle is refused, its code never run."""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import PicklePayload

pytest.importorskip("sb3_contrib")

import cloudpickle
import torch

from agents import AgentSpecError, make_agent
from agents.learned.sb3_agent import load_maskable_ppo
from agents.learned.sb3_safe import declared_parameters
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


class _Foreign:
    """A class no weights file holds: PyTorch's weights-only load refuses it."""


def _with_entry(source: Path, target: Path, name: str, raw: bytes) -> Path:
    """A copy of the model ``source`` whose entry ``name`` holds ``raw``."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for entry in old.namelist():
            new.writestr(entry, raw if entry == name else old.read(entry))
    return target


def test_a_refused_weights_pickle_is_told_without_the_unsafe_advice(
    tiny_zip: Path, tmp_path: Path
) -> None:
    # PyTorch's message advised re-running torch.load with weights_only=False.
    buffer = io.BytesIO()
    torch.save({"x": _Foreign()}, buffer)
    foreign = _with_entry(tiny_zip, tmp_path / "f.zip", "pytorch_variables.pth", buffer.getvalue())
    with pytest.raises(ValueError) as caught:
        load_maskable_ppo(str(foreign))
    message = str(caught.value)
    assert str(foreign) in message and "_Foreign" in message and "not loaded" in message
    assert "weights_only" not in message and "safe_globals" not in message
    assert "\n" not in message and "\x1b" not in message


@pytest.mark.parametrize(
    "declared",
    [
        {"net_arch": [60000, 60000]},
        {"net_arch": {"pi": [64], "vf": [60000, 60000]}},
        {"features_extractor_kwargs": {"channels": 4, "features_dim": 10**7}},
        {"features_extractor_kwargs": {"channels": 4096, "blocks": 64}},  # PPONet's sizes
    ],
)
@pytest.mark.parametrize("serialized", [True, False])
def test_a_declared_network_beyond_the_weights_is_refused_unbuilt(
    tiny_zip: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    declared: dict[str, Any],
    serialized: bool,
) -> None:
    # net_arch=[60000, 60000] made sb3:path= allocate 14 GB before reading a weight.
    from sb3_contrib import MaskablePPO

    built: list[Any] = []
    monkeypatch.setattr(MaskablePPO, "load", lambda *args, **kwargs: built.append(args))

    def declare(data: dict[str, Any]) -> None:
        if serialized:  # the readable fields beside the pickle, which the loader reads
            data["policy_kwargs"].update(declared)
        else:  # plain JSON, which SB3 takes as it is
            data["policy_kwargs"] = dict(declared)

    big = _with_data(tiny_zip, tmp_path / "big.zip", declare)
    with pytest.raises(ValueError, match="declare a network of at least") as caught:
        load_maskable_ppo(str(big))
    assert str(big) in str(caught.value)
    assert built == []


@pytest.mark.parametrize(
    "sizes",
    [
        {"net_arch": [64, -1]},
        {"net_arch": ["64"]},
        {"features_extractor_kwargs": {"channels": 4, "blocks": -1}},
        {"features_extractor_kwargs": {"channels": 4, "blocks": "2"}},
    ],
)
def test_declared_sizes_are_positive_whole_numbers(
    tiny_zip: Path, tmp_path: Path, sizes: dict[str, Any]
) -> None:
    odd = _with_data(tiny_zip, tmp_path / "odd.zip", lambda d: d["policy_kwargs"].update(sizes))
    with pytest.raises(ValueError, match=r"not positive whole numbers|no whole number"):
        load_maskable_ppo(str(odd))


def test_the_ppo_networks_declared_size_is_a_lower_bound() -> None:
    """PPONet's channels and blocks bound its convolutions from below, for any size."""
    from gymnasium import spaces

    from agents.learned.sb3_models import PPONetPolicy
    from yinsh_env.vector.sb3 import YinshSB3VecEnv

    space = YinshSB3VecEnv(num_envs=1).observation_space
    for channels, blocks in ((4, 0), (16, 2), (8, 5)):
        kwargs = {"features_extractor_kwargs": {"channels": channels, "blocks": blocks}}
        policy = PPONetPolicy(space, spaces.Discrete(2142), lambda _: 1e-3, **kwargs)
        weights = sum(p.numel() for p in policy.parameters())
        assert 0 < declared_parameters(kwargs) <= weights


def test_the_examples_model_declares_no_more_than_its_weights(tiny_zip: Path) -> None:
    data = json.loads(zipfile.ZipFile(tiny_zip).read("data"))
    kwargs = {k: v for k, v in data["policy_kwargs"].items() if not k.startswith(":")}
    model = load_maskable_ppo(str(tiny_zip))
    assert 0 < declared_parameters(kwargs) <= sum(p.numel() for p in model.policy.parameters())


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_model_path_that_is_no_regular_file_says_so(tmp_path: Path, kind: str) -> None:
    # It said "not found" although the path exists.
    if kind == "device":
        path = Path("/dev/zero")
        if not path.exists():
            pytest.skip("no /dev/zero")
    else:
        path = tmp_path / "model.zip"
        os.mkfifo(path)
    with pytest.raises(AgentSpecError, match=f"{re.escape(str(path))}' is not a regular file"):
        make_agent(f"sb3:path={path}")
