"""Two code trees, one benchmark, rounds interleaved: speed ratios on a shared machine.

A speed change is measured against the code before it, in one run: each side
is a long-lived worker process whose ``PYTHONPATH`` is its own checkout (this
one, or e.g. ``git worktree add ../base b3e447b --detach``), so the same job
runs on both codes; the driver asks the sides for a round in turn (A B A B
...), and every round is timed in the worker's own CPU time
(:func:`time.process_time`, one thread), so other jobs on the machine slow
both sides alike and a drift in the machine's speed cancels out of the
round-by-round ratio.  Workers load one thread of everything (``OMP``, torch,
ONNX Runtime), the per-core figure.

Jobs (the workers import only APIs both codes share):

* ``agent SPEC``: the agent decides on fixed ring-move positions (seeded
  random games, 20 to 60 plies in; the same on both sides); the figure is
  decisions and simulations (``--sims``, the spec's count) per CPU second;
* ``match SPEC``: two agents of the spec (each its own, as in an arena match)
  play ``--games`` games from seeded random openings (6 plies); the figure is
  simulations per CPU second over the decisions that searched (more than one
  legal action), what an agent's memory of earlier decisions can speed up;
* ``selfplay CONFIG [key=value ...]``: ``--games`` self-play games of a
  config with a freshly initialised, seeded network, as
  ``benchmarks.bench_selfplay`` plays them, or with a trained network of the
  config's shape (``--network``, e.g. ``agents/network/weights/pretrained.pt`` for
  ``configs/long.yaml``); the figure is moves per CPU second.

Each round also returns a digest of what was played (the actions chosen), so
the driver says whether both sides played the same games: a speed-up that
keeps results equivalent shows the same digest.

    python -m benchmarks.interleave --side base=../base --side new=. agent pretrained
    python -m benchmarks.interleave --side base=../base --side new=. --games 2 match pretrained
    python -m benchmarks.interleave --side base=../base --side new=. --games 16 \\
        selfplay configs/long.yaml
    python -m benchmarks.interleave --side fp32=.@pretrained:precision=fp32 \\
        --side int8=.@pretrained:precision=int8 agent pretrained

``LABEL=TREE@ARGS`` gives one side its own job arguments (an agent spec, or a
config and overrides separated by spaces).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# --- the jobs (run inside a worker) ------------------------------------------------


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def forget(agent: Any) -> None:
    """Empty an agent's evaluation cache, if it keeps one: rounds replay the same decisions."""
    cache = getattr(agent, "cache", None)
    if cache is not None:
        cache.clear()


def ring_move_positions(count: int, seed: int) -> list[Any]:
    """``count`` ring-move positions with a choice, from seeded random games (20-60 plies).

    Like :func:`benchmarks.bench_agents.sample_positions`, but written out here:
    a worker runs this file against the other side's tree, which may predate any
    helper the benchmarks share (the workers import only APIs both codes share).
    """
    from yinsh_env import Phase, State

    rng = random.Random(seed)
    positions: list[Any] = []
    while len(positions) < count:
        state = State()
        stop = rng.randrange(20, 60)
        while not state.is_terminal and state.ply < stop:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        if state.phase == Phase.MOVE and len(state.legal_actions()) > 1:
            positions.append(state.copy())
    return positions


class AgentJob:
    """One agent deciding on fixed positions; a round is one decision per position."""

    def __init__(self, spec: str, positions: int, seed: int) -> None:
        from agents import make_agent

        _one_thread()
        self.agent = make_agent(spec, seed=seed)
        self.positions = ring_move_positions(positions, seed)
        self.seed = seed
        self.agent.act(self.positions[0].copy())  # warm-up: first-call costs stay out

    def round(self) -> dict[str, Any]:
        digest = hashlib.sha256()
        start = time.process_time()
        for i, state in enumerate(self.positions):
            self.agent.reset(seed=self.seed + i)
            forget(self.agent)  # each decision on its own, as the first of a game
            digest.update(str(self.agent.act(state.copy())).encode())
        return {
            "cpu": time.process_time() - start,
            "decisions": len(self.positions),
            "digest": digest.hexdigest()[:12],
        }


