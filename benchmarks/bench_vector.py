"""Vector environment speed: learner steps per CPU-second, batched against scalar.

Both loops play random masked actions for the learner against the uniformly
random opponent, as a user's loop does:

* scalar: ``gym.make("Yinsh-v0")``, one action a step drawn uniformly from
  ``np.flatnonzero(mask)`` with :mod:`random` (cheaper per call than
  ``np.random.Generator.choice``, so the scalar figure is not understated),
  ``reset()`` at each game's end;
* vector: ``gym.make_vec("Yinsh-v0", num_envs=N,
  vectorization_mode="vector_entry_point")`` (SAME_STEP autoreset), N actions
  a step drawn by :func:`yinsh_env.vector.batch_agents.random_legal`.

A figure is learner steps (one learner decision in one game; the
opponent's replies included) per CPU-second of this process
(``time.process_time``), so other work on the machine disturbs it less; the
two are measured in alternating rounds in one run and each takes its best
round, and the ratio of the two is the result.

    python -m benchmarks.bench_vector [--envs 256] [--seconds 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import yinsh_env.envs.gym_env  # noqa: F401  (registers Yinsh-v0)
from agents.infra.cli_args import int_in, number_in
from yinsh_env.vector.batch_agents import random_legal
from yinsh_env.vector.env import MAX_NUM_ENVS


def scalar_rate(seconds: float, seed: int = 0) -> float:
    """Learner steps per CPU-second of ``Yinsh-v0`` with random masked actions."""
    env = gym.make("Yinsh-v0")
    rng = random.Random(seed)
    observation, _ = env.reset(seed=seed)
    steps = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(100):
            legal = np.flatnonzero(observation["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                observation, _ = env.reset()
        steps += 100
    rate = steps / (time.process_time() - start)
    env.close()
    return rate


def vector_rate(envs: int, seconds: float, seed: int = 0) -> float:
    """Learner steps per CPU-second of the vector env (``envs`` games), random masked actions."""
    vec = gym.make_vec("Yinsh-v0", num_envs=envs, vectorization_mode="vector_entry_point")
    rng = np.random.default_rng(seed)
    observation, _ = vec.reset(seed=seed)
    steps = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(10):
            actions = random_legal(observation["action_mask"], rng)
            observation, _, _, _, _ = vec.step(actions)
        steps += 10 * envs
    rate = steps / (time.process_time() - start)
    vec.close()
    return rate


def machine() -> str:
    """The CPU's model name and the number of cores this process may use."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            name = next(line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line)
    except (OSError, StopIteration):
        pass
    return f"{name}, {len(os.sched_getaffinity(0))} cores"


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int_in(1, MAX_NUM_ENVS), default=256)
    parser.add_argument("--seconds", type=number_in(0.1, 600.0), default=2.0)
    parser.add_argument("--rounds", type=int_in(1, 100), default=3)
    args = parser.parse_args(argv)
    scalar = vector = 0.0
    for _ in range(args.rounds):
        scalar = max(scalar, scalar_rate(args.seconds))
        vector = max(vector, vector_rate(args.envs, args.seconds))
    result = {
        "envs": args.envs,
        "scalar_steps_per_cpu_s": round(scalar),
        "vector_steps_per_cpu_s": round(vector),
        "ratio": round(vector / scalar, 2),
    }
    print(f"machine: {machine()}, python {platform.python_version()}, numpy {np.__version__}")
    print(f"scalar Yinsh-v0: {scalar:,.0f} learner steps per CPU-second")
    print(f"vector N={args.envs}: {vector:,.0f} learner steps per CPU-second")
    print(f"ratio: {vector / scalar:.2f}x")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
