"""Environment speed: random masked play through the AEC API, YINSH against connect four.

Every environment is driven by the loop a PettingZoo user writes::

    env.reset()
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else <sample from observation["action_mask"]>
        env.step(action)

and the figure is ``env.step`` calls per second (end-of-game steps included,
as a user's loop makes them).  Measured for YINSH's ``env()`` (PettingZoo's
classic-game wrappers in one layer), YINSH under PettingZoo's three wrapper
classes stacked one by one, YINSH's ``raw_env``, and PettingZoo's
``connect_four_v3`` (``env()`` and ``raw_env``), interleaved in rounds in one
run; each figure is the best round, and CPU time of this process is the clock
by default, so other work on the machine disturbs the figures less.

Two samplers: ``nonzero`` draws uniformly from ``mask.nonzero()[0]`` with
:mod:`random`;
``space`` is ``env.action_space(agent).sample(mask)``, the idiom of
PettingZoo's docs (Gymnasium's masked ``Discrete.sample``, which costs more
for YINSH's 2,142 actions than for connect four's 7).

    python -m benchmarks.bench_env [--seconds 2] [--rounds 3] [--sampler nonzero space]

Connect four needs pygame (``pip install "pettingzoo[classic]"``).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.infra.cli_args import int_in, number_in

Sampler = Callable[[Any, str, np.ndarray], int]
Factory = Callable[[], Any]


def nonzero_sampler(seed: int = 0) -> Sampler:
    """Uniform over ``mask.nonzero()``, drawn with :mod:`random` (cheap per call)."""
    rng = random.Random(seed)

    def sample(env: Any, agent: str, mask: np.ndarray) -> int:
        legal = mask.nonzero()[0]
        return int(legal[rng.randrange(len(legal))])

    return sample


def space_sampler(env: Any, agent: str, mask: np.ndarray) -> int:
    return int(env.action_space(agent).sample(mask))


def run_loop(make: Factory, sampler: Sampler, seconds: float, clock: Callable[[], float]) -> dict:
    """Steps and games per second of the user's AEC loop over ``seconds``."""
    env = make()
    env.reset(seed=0)
    steps = games = 0
    start = clock()
    while clock() - start < seconds:
        env.reset()
        for agent in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                action = sampler(env, agent, observation["action_mask"])
            env.step(action)
            steps += 1
        games += 1
    elapsed = clock() - start
    env.close()
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps}


def environments() -> dict[str, Factory]:
    """The environments to compare; connect four only where pygame is installed."""
    from yinsh_env.envs.aec_env import env, raw_env, standard_wrappers

    envs: dict[str, Factory] = {
        "yinsh env()": env,
        "yinsh 3 wrappers": lambda: standard_wrappers(raw_env()),
        "yinsh raw_env": raw_env,
    }
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError as err:  # pygame missing
        print(f"connect_four_v3 unavailable ({err}); pip install 'pettingzoo[classic]'")
    else:
        envs["connect_four_v3 env()"] = connect_four_v3.env
        envs["connect_four_v3 raw_env"] = connect_four_v3.raw_env
    return envs


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, dict]]:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_env", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--seconds",
        type=number_in(0, 3600, above=True),
        default=2.0,
        help="per environment per round",
    )
    parser.add_argument(
        "--rounds", type=int_in(1, 1000), default=3, help="interleaved rounds; best kept"
    )
    parser.add_argument(
        "--sampler", nargs="+", choices=("nonzero", "space"), default=["nonzero", "space"]
    )
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args(argv)

    import warnings

    warnings.filterwarnings("ignore")  # PettingZoo's deprecation notices for classic envs
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    envs = environments()
    results: dict[str, dict[str, dict]] = {}
    for sampler_name in args.sampler:
        best: dict[str, dict] = {}
        for _ in range(args.rounds):
            for name, make in envs.items():
                sampler = nonzero_sampler() if sampler_name == "nonzero" else space_sampler
                result = run_loop(make, sampler, args.seconds, clock)
                if name not in best or result["steps_per_s"] > best[name]["steps_per_s"]:
                    best[name] = result
        results[sampler_name] = best
        reference = best.get("connect_four_v3 env()", {}).get("steps_per_s")
        print(f"\nsampler: {sampler_name} | clock: {args.clock} | best of {args.rounds} rounds")
        print(f"{'environment':<26}{'steps/s':>10}{'games/s':>10}{'vs c4 env()':>13}")
        for name, result in best.items():
            ratio = f"{result['steps_per_s'] / reference:.2f}x" if reference else "-"
            print(
                f"{name:<26}{result['steps_per_s']:>10,.0f}"
                f"{result['games_per_s']:>10,.1f}{ratio:>13}"
            )
    if args.json:
        print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
