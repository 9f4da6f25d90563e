"""Self-play on Ray: same games as one process, a short run, and actors that die mid-run.

Runs on a local Ray the tests start (two CPUs, no dashboard; conftest's
``ray_cluster``), stopped at the end.  Tests that need Ray skip where it is
not installed (``pip install -e ".[ray]"``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from helpers import load_yaml_config

from train.config import (
    Config,
    ConfigError,
    NetworkConfig,
    RayConfig,
    SearchConfig,
    SelfPlayConfig,
    load_config,
)
from train.run_checkpoint import checkpoint_path, latest_checkpoint, read_file
from train.trainer import run

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

# One game in flight: every backend then evaluates the same network batches
# (single leaves), so whole runs agree to the last bit; with several games in
# flight the games agree, but a leaf's logits can differ in the last float
# bit with its batch mates, and so can the learner's targets.
TINY = """\
seed: 5
iterations: 2
backend: ray
network: {blocks: 1, channels: 8, value_hidden: 8}
search: {simulations: 6, gumbel_considered: 4}
selfplay: {games_per_iteration: 6, games_in_flight: 1, fast_simulations: 2,
           full_search_prob: 0.5}
replay: {window: 5000, min_positions: 8}
optim: {batch_size: 16, steps_per_iteration: 2, warmup_steps: 1}
eval: {every: 0, games: 2, opponents: [random], simulations: 2, search_games: 0}
ray: {actors: 2, games_per_task: 1}
"""


def tiny_config(tmp_path: Path, *overrides: str) -> Config:
    return load_yaml_config(tmp_path, TINY, *overrides)


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_ray_config_section_is_checked(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, "ray.address=ray://head:10001", "ray.gpus_per_actor=0.5")
    assert config.ray.address == "ray://head:10001" and config.ray.gpus_per_actor == 0.5
    assert tiny_config(tmp_path, "ray.address=null").ray.address is None
    assert load_config(CONFIGS / "ray.yaml").backend == "ray"
    for bad, problem in [
        ("ray.address=somewhere", "ray.address"),
        ("ray.address=3", "ray.address"),
        ("ray.actors=-1", "ray.actors"),
        ("ray.cpus_per_actor=-0.5", "ray.cpus_per_actor"),
        ("ray.actor=2", "ray.actor"),
        ("backend=dask", "backend"),
    ]:
        with pytest.raises(ConfigError, match=problem):
            tiny_config(tmp_path, bad)


def test_without_ray_the_backend_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from train.selfplay_workers import make_executor

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    monkeypatch.delitem(sys.modules, "train.ray_backend", raising=False)
    with pytest.raises(ConfigError, match=r"pip install -e \"\.\[ray\]\""):
        make_executor(tiny_config(tmp_path))


@pytest.mark.slow
@pytest.mark.ray
def test_ray_actors_play_the_same_games_as_one_process(ray_cluster: Any) -> None:
    from agents.network.network import PolicyValueNet
    from train.ray_backend import RayExecutor, split_tasks
    from train.selfplay_workers import InProcessExecutor

    assert split_tasks([1, 2, 3, 4, 5], 2) == [(0, [1, 2]), (2, [3, 4]), (4, [5])]
    config = Config(
        backend="ray",
        network=NetworkConfig(blocks=1, channels=8, value_hidden=8),
        search=SearchConfig(simulations=6, gumbel_considered=4),
        selfplay=SelfPlayConfig(games_in_flight=4, fast_simulations=2, full_search_prob=0.5),
        ray=RayConfig(actors=2, games_per_task=1),
    )
    torch.manual_seed(0)
    weights = PolicyValueNet(config.network).state_dict()
    seeds = [31, 32, 33, 34]
    local = InProcessExecutor(config).play(weights, seeds, first_index=10)
    executor = RayExecutor(config)
    try:
        assert len(executor.actors) == 2 and not executor.owns_ray
        remote = executor.play(weights, seeds, first_index=10)
        # New weights reach the actors: other weights play other games.
        other = {k: torch.randn_like(v) if v.is_floating_point() else v for k, v in weights.items()}
        changed = executor.play(other, seeds[:2], first_index=10)
    finally:
        executor.close()
    assert [s.index for s in remote.stats] == [10, 11, 12, 13]
    assert remote.cpu_seconds > 0  # the actors' CPU time, for the strength-per-CPU-hour curve
    assert [s.actions for s in remote.stats] == [s.actions for s in local.stats]
    assert remote.network_positions == local.network_positions
    assert [s.actions for s in changed.stats] != [s.actions for s in remote.stats[:2]]
    # The games are the driver's own arrays, not read-only views into Ray's object store.
    assert all(g.bits.flags.writeable and g.policy_probs.flags.writeable for g in remote.games)
    assert ray_cluster.is_initialized()  # a connection it did not open stays open


def metrics(run_dir: Path) -> list[dict[str, float]]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.ray
def test_killing_actors_mid_run_does_not_stop_it_or_change_its_results(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from train import selfplay_workers as workers
    from train.ray_backend import RayExecutor

    config = tiny_config(tmp_path)
    executors: list[RayExecutor] = []
    killed: list[int] = []

    done: list[int] = []

    def kill_a_busy_actor(executor: RayExecutor, task: int) -> None:
        """At the first finished task of each iteration, kill an actor still playing."""
        done.append(task)
        if len(done) % 6 == 1:  # six tasks of one game per iteration
            busy = executor.busy_actors()
            assert busy, "the other tasks are still in flight"
            ray_cluster.kill(busy[0])
            killed.append(task)

    def chaotic(cfg: Config) -> RayExecutor:
        executor = RayExecutor(cfg, on_task_done=kill_a_busy_actor)
        executors.append(executor)
        return executor

    monkeypatch.setitem(workers.EXECUTORS, "ray", chaotic)
    ray_dir = tmp_path / "ray"
    last = run(config, ray_dir, progress=False)

    assert len(killed) == 2 and executors[0].actor_failures == 2
    assert last == checkpoint_path(ray_dir, 2) == latest_checkpoint(ray_dir)
    records = metrics(ray_dir)
    assert [r["iteration"] for r in records] == [0, 1, 2]
    assert all(r["selfplay/games"] == 6 for r in records[1:])
    data = read_file(last)
    assert data["iteration"] == 2 and data["learner"]["step"] == 4

    # Nothing was lost or played twice: the run is the one a single process makes.
    local_dir = tmp_path / "local"
    run(tiny_config(tmp_path, "backend=inprocess"), local_dir, progress=False)
    for key in ("selfplay/positions", "selfplay/game_length", "loss/total"):
        assert [r.get(key) for r in records] == [r.get(key) for r in metrics(local_dir)]
    ours, theirs = data["model"], read_file(checkpoint_path(local_dir, 2))["model"]
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs)


@pytest.mark.ray
def test_too_many_actor_deaths_stop_the_iteration(ray_cluster: Any) -> None:
    from agents.network.network import PolicyValueNet
    from train.ray_backend import RayBackendError, RayExecutor

    config = Config(
        backend="ray",
        network=NetworkConfig(blocks=1, channels=8, value_hidden=8),
        search=SearchConfig(simulations=4, gumbel_considered=4),
        selfplay=SelfPlayConfig(games_in_flight=2, fast_simulations=2),
        ray=RayConfig(actors=2, games_per_task=1, max_actor_failures=0),
    )

    def kill(executor: RayExecutor, task: int) -> None:
        for actor in executor.busy_actors():
            ray_cluster.kill(actor)

    executor = RayExecutor(config, on_task_done=kill)
    weights = PolicyValueNet(config.network).state_dict()
    try:
        with pytest.raises(RayBackendError, match="max_actor_failures"):
            executor.play(weights, [1, 2, 3, 4], first_index=0)
    finally:
        executor.close()
    assert executor.actors == []
