"""Thinking time of the baseline agents on a fixed set of mid-game positions.

Usage (from the project root)::

    python -m benchmarks.bench_agents [--positions N] [--seed S] [SPEC ...]

Plays seeded random games (random ring placements, then random moves) and
keeps ``N`` positions from the ring-move phase where the player to act has a
real choice; then times each agent spec's ``act`` on every position and prints
the mean and the maximum seconds per decision, and the nodes or simulations
where the agent reports them.  The default specs are the baselines at their
default settings.  Figures are noisy on a shared machine: run it twice.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from agents import make_agent
from agents.infra.cli_args import agent_spec, int_in
from yinsh_env import Phase, State

DEFAULT_SPECS = ("random", "greedy", "alphabeta", "mcts")


def sample_positions(count: int, seed: int) -> list[State]:
    """``count`` ring-move positions from seeded random games, 10 to 60 plies in."""
    rng = random.Random(seed)
    positions: list[State] = []
    while len(positions) < count:
        state = State()
        stop = rng.randrange(10, 60)
        while not state.is_terminal and state.ply < stop:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        if state.phase == Phase.MOVE and len(state.legal_actions()) > 1:
            positions.append(state.copy())
    return positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="*", type=agent_spec, default=list(DEFAULT_SPECS))
    parser.add_argument("--positions", type=int_in(1, 100_000), default=20)
    parser.add_argument("--seed", type=int_in(0, 2**63 - 1), default=0)
    args = parser.parse_args()
    positions = sample_positions(args.positions, args.seed)
    print(f"{len(positions)} ring-move positions (seed {args.seed})")
    print(f"{'agent':<24} {'mean ms':>9} {'max ms':>9} {'work/decision':>14}")
    for spec in args.specs:
        agent = make_agent(spec, seed=args.seed)
        times, work = [], []
        for state in positions:
            agent.reset(seed=args.seed)
            start = time.perf_counter()
            agent.act(state)
            times.append(time.perf_counter() - start)
            work.append(getattr(agent, "nodes", getattr(agent, "last_sims", 0)))
        print(
            f"{spec:<24} {1000 * statistics.mean(times):>9.2f} {1000 * max(times):>9.2f}"
            f" {statistics.mean(work):>14.0f}"
        )


if __name__ == "__main__":
    main()
