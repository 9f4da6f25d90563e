"""Every hyper-parameter of a training run: one typed schema, validated by pydantic.

A run is configured from a YAML file (``configs/quick.yaml``) whose sections
mirror :class:`Config`; anything left out keeps its default, and the defaults
live here only, each beside its constraint (``simulations: PositiveInt = 64``).
Command-line overrides use dotted keys (``search.simulations=64``), their
values read as YAML scalars.  A misspelt key, a value of the wrong type, out of
range or not finite raises :class:`ConfigError` naming the key
(``config file quick.yaml: search.simulations must be positive, got 0``),
before any work starts; :func:`train.preflight.check_runnable` adds what only
the machine can tell (the device exists, agent specs resolve).  The resolved
config is written to the run directory (:func:`save_config`) and into every
checkpoint, so a run can always be told apart and resumed.

The sections are pydantic dataclasses: attribute access, ``==``,
``dataclasses.replace`` (which validates again) and ``dataclasses.asdict`` work
as on plain dataclasses, and constructing one with a bad value raises
pydantic's ``ValidationError`` (a ``ValueError``).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    TypeAdapter,
    ValidationError,
)
from pydantic import dataclasses as pydantic_dataclasses
from pydantic.fields import FieldInfo

from agents.network.config import (
    SECTION_SCHEMA,
    Bool,
    NetworkConfig,
    NonNegativeInt,
    NonNegativeNumber,
    Number,
    PositiveInt,
    PositiveNumber,
    SearchConfig,
    Simulations,
    UnitInterval,
)
from agents.params import MAX_SIMS, MAX_THREADS, clip, device_name
from agents.spec import AgentSpecError, parse_spec
from yinsh_env.atomic_write import write_text

from .bounded_yaml import load_yaml

#: Seeds numpy and torch take (``torch.manual_seed`` overflows past it).
MAX_SEED = 2**63 - 1


class ConfigError(ValueError):
    """A config file or override that cannot be used: the message names the key."""


def _amp(value: object) -> object:
    """``true``, ``false`` or ``auto``, refused in one message (not one per type of the union)."""
    if value is True or value is False or value == "auto":
        return value
    raise ValueError("must be true, false or auto")


def _spec(value: object) -> object:
    """An agent spec that parses (``name`` or ``name:key=value,...``); whether the
    name and keys exist is checked before a run (:mod:`train.preflight`)."""
    if isinstance(value, str):
        try:
            parse_spec(value)
        except AgentSpecError as err:
            raise ValueError(str(err)) from None
    return value


def _ray_address(value: object) -> object:
    if isinstance(value, str) and not (
        value in ("auto", "local") or value.startswith("ray://") or ":" in value
    ):
        raise ValueError("must be null (Ray's default), local, auto, ray://host:port or host:port")
    return value


# Field types beside those of agents.network.config.
#: Processes or threads: 1..:data:`~agents.params.MAX_THREADS` (no fork bomb by typo).
Count = Annotated[int, Field(strict=True, ge=1, le=MAX_THREADS)]
#: A seed: what numpy and torch take (0..2**63-1).
Seed = Annotated[int, Field(strict=True, ge=0, le=MAX_SEED)]
#: Simulations where 0 skips the search: 0..:data:`~agents.params.MAX_SIMS`.
OptionalSims = Annotated[int, Field(strict=True, ge=0, le=MAX_SIMS)]
#: Processes where 0 means "as many as there are CPUs": 0..:data:`~agents.params.MAX_THREADS`.
OptionalCount = Annotated[int, Field(strict=True, ge=0, le=MAX_THREADS)]
#: An agent spec string, checked by :func:`agents.spec.parse_spec`.
AgentSpec = Annotated[str, Field(strict=True), BeforeValidator(_spec)]
#: ``true``, ``false``, or ``auto`` (:func:`agents.network.inference.amp_enabled`).
Amp = Annotated[bool | Literal["auto"], BeforeValidator(_amp)]
#: A torch device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
Device = Annotated[str, Field(strict=True), AfterValidator(device_name)]
#: Where Ray runs: null (Ray's default), ``local``, ``auto``, ``ray://host:port`` or
#: ``host:port``.
RayAddress = Annotated[str | None, BeforeValidator(_ray_address)]


def _temperature_schedule(schedule: list[tuple[int, float]]) -> list[tuple[int, float]]:
    if not schedule or schedule[0][0] != 0:
        raise ValueError("must start with a step at ply 0")
    plies = [ply for ply, _ in schedule]
    if plies != sorted(set(plies)) or any(t < 0 for _, t in schedule):
        raise ValueError("needs increasing plies and temperatures >= 0")
    return schedule


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class SelfPlayConfig:
    """How self-play games are played and which positions become targets."""

    games_per_iteration: PositiveInt = 64
    #: Games advanced together in one process; their leaves form one batch.
    games_in_flight: PositiveInt = 64
    #: Playout-cap randomisation: a move gets a full search (and becomes a
    #: policy target) with this probability, else a fast one.
    full_search_prob: UnitInterval = 0.25
    fast_simulations: Simulations = 16
    #: Record positions with a single legal action too (value targets only,
    #: in effect: e.g. the removal of the only row just made).
    record_forced: Bool = True
    #: (from ply, temperature) steps: moves are sampled with the temperature of
    #: the last step at or before the ply; 0 plays the best move.
    temperature: Annotated[
        list[tuple[NonNegativeInt, Number]], AfterValidator(_temperature_schedule)
    ] = Field(default_factory=lambda: [(0, 1.0), (30, 0.0)])
    #: Resign when the searched value of the player to act stays below this for
    #: ``resign_moves`` consecutive searches; -1 never resigns.
    resign_threshold: Annotated[Number, Field(ge=-1, le=1)] = -0.95
    resign_moves: PositiveInt = 3
    #: Share of games that never resign, to measure false resignations.
    resign_disabled_fraction: UnitInterval = 0.2
    rings_to_win: Annotated[int, Field(strict=True, ge=1, le=5)] = 3


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class ReplayConfig:
    """The replay window that training samples from."""

    #: Positions kept (the oldest games are dropped first).
    window: PositiveInt = 50_000
    #: Training waits until the window holds this many positions (at most ``window``).
    min_positions: NonNegativeInt = 1_000
    #: Augment each sample with a random one of the 12 board symmetries.
    symmetries: Bool = True

    def __post_init__(self) -> None:
        if self.min_positions > self.window:
            raise ValueError(
                f"replay.min_positions ({self.min_positions}) exceeds replay.window ({self.window})"
            )


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class OptimConfig:
    """The learner: AdamW, a learning-rate schedule and the loss weights."""

    batch_size: PositiveInt = 256
    steps_per_iteration: NonNegativeInt = 64
    lr: PositiveNumber = 2e-3
    lr_schedule: Literal["cosine", "constant"] = "cosine"
    warmup_steps: NonNegativeInt = 100
    #: The cosine schedule decays to ``lr * final_lr_fraction``.
    final_lr_fraction: UnitInterval = 0.1
    weight_decay: NonNegativeNumber = 1e-4
    grad_clip: NonNegativeNumber = 5.0
    value_weight: NonNegativeNumber = 1.0
    #: Value target ``(1 - w) * result + w * search value`` (the root value of the
    #: position's full search; forced moves keep the result); 0: the result alone.
    search_value_weight: UnitInterval = 0.0
    #: Auxiliary target: final rings-removed margin (0 disables).
    margin_weight: NonNegativeNumber = 0.25
    #: Auxiliary target: who owns each point's marker at the end (0 disables).
    ownership_weight: NonNegativeNumber = 0.0
    #: Auxiliary target: the opponent's next action, cross-entropy (0 disables;
    #: needs ``network.opponent_policy``).
    opponent_policy_weight: NonNegativeNumber = 0.0


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class EvalConfig:
    """Periodic evaluation through the arena during the run."""

    #: Evaluate every this many iterations (0: only after the last one).
    every: NonNegativeInt = 10
    #: Games per pairing of the raw policy (half with each colour).
    games: PositiveInt = 20
    #: Baselines the current network plays, raw (sims=0) and with search
    #: (agent specs, see :mod:`agents.spec`).
    opponents: list[AgentSpec] = Field(default_factory=lambda: ["random", "greedy"])
    #: Simulations of the "with search" network agent, and its games per
    #: pairing (0 skips it).
    simulations: OptionalSims = 32
    search_games: NonNegativeInt = 10
    #: Earlier evaluated checkpoints joining the Elo round robin.
    elo_checkpoints: NonNegativeInt = 2
    workers: Count = 1
    #: Append every evaluation game to this SQLite results database
    #: (:mod:`agents.evaluation.results_db`; ``yinsh-ratings FILE`` rates them); null: none.
    db: str | None = None


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class RayConfig:
    """Self-play on a Ray cluster (``backend: ray``); see :mod:`train.ray_backend`."""

    #: ``null``: Ray's default (``RAY_ADDRESS``, or a cluster started on this
    #: machine with ``ray start``, else a new local Ray stopped with the run);
    #: ``local``: always a new local Ray; ``auto``: the cluster this machine
    #: joined with ``ray start``; ``ray://head:10001``: a remote cluster
    #: through Ray Client; ``host:port``: a cluster's GCS address.
    address: RayAddress = None
    #: Self-play actors; 0 takes as many as the cluster's CPUs hold.
    actors: OptionalCount = 0
    #: Resources each actor reserves (fractions share a device).
    cpus_per_actor: NonNegativeNumber = 1.0
    gpus_per_actor: NonNegativeNumber = 0.0
    #: Games per task: the iteration's games go out in tasks of this size and
    #: come back as they finish; 0: ``selfplay.games_in_flight`` (full network
    #: batches), fewer where that would leave an actor without a task.
    games_per_task: NonNegativeInt = 0
    #: Actor deaths tolerated in one iteration (each dead actor is replaced
    #: and its unfinished tasks resubmitted) before the run stops.
    max_actor_failures: NonNegativeInt = 8
    #: Send this checkout's packages (yinsh_env, agents, train) to the cluster
    #: with the job, for clusters where the project is not installed.
    ship_code: Bool = False


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class InitConfig:
    """Where a new run's network starts (:mod:`train.init_weights`).

    On ``--resume`` only ``grow`` counts: it lets the run go on in a bigger
    ``network`` than its checkpoint's (:func:`train.trainer.prepare`).
    """

    #: ``null``: random initialisation; ``pretrained``: the shipped network; else
    #: a checkpoint file (full or slim) or a run directory (its newest checkpoint),
    #: whose network config must equal ``network``.
    weights: str | None = None
    #: CPU seconds of training behind those weights, where the run's CPU clock
    #: (``time/cpu_s``) starts; ``null`` reads them from the file (its history,
    #: or the ``train_cpu_s`` of a slim file's metadata).
    cpu_s: NonNegativeNumber | None = None
    #: Let a smaller network (fewer blocks or channels, no opponent-policy head)
    #: start a bigger one that computes the same function (:mod:`train.grow`), from
    #: ``weights`` or, on ``--resume``, from the run's own checkpoint; otherwise the
    #: file's network config must equal ``network``.
    grow: Bool = False


@pydantic_dataclasses.dataclass(config=SECTION_SCHEMA)
class Config:
    """A whole training run."""

    #: Seeds every game (with the iteration and game number), the network's
    #: initialisation and the learner's sampling.
    seed: Seed = 0
    iterations: PositiveInt = 100
    #: ``auto`` takes CUDA when available, else the CPU.
    device: Device = "auto"
    #: torch.set_num_threads for the learner and in-process self-play.
    threads: Count = 1
    #: bfloat16 autocast for the learner's steps and PyTorch's network evaluation:
    #: ``true``, ``false``, or ``auto`` (where the device runs bfloat16 natively: a
    #: CUDA GPU that supports it, a CPU with avx512_bf16 or AMX).  On such a CPU a
    #: learner step is cheaper and learns the same (benchmarks.bench_learner,
    #: docs/studies/speed.md); elsewhere it is emulated and slower.  Self-play
    #: on the CPU stays in ONNX Runtime, whose arithmetic is ``inference_precision``.
    amp: Amp = False
    #: Who runs the network in self-play: ``onnx`` (ONNX Runtime, faster than
    #: PyTorch on the CPU: docs/guide/benchmarks.md; ``pip install 'yinsh[onnx]'``),
    #: ``torch``, or ``auto`` (ONNX Runtime on the CPU where installed).
    inference: Literal["auto", "torch", "onnx"] = "auto"
    #: Arithmetic of the ONNX Runtime network in self-play: ``fp32``, or ``int8``
    #: convolutions (faster, calibrated on the iteration's
    #: weights when the workers load them; :mod:`agents.network.quantize`).  Int8 plays
    #: other games than fp32 (its evaluations differ slightly); learning is fp32.
    inference_precision: Literal["fp32", "int8"] = "fp32"
    #: ``inprocess``, ``process`` (a pool of ``workers`` self-play processes) or
    #: ``ray`` (Ray actors, configured in the ``ray`` section).
    backend: Literal["inprocess", "process", "ray"] = "inprocess"
    workers: Count = 1
    #: Iteration checkpoints kept besides the evaluated and best ones.
    keep_checkpoints: PositiveInt = 3
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    init: InitConfig = Field(default_factory=InitConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    replay: ReplayConfig = Field(default_factory=ReplayConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    ray: RayConfig = Field(default_factory=RayConfig)

    def __post_init__(self) -> None:
        if self.optim.opponent_policy_weight > 0 and not self.network.opponent_policy:
            raise ValueError(
                "optim.opponent_policy_weight needs network.opponent_policy: true (the head)"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (lists for tuples), as written to ``config.yaml`` and checkpoints."""
        return _plain(dataclasses.asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


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
    overridden = {apply_override(data, item): item for item in overrides}
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as err:
        loc = [str(part) for part in err.errors()[0]["loc"] if not isinstance(part, int)]
        prefixes = (".".join(loc[:n]) for n in range(len(loc), 0, -1))
        item = next((overridden[key] for key in prefixes if key in overridden), None)
        source = f"override {clip(repr(item), 120)}" if item else f"config file {path}"
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
        data = {}
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
