"""Load an SB3 model zip without unpickling anything it holds.

A MaskablePPO ``.zip`` keeps its weights as ``.pth`` files (SB3 loads those
with ``torch.load(weights_only=True)``: tensors only) and its settings in a
JSON entry ``data``, where every value JSON cannot hold (the policy class,
the spaces, the schedules, the last observation) is a base64 cloudpickle
under ``":serialized:"``.  Unpickling runs whatever code the file's author
put there, so :func:`safe_custom_objects` builds each of those values
itself, from the readable fields SB3 writes beside the pickle, and hands
them to ``MaskablePPO.load`` as ``custom_objects``, which SB3 uses *instead*
of unpickling.  Only what a YINSH policy needs can be built this way:

* the policy class and the features extractor: only the classes the
  project's example saves (:data:`CLASSES`, under their old module paths too);
* ``policy_kwargs``: those classes, plain values (literals) and the few
  words a string argument may be (:data:`_WORDS`);
* the spaces: the YINSH observation dict and the 2,142 actions;
* the schedules, the rollout buffer, the last observation and the episode
  buffers: placeholders (inference never uses them).

The network the settings declare is built before its weights are read in,
so its size is checked first: its parameters (a lower bound, from
``net_arch`` and the features extractor's sizes: :func:`declared_parameters`)
must fit in the ``policy.pth`` the file carries, and no weights entry may be
over :data:`MAX_WEIGHTS_BYTES` (SB3 reads each one whole): a zip that declares
``net_arch=[60000, 60000]`` beside a small model is refused, not built.

Anything else pickled in the file is refused with a ``ValueError`` naming the
file and the entry: such a model can only be loaded by unpickling it, which
is for files one trusts (``MaskablePPO.load`` in your own code, wrapped as a
``py:`` agent).
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import zipfile
from collections.abc import Callable, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents.learned.precision import PRECISIONS
from agents.learned.renamed import SB3_RENAMED
from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.envs.observation import OBS_SHAPE

#: Classes a saved model may name: policy classes and features extractors.
CLASSES: Final = (
    "sb3_contrib.common.maskable.policies.MaskableMultiInputActorCriticPolicy",
    "agents.learned.sb3_models.PretrainedPolicy",
    "agents.learned.sb3_models.PlanesCNN",
    "agents.learned.sb3_models.PlanesPolicy",
    "agents.learned.sb3_models.PretrainedNet",
    "agents.learned.sb3_models.PPONetPolicy",
    "agents.learned.sb3_models.PPONet",
)
#: Largest ``data`` entry read (a model's settings are a few kB; the last
#: observation of many environments can be a few MB).
MAX_DATA_BYTES = 64 << 20
#: Largest weights entry (``*.pth``) read: SB3 reads each whole (a YINSH policy is a few MB).
MAX_WEIGHTS_BYTES = 1 << 30
#: Fewest bytes a parameter takes in ``policy.pth`` (bf16; SB3 saves float32).
_PARAMETER_BYTES = 2
#: Entries inference never uses: a placeholder instead of the pickle.
_PLACEHOLDERS: Final[dict[str, Any]] = {
    "rollout_buffer_class": None,
    "_last_obs": None,
    "_last_episode_starts": None,
    "_last_original_obs": None,
    "ep_info_buffer": None,
    "ep_success_buffer": None,
    "action_noise": None,
    "replay_buffer_class": None,
}
_SCHEDULES: Final = ("lr_schedule", "clip_range", "clip_range_vf", "learning_rate")
#: String arguments of the policy classes, by name, and the words each may be
#: (SB3's readable copy of a string has no quotes to tell it from a name).
_WORDS: Final[dict[str, tuple[str, ...]]] = {"precision": PRECISIONS}
_CLASS_TEXT = re.compile(r"<class '([A-Za-z_][\w.]*)'>")
_INIT_TEXT = re.compile(r"<function ([A-Za-z_]\w*)\.__init__ at ")


def _constant(_: float) -> float:
    return 0.0


def safe_custom_objects(file: Path, renamed: Mapping[str, str] = SB3_RENAMED) -> dict[str, Any]:
    """``custom_objects`` that replace every pickled entry of the model ``file``.

    ``renamed`` maps the module paths of older saves to today's.  Raises
    ``ValueError`` naming the file and the entry for one that cannot be
    built without unpickling it.
    """
    try:
        with zipfile.ZipFile(file) as archive:
            if "data" not in archive.namelist():
                return {}
            if archive.getinfo("data").file_size > MAX_DATA_BYTES:
                raise ValueError(
                    f"SB3 model {str(file)!r}: its data entry is over {MAX_DATA_BYTES} bytes"
                )
            weights = {
                i.filename: i.file_size for i in archive.infolist() if i.filename.endswith(".pth")
            }
            data = json.loads(archive.read("data").decode("utf-8"))
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot load SB3 model {str(file)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"SB3 model {str(file)!r}: its data entry is not a JSON object")
    replacements: dict[str, Any] = {}
    for key, item in data.items():
        if not (isinstance(item, dict) and ":serialized:" in item):
            continue
        build = _BUILDERS.get(key)
        if build is None and key in _PLACEHOLDERS:
            replacements[key] = _PLACEHOLDERS[key]
            continue
        if build is None and key in _SCHEDULES:
            replacements[key] = _constant
            continue
        try:
            if build is None:
                raise ValueError("no safe way to read it")
            replacements[key] = build(item, renamed)
        except ValueError as exc:
            raise ValueError(
                f"SB3 model {str(file)!r}: refused to unpickle its {key!r} entry ({exc}); "
                "a pickle runs code: load files you trust with MaskablePPO.load yourself"
            ) from None
    try:
        _check_size(replacements.get("policy_kwargs", data.get("policy_kwargs")), weights)
    except ValueError as exc:
        raise ValueError(f"SB3 model {str(file)!r}: {exc}") from None
    return replacements


def _check_size(kwargs: Any, weights: Mapping[str, int]) -> None:
    """Refuse a declared network bigger than the weights the file carries (see the module)."""
    for name, size in weights.items():
        if size > MAX_WEIGHTS_BYTES:
            raise ValueError(f"its {name[:80]!r} entry is over {MAX_WEIGHTS_BYTES} bytes")
    declared = declared_parameters(kwargs if isinstance(kwargs, dict) else {})
    carried = weights.get("policy.pth", 0)
    if declared * _PARAMETER_BYTES > carried:
        raise ValueError(
            f"its policy_kwargs declare a network of at least {declared:,} parameters, "
            f"more than its policy.pth holds ({carried:,} bytes): refused before building it"
        )


def declared_parameters(kwargs: Mapping[str, Any]) -> int:
    """A lower bound on the parameters of the policy ``kwargs`` declare: the layers
    of ``net_arch`` (each head's) and the heads' output layers, and
    :class:`PlanesCNN`'s convolutions and dense layer from its ``channels`` and
    ``features_dim`` (:class:`~agents.learned.sb3_models.PPONet`: its ``channels`` and ``blocks``).

    Raises ``ValueError`` for a size that is no positive whole number.
    """
    arch = kwargs.get("net_arch") or []
    heads = arch if isinstance(arch, dict) else {"pi": arch, "vf": arch}
    if not all(isinstance(widths, list) for widths in heads.values()):
        raise ValueError("policy_kwargs['net_arch'] is not a list of layer widths")
    sizes = kwargs.get("features_extractor_kwargs") or {}
    channels, features = sizes.get("channels"), sizes.get("features_dim")
    blocks = sizes.get("blocks")
    _check_widths("features_extractor_kwargs", [w for w in (channels, features) if w is not None])
    if blocks is not None and not (type(blocks) is int and blocks >= 0):
        raise ValueError(f"policy_kwargs blocks {str(blocks)[:80]} is no whole number")
    total = 0
    if channels is not None and blocks is not None:  # PPONet: a 3x3 stem, 2 3x3 a block
        total += 9 * channels * OBS_SHAPE[2] + blocks * 2 * 9 * channels * channels
    elif channels is not None:  # 3x3 from the planes, 3x3, 1x1 to 8
        total += 9 * channels * (OBS_SHAPE[2] + channels) + 8 * channels
    if features is not None:  # the dense layer over 8 squeezed planes
        total += 8 * OBS_SHAPE[0] * OBS_SHAPE[1] * features
    for head, widths in heads.items():
        _check_widths(f"net_arch {head}", widths)
        total += sum(a * b for a, b in pairwise(widths))
        last = widths[-1] if widths else features or 0
        total += last * (N_ACTIONS if head == "pi" else 1)
    return total


def _check_widths(what: str, widths: list[Any]) -> None:
    if not all(type(w) is int and w > 0 for w in widths):
        raise ValueError(f"policy_kwargs {what} {str(widths)[:80]} are not positive whole numbers")


def _allowed_class(text: str, renamed: Mapping[str, str]) -> type:
    """The class a readable field names (``<class 'a.b.C'>``), if it is one of :data:`CLASSES`."""
    match = _CLASS_TEXT.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text[:80]!r} names no class")
    return _resolve(match.group(1), renamed)


def _resolve(path: str, renamed: Mapping[str, str]) -> type:
    module, _, name = path.rpartition(".")
    module = renamed.get(module, module)
    if f"{module}.{name}" not in CLASSES:
        raise ValueError(f"class {path[:80]!r} is not one a YINSH model may name")
    found = getattr(importlib.import_module(module), name)
    assert isinstance(found, type)
    return found


def _policy_class(item: dict[str, Any], renamed: Mapping[str, str]) -> type:
    module = item.get("__module__")
    match = _INIT_TEXT.match(str(item.get("__init__", "")))
    if not isinstance(module, str) or match is None:
        raise ValueError("the policy class is not named")
    return _resolve(f"{module}.{match.group(1)}", renamed)


def _policy_kwargs(item: dict[str, Any], renamed: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key.startswith(":"):
            continue
        if isinstance(value, str) and value.startswith("<class "):
            out[key] = _allowed_class(value, renamed)
        elif isinstance(value, str) and value in _WORDS.get(key, ()):
            out[key] = value  # SB3 writes a string argument without its quotes
        elif isinstance(value, str):
            try:
                out[key] = ast.literal_eval(value)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise ValueError(f"policy_kwargs[{key!r}] is no plain value") from None
        else:
            out[key] = value  # SB3 kept it as JSON: plain already
    return out


def _observation_space(item: dict[str, Any], renamed: Mapping[str, str]) -> Any:
    from gymnasium import spaces

    built = spaces.Dict(
        {
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
            "observation": spaces.Box(0.0, 1.0, OBS_SHAPE, np.float32),
        }
    )
    if str(item.get("spaces")) != str(dict(built.spaces)):
        raise ValueError(f"the observation space is not YINSH's: {str(item.get('spaces'))[:120]}")
    return built


def _action_space(item: dict[str, Any], renamed: Mapping[str, str]) -> Any:
    from gymnasium import spaces

    if str(item.get("n")) != str(N_ACTIONS):
        raise ValueError(f"the action space is not YINSH's {N_ACTIONS} actions")
    return spaces.Discrete(N_ACTIONS)


_BUILDERS: Final[dict[str, Callable[[dict[str, Any], Mapping[str, str]], Any]]] = {
    "policy_class": _policy_class,
    "policy_kwargs": _policy_kwargs,
    "observation_space": _observation_space,
    "action_space": _action_space,
}
