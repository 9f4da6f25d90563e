"""A training run's config: read from YAML, overridden on the command line, checked.

A run is configured from a YAML file (``configs/quick.yaml``) whose sections
mirror :class:`~train.config_schema.Config` (the schema, its defaults and
constraints: :mod:`train.config_schema`, whose names this module exports
too).  Command-line overrides use dotted keys (``search.simulations=64``),
their values read as YAML scalars.  A misspelt key, a value of the wrong type,
out of range or not finite raises :class:`ConfigError` naming the key
(``config file quick.yaml: search.simulations must be positive, got 0``),
before any work starts.  As a file may not give a key twice, neither may the
overrides (nor a section and a key inside it), and a file with no settings
at all (empty, or only comments) is refused rather than read as the defaults:
``{}`` says "all defaults" in so many words; :func:`train.preflight.check_runnable` adds what only
the machine can tell (the device exists, agent specs resolve).  The resolved
config is written to the run directory (:func:`save_config`) and into every
checkpoint, so a run can always be told apart and resumed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from agents.params import clip
from train.bounded_yaml import load_yaml
from train.config_schema import (
    MAX_SEED,
    AgentSpec,
    Amp,
    Config,
    Count,
    Device,
    EvalConfig,
    InitConfig,
    NetworkConfig,
    OptimConfig,
    OptionalCount,
    OptionalSims,
    RayAddress,
    RayConfig,
    ReplayConfig,
    SearchConfig,
    Seed,
    SelfPlayConfig,
)
from yinsh_env.util.atomic_write import write_text

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_SEED",
    "AgentSpec",
    "Amp",
    "Config",
    "ConfigError",
    "Count",
    "Device",
    "EvalConfig",
    "InitConfig",
    "NetworkConfig",
    "OptimConfig",
    "OptionalCount",
    "OptionalSims",
    "RayAddress",
    "RayConfig",
    "ReplayConfig",
    "SearchConfig",
    "Seed",
    "SelfPlayConfig",
    "apply_override",
    "config_from_dict",
    "load_config",
    "save_config",
]


class ConfigError(ValueError):
    """A config file or override that cannot be used: the message names the key."""


_ADAPTER: TypeAdapter[Config] = TypeAdapter(Config)


# --- building a Config from dicts, files and overrides ---------------------------


def config_from_dict(data: dict[str, Any], source: str = "config") -> Config:
    """A validated :class:`Config` from nested dicts; ``source`` names them in errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of sections, got {type(data).__name__}")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as err:
        raise ConfigError(f"{source}: {_describe(err)}") from None


#: Largest config file read (the shipped ones are about 2 KB).
MAX_CONFIG_BYTES = 1 << 20


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Config:
    """Read a YAML config file and apply ``key.sub=value`` overrides.

    Errors name the file, or the override when the bad value came from one.
    """
    path = Path(path)
    data = _read_mapping(path)
    overridden: dict[str, str] = {}
    for item in overrides:
        key = apply_override(data, item)
        _refuse_overlap(key, item, overridden)
        overridden[key] = item
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as err:
        loc = [str(part) for part in err.errors()[0]["loc"] if not isinstance(part, int)]
        prefixes = (".".join(loc[:n]) for n in range(len(loc), 0, -1))
        culprit = next((overridden[key] for key in prefixes if key in overridden), None)
        source = f"override {clip(repr(culprit), 120)}" if culprit else f"config file {path}"
        raise ConfigError(f"{source}: {_describe(err)}") from None


