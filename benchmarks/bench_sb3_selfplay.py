"""SB3 self-play speed: the MaskablePPO script today against the script at an older commit.

Both run ``--self-play`` (MaskablePPO against a pool of its own frozen
snapshots) for ``--minutes`` each (``--timesteps`` set out of reach), with
their default settings otherwise, in alternating rounds in one run:

* old: ``python -m train.sb3_maskable_ppo`` from ``git archive REV`` (by
  default the last commit before the vector environment: scalar
  environments in SB3's ``DummyVecEnv``, the snapshot opponents asked one
  move at a time);
* new: ``python -m train.libraries.sb3_maskable_ppo`` from this tree.

Each process runs under a small driver that times ``MaskablePPO.learn``: its
wall time, and the CPU time of the process while it ran
(``time.process_time``, all threads), so other work on the machine disturbs
the second figure less.  A figure is learner steps per second of either;
each side takes its best round, and the ratio new/old is the result.

    python -m benchmarks.bench_sb3_selfplay [--minutes 1] [--rounds 2] [--rev 798123a]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path

from agents.infra.cli_args import int_in, number_in

ROOT = Path(__file__).resolve().parent.parent
#: The last commit whose SB3 script ran on the scalar environments.
OLD_REV = "798123a"
OLD_MODULE = "train.sb3_maskable_ppo"
NEW_MODULE = "train.libraries.sb3_maskable_ppo"

#: Runs ``sys.argv[1]`` as ``__main__`` with the rest as its arguments, timing ``learn``.
DRIVER = """
import runpy, sys, time
from sb3_contrib import MaskablePPO
learn = MaskablePPO.learn
def timed(self, *args, **kwargs):
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        return learn(self, *args, **kwargs)
    finally:
        print(f"BENCH steps={self.num_timesteps} cpu={time.process_time() - cpu:.3f} "
              f"wall={time.perf_counter() - wall:.3f}", flush=True)
MaskablePPO.learn = timed
module, sys.argv = sys.argv[1], sys.argv[1:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""
_LINE = re.compile(r"BENCH steps=(\d+) cpu=([\d.]+) wall=([\d.]+)")


def extract(rev: str, into: Path) -> Path:
    """The project's packages at ``rev`` (``git archive``), unpacked into ``into``."""
    archive = subprocess.run(
        ["git", "archive", rev, "agents", "train", "yinsh_env"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run(module: str, path: Path, minutes: float, extra: Sequence[str]) -> dict[str, float]:
    """One self-play run of ``module`` with ``path`` first on the import path."""
    args = ["--self-play", "--minutes", f"{minutes:g}", "--timesteps", "1000000000"]
    args += ["--eval-games", "0", *extra]
    env = {**os.environ, "PYTHONPATH": str(path)}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, module, *args],
        cwd=path,
        env=env,
        capture_output=True,
        text=True,
    )
    found = _LINE.search(done.stdout)
    if done.returncode or found is None:
        raise RuntimeError(f"{module} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    steps, cpu, wall = int(found[1]), float(found[2]), float(found[3])
    return {"steps": steps, "steps_per_s": steps / wall, "steps_per_cpu_s": steps / cpu}


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=number_in(0.05, 60.0), default=1.0, help="per run")
    parser.add_argument("--rounds", type=int_in(1, 20), default=2)
    parser.add_argument("--rev", default=OLD_REV, help="the commit of the old script")
    parser.add_argument(
        "--new-args", nargs=argparse.REMAINDER, default=[], help="more flags for the new script"
    )
    args = parser.parse_args(argv)
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-sb3-") as tmp:
        old_tree = extract(args.rev, Path(tmp))
        for round_ in range(args.rounds):
            for name, module, path, extra in (
                ("old", OLD_MODULE, old_tree, []),
                ("new", NEW_MODULE, ROOT, ["--no-tensorboard", *args.new_args]),
            ):
                figures = run(module, path, args.minutes, extra)
                print(
                    f"round {round_ + 1} {name}: {figures['steps']} steps, "
                    f"{figures['steps_per_s']:,.0f}/s, {figures['steps_per_cpu_s']:,.0f} per "
                    "CPU-second",
                    flush=True,
                )
                kept = best.setdefault(name, figures)
                for key in ("steps_per_s", "steps_per_cpu_s"):
                    kept[key] = max(kept[key], figures[key])
    old, new = best["old"], best["new"]
    result = {
        "minutes": args.minutes,
        "old_steps_per_s": round(old["steps_per_s"]),
        "new_steps_per_s": round(new["steps_per_s"]),
        "ratio": round(new["steps_per_s"] / old["steps_per_s"], 2),
        "old_steps_per_cpu_s": round(old["steps_per_cpu_s"]),
        "new_steps_per_cpu_s": round(new["steps_per_cpu_s"]),
        "cpu_ratio": round(new["steps_per_cpu_s"] / old["steps_per_cpu_s"], 2),
    }
    print(
        f"old {args.rev}: {old['steps_per_s']:,.0f} steps/s; new: {new['steps_per_s']:,.0f} "
        f"steps/s; ratio {result['ratio']:.2f}x (per CPU-second {result['cpu_ratio']:.2f}x)"
    )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
