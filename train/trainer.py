"""The training run, top to bottom: self-play, learn, checkpoint, evaluate, repeat.

Each iteration is deterministic given the run's seed and the checkpoint it
starts from:

1. self-play ``selfplay.games_per_iteration`` games with the weights fixed for
   the iteration; game ``g`` of iteration ``i`` is seeded from (seed, i, g);
2. add them to the replay window;
3. ``optim.steps_per_iteration`` gradient steps on batches drawn with a
   generator seeded from (seed, i);
4. checkpoint (model, optimizer, replay, RNG states, history);
5. every ``eval.every`` iterations (and after the last), evaluate in the arena.

So ``--resume`` from the checkpoint of iteration ``i`` replays exactly what an
uninterrupted run would have done next.  A run directory holds::

    config.yaml                          the resolved config
    metrics.jsonl                        one JSON object per iteration
    tb/                                  TensorBoard events (the same metrics)
    best.pt                              the evaluated checkpoint with the best Elo
    checkpoints/iter_000030.pt           see train.run_checkpoint
    checkpoints/iter_000030.replay.pt    the replay window (newest checkpoint only)

A fresh run refuses a directory that holds any of these (an earlier run's,
even only its text files, which it would truncate): ``--resume`` continues
a run from its checkpoint, anything else goes to another directory.

Metric groups: ``selfplay/*`` (games, positions, lengths, results,
resignations and false resignations, moves/s, simulations/s, network
positions/s, share of time in the network, batch size), ``loss/*`` (policy,
value and the variance of its targets, margin, ownership, policy entropy),
``optim/*``, ``replay/*``, ``time/*`` (``time/cpu_s``: :mod:`train.cpu_clock`)
and ``eval/*`` (scores with 95% intervals of the raw policy and of the search
against each baseline, Elo, the best iteration).

A run can start from an earlier network's weights (config ``init``,
:mod:`train.init_weights`): its CPU clock then starts at the seconds that
trained them, and ``history["init"]`` names the file and its SHA-256.  A
checkpoint resumed without its replay file (restored from git by
:mod:`train.tools.run_archive`) restarts the window empty: the log says so, the
next iteration's metrics carry ``replay/restarted``, ``history["replay_restarts"]``
lists where, and learning waits until the window holds ``replay.min_positions``.
``--resume`` with ``init.grow=true`` and a bigger ``network`` (or one with the
opponent-policy head) grows the checkpoint's network into it (:mod:`train.grow`)
and goes on with its replay window, schedule, CPU clock and the optimizer's
moments of every unchanged weight; ``history["grown"]`` records where.

A killed run loses at most the iteration in progress; SIGTERM and SIGHUP exit
through the same cleanup as Ctrl-C (:mod:`agents.infra.worker_pool`).  An
iteration's metrics stay in its checkpoint's history until ``metrics.jsonl``
has them, so a run killed during an evaluation redoes it on resume.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from agents.network.inference import amp_enabled, resolve_device
from agents.network.network import PolicyValueNet, count_parameters
from train.config import Config, NetworkConfig, save_config
from train.cpu_clock import CPU_KEY, CpuClock
from train.evaluate import evaluate, new_history
from train.executor import SelfPlayExecutor
from train.grow import grown_if_allowed
from train.init_weights import load_init_weights
from train.learner import Learner, carry_optimizer_state
from train.preflight import check_runnable
from train.replay import ReplayBuffer
from train.run_checkpoint import (
    BEST_NAME,
    CHECKPOINT_DIR,
    CheckpointError,
    atomic_copy,
    config_of,
    latest_checkpoint,
    list_checkpoints,
    load_weights,
    prune_checkpoints,
    read_file,
    replay_path,
    save_checkpoint,
    set_rng_states,
)
from train.selfplay import SelfPlayResult
from train.selfplay_workers import make_executor
from yinsh_env import Result, Termination
from yinsh_env.util.atomic_write import write_text

CONFIG_NAME = "config.yaml"
#: History key of the last checkpointed iteration's metrics, until metrics.jsonl has them.
UNLOGGED = "unlogged"
METRICS_NAME = "metrics.jsonl"
#: TensorBoard's folder in a run directory.
TB_NAME = "tb"
#: What a run writes in its directory: any of them there is an earlier run's.
RUN_FILES = (CONFIG_NAME, METRICS_NAME, TB_NAME, BEST_NAME, CHECKPOINT_DIR)
#: History key: the file the run's weights started from (train.init_weights).
INIT_KEY = "init"
#: History key: iterations after which the run resumed with an empty replay window.
RESTARTS_KEY = "replay_restarts"
#: History key: where a resumed run's network grew (``init.grow`` on ``--resume``).
GROWN_KEY = "grown"


class RunError(ValueError):
    """A run directory that cannot be used as asked (e.g. resuming nothing)."""


def game_seed(seed: int, iteration: int, game: int) -> int:
    """The seed of game ``game`` of iteration ``iteration``."""
    return int(np.random.SeedSequence([seed, iteration, game]).generate_state(1, np.uint64)[0])


@dataclass
class RunState:
    """What the loop carries from one iteration to the next."""

    config: Config
    model: PolicyValueNet
    learner: Learner
    replay: ReplayBuffer
    iteration: int  # iterations completed
    history: dict[str, Any]
    #: Resumed without the replay file: the window restarted empty.
    replay_restarted: bool = False


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The records of a ``metrics.jsonl``, in order.

    A last line that does not parse was cut by a crash mid-write and is
    dropped; a bad line anywhere else raises :class:`RunError` naming it.
    """
    raw = path.read_bytes().splitlines()
    lines = [(n, line) for n, line in enumerate(raw, 1) if line.strip()]
    records = []
    for k, (number, line) in enumerate(lines):
        shown = line[:80].decode("utf-8", errors="replace")
        try:
            record = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            if k == len(lines) - 1:
                break
            raise RunError(f"{path}: line {number} is not a JSON record: {shown!r}") from None
        if not isinstance(record, dict):
            raise RunError(f"{path}: line {number} is not a JSON object: {shown!r}")
        records.append(record)
    return records