def _read_mapping(path: Path) -> dict[str, Any]:
    """The YAML mapping in a config file; ConfigError naming it, in one line, otherwise."""
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (byte {raw[exc.start]:#04x} at offset "
            f"{exc.start}): not a YAML config"
        ) from None
    try:
        data = load_yaml(text)
    except (yaml.YAMLError, ValueError) as exc:
        reason = clip(" ".join(str(exc).split()), 200)
        raise ConfigError(f"config file {path} is not valid YAML: {reason}") from None
    if data is None:
        raise ConfigError(
            f"config file {path} holds no settings (it is empty or only comments): "
            "write the keys to change, or {} for all the defaults"
        )
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping, got {type(data).__name__}")
    return data


def apply_override(data: dict[str, Any], item: str) -> str:
    """Set ``data[a][b] = value`` for ``a.b=value`` (value read as YAML); returns ``a.b``."""
    key, eq, raw = item.partition("=")
    key = key.strip()
    if not eq or not key:
        raise ConfigError(f"override {clip(repr(item), 120)} is not of the form key.sub=value")
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    except ValueError as exc:
        raise ConfigError(f"override {item[:80]!r}: {exc}") from None
    parts = key.split(".")
    for i, part in enumerate(parts):
        section = _section_at(parts[:i])
        fields = _fields(section)
        if part not in fields:
            raise ConfigError(
                f"override {clip(repr(item), 120)}: {_unknown(parts[: i + 1], section)}"
            )
        if i < len(parts) - 1 and not _is_section(fields[part].annotation):
            raise ConfigError(
                f"override {clip(repr(item), 120)}: {'.'.join(parts[: i + 1])!r} is not a section"
            )
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {clip(repr(item), 120)}: {part!r} is not a section")
        node = child
    node[parts[-1]] = value
    return key


def _refuse_overlap(key: str, item: str, earlier: dict[str, str]) -> None:
    """ConfigError when an earlier override sets ``key``, or a section holding it or
    inside it: one of them would silently undo the other."""
    for other, given in earlier.items():
        if key == other or key.startswith(f"{other}.") or other.startswith(f"{key}."):
            raise ConfigError(
                f"override {clip(repr(item), 120)}: {clip(repr(other), 60)} is already "
                f"set by {clip(repr(given), 120)}; give each key once"
            )


def save_config(config: Config, path: str | Path) -> None:
    """Write the resolved config as YAML (read back by :func:`load_config`)."""
    write_text(path, yaml.safe_dump(config.to_dict(), sort_keys=False))


# --- error messages that name the key -----------------------------------------------


def _fields(section: Any) -> dict[str, FieldInfo]:
    return dict(section.__pydantic_fields__)


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and hasattr(annotation, "__pydantic_fields__")


def _section_at(path: list[str] | tuple[Any, ...]) -> Any:
    """The section class at a key path (``["search"]`` -> SearchConfig)."""
    section: Any = Config
    for part in path:
        annotation = _fields(section).get(str(part))
        if annotation is None or not _is_section(annotation.annotation):
            break
        section = annotation.annotation
    return section


def _is_section_key(loc: list[str]) -> bool:
    info = _fields(_section_at(loc[:-1])).get(loc[-1]) if loc else None
    return info is not None and _is_section(info.annotation)


def _unknown(path: list[str], section: Any) -> str:
    where = ".".join(path[:-1]) or "the top level"
    return f"unknown key {'.'.join(path)!r} (keys of {where}: {', '.join(_fields(section))})"


def _describe(err: ValidationError) -> str:
    """The first problem of a validation error, naming its dotted key."""
    error = err.errors()[0]
    loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
    indices = "".join(f"[{part}]" for part in error["loc"] if isinstance(part, int))
    key = ".".join(loc) + indices
    kind, value = error["type"], error.get("input")
    got = f", got {clip(repr(value), 80)}"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        return _unknown(loc, _section_at(loc[:-1]))
    if kind in ("dataclass_type", "dataclass_args_type", "model_type", "dict_type"):
        return f"{key} must be a section (mapping){got}"
    if not key or (kind == "value_error" and _is_section_key(loc)):
        return _error_text(error)  # a check across fields: its message names the keys
    if isinstance(value, float) and not math.isfinite(value):
        return f"{key} must be a finite number{got}"
    if kind.startswith(("greater_than", "less_than")):
        return f"{key} {_range_phrase(loc, error.get('ctx', {}))}{got}"
    phrases = {
        "int_type": "must be an integer",
        "int_from_float": "must be an integer",
        "bool_type": "must be true or false",
        "float_type": "must be a number",
        "float_parsing": "must be a number",
        "finite_number": "must be a finite number",
        "string_type": "must be a string",
        "list_type": "must be a list",
        "tuple_type": "must be a list of values",
        "too_short": "has too few values",
        "too_long": "has too many values",
    }
    if kind == "literal_error":
        return f"{key} must be one of {error['ctx']['expected']}{got}"
    if kind in phrases:
        return f"{key} {phrases[kind]}{got}"
    text = _error_text(error)
    return f"{key} {text}" + ("" if repr(value) in text else got)


def _error_text(error: Any) -> str:
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    return str(error["msg"])


def _range_phrase(loc: list[str], ctx: dict[str, Any]) -> str:
    """``must be positive``, ``must be >= 0`` or ``must be in [0, 1]`` for a field's bounds."""
    bounds: dict[str, Any] = {}
    if loc:
        info = _fields(_section_at(loc[:-1])).get(loc[-1])
        for item in getattr(info, "metadata", []):
            for name in ("gt", "ge", "lt", "le"):
                if getattr(item, name, None) is not None:
                    bounds[name] = getattr(item, name)
    bounds = bounds or dict(ctx)
    low = bounds.get("ge", bounds.get("gt"))
    high = bounds.get("le", bounds.get("lt"))
    if low is not None and high is not None:
        return f"must be in [{_num(low)}, {_num(high)}]"
    if bounds.get("gt") == 0:
        return "must be positive"
    if "ge" in bounds:
        return f"must be >= {_num(bounds['ge'])}"
    if "gt" in bounds:
        return f"must be > {_num(bounds['gt'])}"
    return f"must be <= {_num(high)}"


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