class MatchJob:
    """Two agents of one spec playing each other; a round is ``games`` seeded games."""

    def __init__(self, spec: str, games: int, seed: int) -> None:
        from agents import make_agent

        _one_thread()
        self.agents = [make_agent(spec, seed=seed), make_agent(spec, seed=seed + 1)]
        self.games, self.seed = games, seed

    def round(self) -> dict[str, Any]:
        from yinsh_env import State

        digest = hashlib.sha256()
        decisions = 0
        start = time.process_time()
        for game in range(self.games):
            rng = random.Random(self.seed + game)
            for i, agent in enumerate(self.agents):
                agent.reset(seed=self.seed + 2 * game + i)
                forget(agent)  # no game starts with what a round before saw
            state = State()
            while not state.is_terminal and state.ply < 400:
                legal = state.legal_actions()
                if state.ply < 6:
                    action = legal[rng.randrange(len(legal))]
                else:
                    decisions += len(legal) > 1
                    action = self.agents[state.to_act].act(state.copy())
                digest.update(str(action).encode())
                state.apply(action)
        return {
            "cpu": time.process_time() - start,
            "decisions": decisions,
            "digest": digest.hexdigest()[:12],
        }


class SelfPlayJob:
    """Self-play games of a config with a fresh seeded network; a round plays them all."""

    def __init__(self, args: list[str], games: int, network: str | None) -> None:
        import torch

        from agents.network.inference import resolve_device
        from agents.network.network import PolicyValueNet
        from agents.network.onnx_inference import make_evaluator
        from train.config import load_config
        from train.config_files import resolve_config
        from train.selfplay import play_games
        from train.trainer import game_seed

        _one_thread()
        config = load_config(resolve_config(args[0]), args[1:])
        torch.manual_seed(config.seed)
        model = PolicyValueNet(config.network)
        if network:
            from train.run_checkpoint import load_model

            model.load_state_dict(load_model(network)[0].state_dict())
        device = resolve_device(config.device)
        precision = getattr(config, "inference_precision", None)  # not in older codes
        extra = {} if precision is None else {"precision": precision}
        self.evaluator = make_evaluator(model, device, config.inference, amp=config.amp, **extra)
        self.seeds = [game_seed(config.seed, 0, g) for g in range(games)]
        self.config = config
        self.play_games = play_games

    def round(self) -> dict[str, Any]:
        start = time.process_time()
        result = self.play_games(
            self.evaluator, self.seeds, self.config.search, self.config.selfplay
        )
        cpu = time.process_time() - start
        digest = hashlib.sha256(str([s.actions for s in result.stats]).encode())
        return {
            "cpu": cpu,
            "moves": sum(s.plies for s in result.stats),
            "simulations": sum(s.simulations for s in result.stats),
            "digest": digest.hexdigest()[:12],
        }


def _sys_seconds() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def serve(job_args: list[str], options: dict[str, Any]) -> None:
    """Worker loop: build the job, then answer each ``round`` line with one JSON line."""
    if options["cpu"] is not None:
        os.sched_setaffinity(0, {options["cpu"]})
    kind, rest = job_args[0], job_args[1:]
    job: AgentJob | MatchJob | SelfPlayJob
    if kind == "agent":
        job = AgentJob(rest[0], options["positions"], options["seed"])
    elif kind == "match":
        job = MatchJob(rest[0], options["games"], options["seed"])
    else:
        job = SelfPlayJob(rest, options["games"], options["network"])
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        sys_start = _sys_seconds()
        result = job.round()
        result["sys"] = _sys_seconds() - sys_start
        print(json.dumps(result), flush=True)


# --- the driver ------------------------------------------------------------------------