class MetricsLog:
    """Metrics to ``metrics.jsonl`` and TensorBoard, one record per iteration."""

    def __init__(self, run_dir: Path, resume_after: int | None) -> None:
        self.path = run_dir / METRICS_NAME
        #: Iterations whose record is in the file.
        self.logged: set[int] = set()
        if resume_after is not None and self.path.exists():
            # Drop records of iterations the resumed run will redo.
            kept = [
                record
                for record in read_metrics(self.path)
                if record.get("iteration", 0) <= resume_after
            ]
            write_text(self.path, "".join(json.dumps(record) + "\n" for record in kept))
            self.logged = {int(record.get("iteration", 0)) for record in kept}
        elif resume_after is None:
            write_text(self.path, "")
        from torch.utils.tensorboard import SummaryWriter

        purge = resume_after + 1 if resume_after is not None else None
        self.writer = SummaryWriter(str(run_dir / TB_NAME), purge_step=purge)

    def write(self, iteration: int, metrics: dict[str, float]) -> None:
        record = {"iteration": iteration, **metrics}
        self.logged.add(iteration)
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
        for key, value in metrics.items():
            self.writer.add_scalar(key, value, iteration)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


def prepare(config: Config, run_dir: Path, resume: bool) -> RunState:
    """Build the run's objects: fresh (from ``init`` weights when the config names
    them), or resumed from the run directory's latest checkpoint (grown into a
    bigger network when ``init.grow`` allows)."""
    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    checkpoint = _checkpoint_to_resume(run_dir, resume)
    state = _new_state(config, device)
    if checkpoint is None:
        _start_from_init_weights(state)
    else:
        _resume(state, checkpoint)
    return state


def _checkpoint_to_resume(run_dir: Path, resume: bool) -> Path | None:
    """The latest checkpoint when resuming; RunError for nothing to resume, or for a
    fresh run in a run directory that holds any earlier run's file (checkpoints, or
    only its text files: they would be truncated)."""
    if not resume:
        if list_checkpoints(run_dir):
            raise RunError(
                f"run directory {run_dir} already holds checkpoints; "
                "pass --resume to continue it or choose another --run-dir"
            )
        earlier = [name for name in RUN_FILES if os.path.lexists(run_dir / name)]
        if earlier:
            raise RunError(
                f"run directory {run_dir} already holds an earlier run's files "
                f"({', '.join(earlier)}) but no checkpoint to resume: they are not replaced; "
                "choose another --run-dir"
            )
        return None
    checkpoint = latest_checkpoint(run_dir)
    if checkpoint is None:
        raise RunError(f"cannot resume: run directory {run_dir} holds no checkpoint")
    return checkpoint


