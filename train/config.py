"""Every hyper-parameter of a training run, in one typed, nested dataclass.

A run is configured from a YAML file (``configs/quick.yaml``) whose sections
mirror :class:`Config`; anything left out keeps its default.  Command-line
overrides use dotted keys (``search.simulations=64``), their values read as
YAML scalars and checked against the field's type.  A misspelt key, a value
of the wrong type or out of range raises :class:`ConfigError` naming the key,
before any work starts.  The resolved config is written to the run directory
(:func:`save_config`), so a run can always be told apart and resumed.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import yaml

from .bounded_yaml import load_yaml


class ConfigError(ValueError):
    """A config file or override that cannot be used: the message names the key."""


@dataclass
class NetworkConfig:
    """The residual tower; see :mod:`train.network`."""

    blocks: int = 6
    channels: int = 64
    #: Hidden units of the value (and auxiliary margin) head.
    value_hidden: int = 64


@dataclass
class SearchConfig:
    """The tree search used by self-play and by the network agent."""

    #: ``gumbel``: Gumbel root selection with sequential halving (strong with few
    #: simulations); ``puct``: AlphaZero's PUCT with Dirichlet root noise.
    algorithm: Literal["gumbel", "puct"] = "gumbel"
    #: Simulations of a full search (the moves that become policy targets).
    simulations: int = 64
    c_puct: float = 1.5
    #: First-play urgency: an unvisited child is valued at the parent's mean
    #: value minus this (PUCT only).
    fpu_reduction: float = 0.2
    dirichlet_alpha: float = 0.25
    dirichlet_fraction: float = 0.25
    #: Actions sampled at the root by Gumbel-top-k (Gumbel only).
    gumbel_considered: int = 16
    #: sigma(q) = (c_visit + max visits) * c_scale * q01, as in Gumbel MuZero
    #: (c_visit 50, c_scale 1): with q01 = (q + 1) / 2, a value gap of 0.4 (a
    #: row made) weighs about 10 logits in the policy target.
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 1.0
    #: Map Q to [0, 1] by its min and max over the edges (mctx) instead of its
    #: fixed range [-1, 1]; min-max turns an untrained value head's noise into
    #: confident policy targets, which slows early learning.
    gumbel_rescale_q: bool = False
    #: Keep the chosen child's subtree for the next move.
    reuse_tree: bool = True


@dataclass
class SelfPlayConfig:
    """How self-play games are played and which positions become targets."""

    games_per_iteration: int = 64
    #: Games advanced together in one process; their leaves form one batch.
    games_in_flight: int = 64
    #: Playout-cap randomisation: a move gets a full search (and becomes a
    #: policy target) with this probability, else a fast one.
    full_search_prob: float = 0.25
    fast_simulations: int = 16
    #: Record positions with a single legal action too (value targets only,
    #: in effect: e.g. the removal of the only row just made).
    record_forced: bool = True
    #: (from ply, temperature) steps: moves are sampled with the temperature of
    #: the last step at or before the ply; 0 plays the best move.
    temperature: list[tuple[int, float]] = field(default_factory=lambda: [(0, 1.0), (30, 0.0)])
    #: Resign when the searched value of the player to act stays below this for
    #: ``resign_moves`` consecutive searches; -1 never resigns.
    resign_threshold: float = -0.95
    resign_moves: int = 3
    #: Share of games that never resign, to measure false resignations.
    resign_disabled_fraction: float = 0.2
    rings_to_win: int = 3


@dataclass
class ReplayConfig:
    """The replay window that training samples from."""

    #: Positions kept (the oldest games are dropped first).
    window: int = 50_000
    #: Training waits until the window holds this many positions.
    min_positions: int = 1_000
    #: Augment each sample with a random one of the 12 board symmetries.
    symmetries: bool = True


@dataclass
class OptimConfig:
    """The learner: AdamW, a learning-rate schedule and the loss weights."""

    batch_size: int = 256
    steps_per_iteration: int = 64
    lr: float = 2e-3
    lr_schedule: Literal["cosine", "constant"] = "cosine"
    warmup_steps: int = 100
    #: The cosine schedule decays to ``lr * final_lr_fraction``.
    final_lr_fraction: float = 0.1
    weight_decay: float = 1e-4
    grad_clip: float = 5.0
    value_weight: float = 1.0
    #: Auxiliary target: final rings-removed margin (0 disables).
    margin_weight: float = 0.25
    #: Auxiliary target: who owns each point's marker at the end (0 disables).
    ownership_weight: float = 0.0


@dataclass
class EvalConfig:
    """Periodic evaluation through the arena during the run."""

    #: Evaluate every this many iterations (0: only after the last one).
    every: int = 10
    #: Games per pairing of the raw policy (half with each colour).
    games: int = 20
    #: Baselines the current network plays, raw (sims=0) and with search.
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    #: Simulations of the "with search" network agent, and its games per
    #: pairing (0 skips it).
    simulations: int = 32
    search_games: int = 10
    #: Earlier evaluated checkpoints joining the Elo round robin.
    elo_checkpoints: int = 2
    workers: int = 1


@dataclass
class RayConfig:
    """Self-play on a Ray cluster (``backend: ray``); see :mod:`train.ray_backend`."""

    #: ``null``: Ray's default (``RAY_ADDRESS``, or a cluster started on this
    #: machine with ``ray start``, else a new local Ray stopped with the run);
    #: ``local``: always a new local Ray; ``auto``: the cluster this machine
    #: joined with ``ray start``; ``ray://head:10001``: a remote cluster
    #: through Ray Client; ``host:port``: a cluster's GCS address.
    address: str | None = None
    #: Self-play actors; 0 takes as many as the cluster's CPUs hold.
    actors: int = 0
    #: Resources each actor reserves (fractions share a device).
    cpus_per_actor: float = 1.0
    gpus_per_actor: float = 0.0
    #: Games per task: the iteration's games go out in tasks of this size and
    #: come back as they finish; 0: ``selfplay.games_in_flight`` (full network
    #: batches), fewer where that would leave an actor without a task.
    games_per_task: int = 0
    #: Actor deaths tolerated in one iteration (each dead actor is replaced
    #: and its unfinished tasks resubmitted) before the run stops.
    max_actor_failures: int = 8
    #: Send this checkout's packages (yinsh_env, agents, train) to the cluster
    #: with the job, for clusters where the project is not installed.
    ship_code: bool = False


@dataclass
class Config:
    """A whole training run."""

    seed: int = 0
    iterations: int = 100
    #: ``auto`` takes CUDA when available, else the CPU.
    device: str = "auto"
    #: torch.set_num_threads for the learner and in-process self-play.
    threads: int = 1
    #: bfloat16 autocast for network evaluation and training (GPU runs).
    amp: bool = False
    #: ``inprocess``, ``process`` (a pool of ``workers`` self-play processes) or
    #: ``ray`` (Ray actors, configured in the ``ray`` section).
    backend: Literal["inprocess", "process", "ray"] = "inprocess"
    workers: int = 1
    #: Iteration checkpoints kept besides the evaluated and best ones.
    keep_checkpoints: int = 3
    network: NetworkConfig = field(default_factory=NetworkConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ray: RayConfig = field(default_factory=RayConfig)

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first value out of its range."""
        positive = {
            "iterations": self.iterations,
            "threads": self.threads,
            "workers": self.workers,
            "keep_checkpoints": self.keep_checkpoints,
            "network.blocks": self.network.blocks,
            "network.channels": self.network.channels,
            "network.value_hidden": self.network.value_hidden,
            "search.simulations": self.search.simulations,
            "search.gumbel_considered": self.search.gumbel_considered,
            "selfplay.games_per_iteration": self.selfplay.games_per_iteration,
            "selfplay.games_in_flight": self.selfplay.games_in_flight,
            "selfplay.fast_simulations": self.selfplay.fast_simulations,
            "selfplay.resign_moves": self.selfplay.resign_moves,
            "replay.window": self.replay.window,
            "optim.batch_size": self.optim.batch_size,
            "optim.lr": self.optim.lr,
            "eval.games": self.eval.games,
            "eval.workers": self.eval.workers,
        }
        for key, value in positive.items():
            if value <= 0:
                raise ConfigError(f"config {key} must be positive, got {value}")
        non_negative = {
            "search.c_puct": self.search.c_puct,
            "search.dirichlet_alpha": self.search.dirichlet_alpha,
            "optim.steps_per_iteration": self.optim.steps_per_iteration,
            "optim.warmup_steps": self.optim.warmup_steps,
            "optim.weight_decay": self.optim.weight_decay,
            "optim.grad_clip": self.optim.grad_clip,
            "optim.value_weight": self.optim.value_weight,
            "optim.margin_weight": self.optim.margin_weight,
            "optim.ownership_weight": self.optim.ownership_weight,
            "replay.min_positions": self.replay.min_positions,
            "eval.every": self.eval.every,
            "eval.simulations": self.eval.simulations,
            "eval.search_games": self.eval.search_games,
            "eval.elo_checkpoints": self.eval.elo_checkpoints,
            "ray.actors": self.ray.actors,
            "ray.cpus_per_actor": self.ray.cpus_per_actor,
            "ray.gpus_per_actor": self.ray.gpus_per_actor,
            "ray.games_per_task": self.ray.games_per_task,
            "ray.max_actor_failures": self.ray.max_actor_failures,
        }
        for key, value in non_negative.items():
            if value < 0:
                raise ConfigError(f"config {key} must be >= 0, got {value}")
        fractions = {
            "search.dirichlet_fraction": self.search.dirichlet_fraction,
            "selfplay.full_search_prob": self.selfplay.full_search_prob,
            "selfplay.resign_disabled_fraction": self.selfplay.resign_disabled_fraction,
            "optim.final_lr_fraction": self.optim.final_lr_fraction,
        }
        for key, value in fractions.items():
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"config {key} must be in [0, 1], got {value}")
        if not -1.0 <= self.selfplay.resign_threshold <= 1.0:
            raise ConfigError(
                f"config selfplay.resign_threshold must be in [-1, 1], "
                f"got {self.selfplay.resign_threshold}"
            )
        if not 1 <= self.selfplay.rings_to_win <= 5:
            raise ConfigError(
                f"config selfplay.rings_to_win must be in 1..5, got {self.selfplay.rings_to_win}"
            )
        schedule = self.selfplay.temperature
        if not schedule or schedule[0][0] != 0:
            raise ConfigError("config selfplay.temperature must start with a step at ply 0")
        plies = [ply for ply, _ in schedule]
        if plies != sorted(set(plies)) or any(t < 0 for _, t in schedule):
            raise ConfigError(
                "config selfplay.temperature needs increasing plies and temperatures >= 0, "
                f"got {schedule}"
            )
        if self.device != "auto" and not self.device.startswith(("cpu", "cuda", "mps")):
            raise ConfigError(
                f"config device must be auto, cpu, cuda[:N] or mps, got {self.device!r}"
            )
        address = self.ray.address
        if address is not None and not (
            address in ("auto", "local") or address.startswith("ray://") or ":" in address
        ):
            raise ConfigError(
                "config ray.address must be null (Ray's default), local, auto, "
                f"ray://host:port or host:port, got {address!r}"
            )
        if self.replay.min_positions > self.replay.window:
            raise ConfigError(
                f"config replay.min_positions ({self.replay.min_positions}) exceeds "
                f"replay.window ({self.replay.window})"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (lists for tuples), as written to ``config.yaml``."""
        return _plain(dataclasses.asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --- building a Config from dicts, files and overrides ---------------------------


def config_from_dict(data: dict[str, Any], source: str = "config") -> Config:
    """A validated :class:`Config` from nested dicts; ``source`` names them in errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of sections, got {type(data).__name__}")
    config = _build(Config, data, prefix="", source=source)
    assert isinstance(config, Config)
    config.validate()
    return config


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Config:
    """Read a YAML config file and apply ``key.sub=value`` overrides."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        data = load_yaml(text)
    except (yaml.YAMLError, ValueError) as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping, got {type(data).__name__}")
    for item in overrides:
        apply_override(data, item)
    return config_from_dict(data, source=f"config file {path}")


def apply_override(data: dict[str, Any], item: str) -> None:
    """Set ``data[a][b] = value`` for ``a.b=value`` (value read as YAML)."""
    key, eq, raw = item.partition("=")
    key = key.strip()
    if not eq or not key:
        raise ConfigError(f"override {item!r} is not of the form key.sub=value")
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    except ValueError as exc:
        raise ConfigError(f"override {item[:80]!r}: {exc}") from None
    parts = key.split(".")
    _check_key_path(parts, item)
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {item!r}: {part!r} is not a section")
        node = child
    node[parts[-1]] = value


def _check_key_path(parts: list[str], item: str) -> None:
    cls: Any = Config
    for i, part in enumerate(parts):
        hints = _hints(cls)
        if part not in hints:
            where = ".".join(parts[:i]) or "the top level"
            raise ConfigError(
                f"override {item!r}: unknown key {'.'.join(parts[: i + 1])!r} "
                f"(keys of {where}: {', '.join(hints)})"
            )
        cls = hints[part]
        if i < len(parts) - 1 and not dataclasses.is_dataclass(cls):
            raise ConfigError(f"override {item!r}: {'.'.join(parts[: i + 1])!r} is not a section")


def save_config(config: Config, path: str | Path) -> None:
    """Write the resolved config as YAML (read back by :func:`load_config`)."""
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))


def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(cls: Any, data: dict[str, Any], prefix: str, source: str) -> Any:
    hints = _hints(cls)
    unknown = [k for k in data if k not in hints]
    if unknown:
        key = prefix + str(unknown[0])
        raise ConfigError(
            f"{source}: unknown key {key!r} (keys{' of ' + prefix[:-1] if prefix else ''}: "
            f"{', '.join(hints)})"
        )
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _check(hints[name], value, prefix + name, source)
    return cls(**kwargs)


def _check(kind: Any, value: Any, key: str, source: str) -> Any:
    """``value`` converted to ``kind`` (a field's type), or ConfigError naming ``key``."""
    if dataclasses.is_dataclass(kind):
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {key} must be a section (mapping), got {value!r}")
        return _build(kind, value, key + ".", source)
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise ConfigError(f"{source}: {key} must be one of {choices}, got {value!r}")
        return value
    if origin in (Union, types.UnionType):
        for option in args:
            try:
                return _check(option, value, key, source)
            except ConfigError:
                continue
        raise ConfigError(f"{source}: {key} has the wrong type: {value!r}")
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{source}: {key} must be a list, got {value!r}")
        return [_check(args[0], v, f"{key}[{i}]", source) for i, v in enumerate(value)]
    if origin is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise ConfigError(
                f"{source}: {key} must be a list of {len(args)} values, got {value!r}"
            )
        return tuple(
            _check(a, v, f"{key}[{i}]", source) for i, (a, v) in enumerate(zip(args, value))
        )
    if kind is type(None):
        if value is not None:
            raise ConfigError(f"{source}: {key} must be null, got {value!r}")
        return None
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
        return value
    if kind is float:
        if isinstance(value, str):  # YAML reads 1e-3 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: {key} must be a number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
        return value
    raise ConfigError(f"{source}: {key} has an unsupported type {kind!r}")  # pragma: no cover