@dataclass
class Side:
    label: str
    tree: Path
    job: list[str]
    process: subprocess.Popen[str] | None = None

    def start(self, options: dict[str, Any]) -> None:
        env = dict(os.environ, PYTHONPATH=str(self.tree), OMP_NUM_THREADS="1")
        code = (
            "import json, runpy, sys; "
            "m = runpy.run_path(sys.argv[1]); m['serve'](json.loads(sys.argv[2]), "
            "json.loads(sys.argv[3]))"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, __file__, json.dumps(self.job), json.dumps(options)],
            cwd=self.tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ask(None)

    def ask(self, command: str | None) -> dict[str, Any]:
        assert self.process is not None and self.process.stdin and self.process.stdout
        if command is not None:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"side {self.label}: worker exited (code {self.process.wait()})")
        return dict(json.loads(line))

    def stop(self) -> None:
        if self.process is not None:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=60)


def parse_side(text: str, job: list[str]) -> Side:
    """``LABEL=TREE`` or ``LABEL=TREE@ARGS`` (ARGS replace the job's arguments)."""
    label, eq, rest = text.partition("=")
    if not eq or not label:
        raise argparse.ArgumentTypeError(f"side {text!r}: expected LABEL=TREE[@ARGS]")
    tree, at, extra = rest.partition("@")
    path = Path(tree).resolve()
    if not (path / "agents").is_dir():
        raise argparse.ArgumentTypeError(f"side {text!r}: {path} is not a checkout of this project")
    return Side(label, path, [job[0], *extra.split()] if at else list(job))


def rate(result: dict[str, Any], kind: str, sims: int) -> float:
    """The round's figure: simulations (agent) or moves (self-play) per CPU second."""
    work = result["moves"] if kind == "selfplay" else result["decisions"] * sims
    return float(work) / result["cpu"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.interleave", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--side", action="append", required=True, help="LABEL=TREE[@ARGS]")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--positions", type=int, default=12, help="agent job: positions")
    parser.add_argument("--sims", type=int, default=256, help="agent job: simulations a decision")
    parser.add_argument("--games", type=int, default=16, help="match, selfplay: games a round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--network", help="selfplay job: a trained checkpoint of the config's shape"
    )
    parser.add_argument(
        "--cpu",
        type=int,
        default=max(os.sched_getaffinity(0)),
        help="the processor every side runs on (one core for all: a fair comparison)",
    )
    parser.add_argument(
        "job", nargs="+", help="agent SPEC | match SPEC | selfplay CONFIG [key=value ...]"
    )
    args = parser.parse_args(argv)
    if args.job[0] not in ("agent", "match", "selfplay") or len(args.job) < 2:
        parser.error("job: agent SPEC, match SPEC, or selfplay CONFIG [key=value ...]")
    sides = [parse_side(text, args.job) for text in args.side]
    options = {
        "positions": args.positions,
        "games": args.games,
        "seed": args.seed,
        "cpu": args.cpu,
        "network": args.network,
    }
    kind = args.job[0]
    unit = "moves/CPU-s" if kind == "selfplay" else "simulations/CPU-s"
    rates: dict[str, list[float]] = {s.label: [] for s in sides}
    digests: dict[str, set[str]] = {s.label: set() for s in sides}
    try:
        for side in sides:
            side.start(options)
        for r in range(args.rounds):
            for side in sides if r % 2 == 0 else reversed(sides):
                result = side.ask("round")
                rates[side.label].append(rate(result, kind, args.sims))
                digests[side.label].add(result["digest"])
            print(
                f"round {r + 1}: "
                + "  ".join(f"{s.label} {rates[s.label][-1]:,.1f}" for s in sides),
                flush=True,
            )
    finally:
        for side in sides:
            side.stop()
    base = sides[0].label
    print(f"\n| side | job | {unit} (median) | range | vs {base} (median of round ratios) |")
    print("|---|---|---|---|---|")
    for side in sides:
        ratios = [a / b for a, b in zip(rates[side.label], rates[base])]
        values = rates[side.label]
        print(
            f"| {side.label} | {' '.join(side.job)} | {statistics.median(values):,.1f} | "
            f"{min(values):,.1f}-{max(values):,.1f} | {statistics.median(ratios):.2f}x |"
        )
    same = len({frozenset(d) for d in digests.values()}) == 1
    print(
        "games played: "
        + (
            "the same on every side"
            if same
            else "different ("
            + ", ".join(f"{k} {'/'.join(sorted(v))}" for k, v in digests.items())
            + ")"
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