def _new_state(config: Config, device: torch.device) -> RunState:
    """A freshly seeded network, learner and empty replay window at iteration 0."""
    random.seed(config.seed)
    np.random.seed(config.seed % 2**32)
    torch.manual_seed(config.seed)
    model = PolicyValueNet(config.network).to(device)
    total_steps = config.iterations * config.optim.steps_per_iteration
    learner = Learner(model, config.optim, total_steps, device, amp=amp_enabled(config.amp, device))
    return RunState(config, model, learner, ReplayBuffer(config.replay.window), 0, new_history())


def _start_from_init_weights(state: RunState) -> None:
    """Load the weights the config's ``init`` names, if any, and their CPU clock."""
    init = load_init_weights(state.config)
    if init is None:
        return
    state.model.load_state_dict(init.model)
    state.history[INIT_KEY] = init.record()
    state.history[CPU_KEY] = init.cpu_s


def _resume(state: RunState, checkpoint: Path) -> None:
    """Go on from ``checkpoint``: its weights (grown if the config's network is
    bigger), optimizer, RNG states, iteration, history and replay window."""
    data = read_file(checkpoint)
    saved = config_of(data, checkpoint).network
    learner_state = data.get("learner")
    grown_from = None if saved == state.config.network else saved
    if grown_from is None:
        load_weights(state.model, data, checkpoint)
    else:
        learner_state = _grow_on_resume(state, data, checkpoint, grown_from)
    _restore_progress(state, data, checkpoint, learner_state, grown_from)
    _restore_replay(state, checkpoint)


def _grow_on_resume(
    state: RunState, data: dict[str, Any], checkpoint: Path, saved: NetworkConfig
) -> Any:
    """Load a checkpoint of a smaller network into the run's, grown (:mod:`train.grow`).

    Returns the checkpoint's learner state with the optimizer's moments of
    every unchanged weight mapped onto the grown network.  Refused, naming
    both networks, unless ``init.grow`` is set and the checkpoint's network
    can grow into the config's.
    """
    config = state.config
    old = load_weights(PolicyValueNet(saved), data, checkpoint)
    try:
        grown = grown_if_allowed(
            old.state_dict(), saved, config.network, config.init.grow, config.seed
        )
    except ValueError as exc:
        raise RunError(
            f"cannot resume {checkpoint}: its network config {saved} differs from the "
            f"requested {config.network}; {exc} (the replay window, schedule and CPU "
            "clock go on), or resume with the checkpoint's network"
        ) from None
    state.model.load_state_dict(grown)
    learner_state = data.get("learner")
    if isinstance(learner_state, dict) and isinstance(learner_state.get("optimizer"), dict):
        optimizer = carry_optimizer_state(learner_state["optimizer"], old, state.model)
        learner_state = {**learner_state, "optimizer": optimizer}
    return learner_state


#: What a checkpoint's malformed optimizer, RNG, iteration or history raises when
#: loaded (torch's ``load_state_dict``, the RNG setters, ``int()``, a history that
#: is not a dict).
_BAD_STATE = (KeyError, ValueError, TypeError, RuntimeError, IndexError, AttributeError)


