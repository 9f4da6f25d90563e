"""Every hyper-parameter of a training run: one typed schema, validated by pydantic.

The sections mirror a config file's (``configs/quick.yaml``); anything left
out keeps its default, and the defaults live here only, each beside its
constraint (``simulations: PositiveInt = 64``).  The sections are pydantic
dataclasses: attribute access, ``==``, ``dataclasses.replace`` (which validates
again) and ``dataclasses.asdict`` work as on plain dataclasses, and
constructing one with a bad value raises pydantic's ``ValidationError`` (a
``ValueError``).  Reading files and overrides, and the errors that name a
key, are :mod:`train.config`'s, which exports every name of this module too.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic import dataclasses as pydantic_dataclasses

from agents.network.play_config import (
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
from agents.params import MAX_SEED, MAX_SIMS, MAX_THREADS, device_name
from agents.spec import AgentSpecError, parse_spec


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


# Field types beside those of agents.network.play_config.
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
    #: Also stop after the iteration that brings self-play and learning to this
    #: many CPU-minutes (``time/cpu_s``, resumes included; 0: no such budget),
    #: evaluating it as the last: runs compared on equal CPU budgets.
    cpu_minutes: NonNegativeNumber = 0
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