def _restore_progress(
    state: RunState,
    data: dict[str, Any],
    checkpoint: Path,
    learner_state: Any,
    grown_from: NetworkConfig | None,
) -> None:
    """The optimizer, RNG states, iteration and history a checkpoint saved (where the
    network grew, noted in the history); CheckpointError naming what is unusable."""
    try:
        state.learner.load_state_dict(learner_state)
        set_rng_states(data["rng"])
        state.iteration = int(data["iteration"])
        state.history = data["history"]
        if grown_from is not None:
            state.history.setdefault(GROWN_KEY, []).append(
                {
                    "iteration": state.iteration,
                    "from": asdict(grown_from),
                    "to": asdict(state.config.network),
                }
            )
    except _BAD_STATE as exc:
        raise CheckpointError(
            f"checkpoint {checkpoint} holds no usable optimizer, RNG or iteration state: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _restore_replay(state: RunState, checkpoint: Path) -> None:
    """The checkpoint's replay window, or an empty one noted in the history when the
    checkpoint was restored without its replay file (train.tools.run_archive): learning
    then waits for ``replay.min_positions`` again."""
    if replay_path(checkpoint).exists():
        state.replay.load_state_dict(read_file(replay_path(checkpoint), "replay")["replay"])
    else:
        state.replay_restarted = True
        state.history.setdefault(RESTARTS_KEY, []).append(state.iteration)


def self_play(
    state: RunState, executor: SelfPlayExecutor
) -> tuple[SelfPlayResult, dict[str, float]]:
    """The iteration's games, played with the current weights, and their statistics."""
    config = state.config
    n = config.selfplay.games_per_iteration
    seeds = [game_seed(config.seed, state.iteration, g) for g in range(n)]
    weights = {k: v.detach().cpu() for k, v in state.model.state_dict().items()}
    result = executor.play(weights, seeds, state.iteration * n)
    stats = result.stats
    plies = sum(s.plies for s in stats)
    sims = sum(s.simulations for s in stats)
    seconds = max(result.seconds, 1e-9)
    disabled = [s for s in stats if s.resign_disabled]
    would = [s for s in disabled if s.would_resign]
    metrics = {
        "selfplay/games": float(len(stats)),
        "selfplay/positions": float(sum(len(g) for g in result.games)),
        "selfplay/game_length": plies / max(1, len(stats)),
        "selfplay/white_win": sum(s.result == Result.WHITE_WINS for s in stats)
        / max(1, len(stats)),
        "selfplay/draw": sum(s.result == Result.DRAW for s in stats) / max(1, len(stats)),
        "selfplay/resigned": sum(s.end_reason == Termination.RESIGN for s in stats)
        / max(1, len(stats)),
        "selfplay/false_resign": sum(s.false_resign for s in would) / max(1, len(would)),
        "selfplay/seconds": result.seconds,
        "selfplay/moves_per_s": plies / seconds,
        "selfplay/simulations_per_s": sims / seconds,
        "selfplay/network_positions_per_s": result.network_positions / seconds,
        "selfplay/network_share": result.network_seconds / max(result.worker_seconds, 1e-9),
        "selfplay/batch_size": result.network_positions / max(1, result.network_batches),
    }
    return result, metrics


def learn(state: RunState) -> dict[str, float]:
    """The iteration's gradient steps; mean of each loss over them."""
    config = state.config
    if len(state.replay) < config.replay.min_positions:
        return {}
    rng = np.random.default_rng([config.seed, state.iteration, 1])
    totals: dict[str, float] = {}
    steps = config.optim.steps_per_iteration
    for _ in range(steps):
        batch = state.replay.sample(config.optim.batch_size, rng, config.replay.symmetries)
        for key, value in state.learner.train_step(batch).items():
            totals[key] = totals.get(key, 0.0) + value
    return {k: v / steps for k, v in totals.items()} if steps else {}


def run(
    config: Config,
    run_dir: str | Path,
    resume: bool = False,
    progress: bool = True,
    on_iteration: Callable[[int, dict[str, float]], None] | None = None,
) -> Path:
    """Train until ``config.iterations`` or its ``cpu_minutes``; returns the last checkpoint's path.

    Raises :class:`ConfigError` naming the key, before anything is written,
    for a config this machine cannot run (:func:`train.preflight.check_runnable`).
    """
    check_runnable(config)
    run_dir = Path(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission
        raise RunError(f"cannot use run directory {run_dir}: {exc.strerror}") from None
    state = prepare(config, run_dir, resume)
    save_config(config, run_dir / CONFIG_NAME)
    log = MetricsLog(run_dir, state.iteration if resume else None)
    executor = make_executor(config)
    bar = tqdm(
        total=config.iterations,
        initial=state.iteration,
        desc="iterations",
        disable=not progress,
        dynamic_ncols=True,
    )
    last = latest_checkpoint(run_dir)
    started = time.perf_counter()
    clock = CpuClock()
    try:
        if state.iteration == 0 and not resume:
            bar.write(f"network: {count_parameters(state.model):,} parameters; run {run_dir}")
            if INIT_KEY in state.history:
                init = state.history[INIT_KEY]
                bar.write(
                    f"weights from {init['path']} (sha256 {init['sha256'][:12]}, "
                    f"{init['cpu_s'] / 3600:.2f} CPU-hours of training)"
                )
            text = json.dumps(config.to_dict(), indent=1)
            log.writer.add_text("config", f"```\n{text}\n```")
            start = {"optim/step": 0.0, "time/cpu_s": cpu_seconds(state)}
            last = _checkpoint(run_dir, state, start)
            _complete(run_dir, state, log, started, clock)
        elif _unlogged(state) is not None and state.iteration not in log.logged:
            # Killed after its checkpoint (in an evaluation, say): finish that iteration.
            _complete(run_dir, state, log, started, clock)
        if state.replay_restarted:
            bar.write(
                f"resumed at iteration {state.iteration} without its replay file: the window "
                f"restarts empty; learning waits for {config.replay.min_positions} positions"
            )
        while state.iteration < config.iterations and not budget_spent(state):
            t0 = time.perf_counter()
            result, metrics = self_play(state, executor)
            if state.replay_restarted:
                metrics["replay/restarted"] = 1.0
                state.replay_restarted = False
            for game in result.games:
                state.replay.add(game)
            t1 = time.perf_counter()
            metrics.update(learn(state))
            state.iteration += 1
            metrics["replay/positions"] = float(len(state.replay))
            metrics["replay/games_added"] = float(state.replay.games_added)
            metrics["optim/step"] = float(state.learner.step)
            metrics["time/selfplay_s"] = t1 - t0
            metrics["time/learn_s"] = time.perf_counter() - t1
            # Self-play and learning only, as the wall times above: the curve's x axis.
            state.history[CPU_KEY] = cpu_seconds(state) + clock.lap() + result.cpu_seconds
            metrics["time/cpu_s"] = state.history[CPU_KEY]
            last = _checkpoint(run_dir, state, metrics)
            _complete(run_dir, state, log, started, clock)
            bar.set_postfix(_postfix(metrics), refresh=False)
            bar.update(1)
            if on_iteration is not None:
                on_iteration(state.iteration, metrics)
        if last is not None and not (run_dir / BEST_NAME).exists():
            atomic_copy(last, run_dir / BEST_NAME)  # no rating decided: the final network
    finally:
        bar.close()
        executor.close()
        log.close()
    if last is None:
        raise CheckpointError(f"run {run_dir} finished without a checkpoint")
    return last


def _checkpoint(run_dir: Path, state: RunState, metrics: dict[str, float] | None = None) -> Path:
    """Save the state; ``metrics``: the iteration's, kept in it until they are logged."""
    if metrics is not None:
        state.history[UNLOGGED] = {"iteration": state.iteration, "metrics": metrics}
    return save_checkpoint(
        run_dir,
        state.iteration,
        state.config,
        state.model,
        state.learner.state_dict(),
        state.replay.state_dict(),
        state.history,
    )


def _unlogged(state: RunState) -> dict[str, float] | None:
    """The metrics of the checkpointed iteration, if the checkpoint holds them."""
    entry = state.history.get(UNLOGGED)
    if not isinstance(entry, dict) or entry.get("iteration") != state.iteration:
        return None
    metrics: dict[str, float] = entry["metrics"]
    return metrics


def cpu_seconds(state: RunState) -> float:
    """CPU seconds of self-play and learning so far (kept in the history across resumes)."""
    return float(state.history.get(CPU_KEY, 0.0))


def budget_spent(state: RunState) -> bool:
    """Whether the run has used its config's ``cpu_minutes`` (never, without one)."""
    minutes = state.config.cpu_minutes
    return bool(minutes) and cpu_seconds(state) >= 60 * minutes


def _eval_due(state: RunState) -> bool:
    config, iteration = state.config, state.iteration
    every = config.eval.every
    if iteration == 0:
        return bool(every)  # the untrained network: where the learning curve starts
    last = iteration == config.iterations or budget_spent(state)
    return bool(every and iteration % every == 0) or last


def _complete(
    run_dir: Path, state: RunState, log: MetricsLog, started: float, clock: CpuClock
) -> None:
    """The iteration's work after its checkpoint: evaluate when due, prune, log.

    Its metrics wait in the checkpoint until logged, so a run killed in here
    (in an evaluation, say) does all of it again on resume.
    """
    metrics = _unlogged(state)
    assert metrics is not None
    if _eval_due(state) and state.iteration not in state.history["evaluated"]:
        start = time.perf_counter()
        clock.lap()
        metrics.update(evaluate(run_dir, state.iteration, state.config, state.history))
        metrics["time/eval_s"] = time.perf_counter() - start
        metrics["time/eval_cpu_s"] = clock.lap()
        _checkpoint(run_dir, state)  # the updated history, with the evaluation's metrics
    # The untrained network and every evaluated one stay (the Elo ladder).
    protected = {0, *state.history["evaluated"]}
    prune_checkpoints(run_dir, state.config.keep_checkpoints, protected)
    if state.iteration > 0:
        metrics["time/elapsed_s"] = time.perf_counter() - started
    log.write(state.iteration, metrics)


def _postfix(metrics: dict[str, float]) -> dict[str, str]:
    shown = {
        "loss/policy": "pol",
        "loss/value": "val",
        "selfplay/game_length": "len",
        "eval/raw_vs_random/score": "raw-rnd",
        "eval/elo": "elo",
    }
    return {short: f"{metrics[key]:.3g}" for key, short in shown.items() if key in metrics}
