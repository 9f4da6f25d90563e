"""Engine speed: random games with our engine against the C reference.

Usage (from the project root)::

    python -m benchmarks.bench_engine [--seconds S] [--seed N] [--clock wall|cpu]

Compiles ``limit.c`` (``$YINSH_BENCH_DIR``, else ``../shared/bench`` relative
to the project root, else the copy in ``benchmarks/reference``) with ``cc -O2``
into a temporary folder and runs it for S seconds; then plays uniformly random
games with :class:`State` for S seconds, whole games from the empty board,
placements included, choosing each action uniformly from ``legal_actions()``.
It prints games/s, actions/s and game lengths for both, the ratio of games/s
(the goal: ours at least 1/40 of C's), and the cost per call of the engine's
basic operations.

The C program plays the same game with simplifications (the first row found,
the last ring removed), so its game lengths differ a little from uniform
play.  Figures are noisy on a shared machine: run it twice, or time our
engine by CPU time (``--clock cpu``).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agents.infra.cli_args import int_in, number_in
from yinsh_env import Phase, State

T = TypeVar("T")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
GOAL_RATIO = 1 / 40


def bench_dir() -> Path:
    """Where ``limit.c`` lives: ``$YINSH_BENCH_DIR``, ``../shared/bench``, or the copy here."""
    if "YINSH_BENCH_DIR" in os.environ:
        return Path(os.environ["YINSH_BENCH_DIR"]).resolve()
    shared = (PROJECT_ROOT / ".." / "shared" / "bench").resolve()
    return shared if (shared / "limit.c").is_file() else PROJECT_ROOT / "benchmarks" / "reference"


@dataclass(frozen=True)
class Rate:
    """Throughput of random play."""

    games_per_s: float
    actions_per_s: float  # every decision (ours) or every turn (C)
    move_turns_per_s: float  # move-phase decisions: ring moves and passes

    @property
    def actions_per_game(self) -> float:
        return self.actions_per_s / self.games_per_s

    @property
    def move_turns_per_game(self) -> float:
        return self.move_turns_per_s / self.games_per_s


# --- the C reference ---------------------------------------------------------------


def run_c_reference(seconds: float) -> tuple[Rate | None, str]:
    """Compile and run limit.c; returns its rate, or None and the reason."""
    source = bench_dir() / "limit.c"
    if not source.is_file():
        return None, f"C reference not found at {source} (set YINSH_BENCH_DIR)"
    compiler = shutil.which("cc")
    if compiler is None:
        return None, "no C compiler (cc) on PATH: the C reference was not measured"
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "limit"
        build = subprocess.run(
            [compiler, "-O2", "-o", str(binary), str(source)], capture_output=True, text=True
        )
        if build.returncode != 0:
            return None, f"cc -O2 failed: {build.stderr.strip()}"
        run = subprocess.run(
            [str(binary), str(seconds)], capture_output=True, text=True, timeout=seconds + 60
        )
    found = re.search(r"games/s (\S+) move-steps/s (\S+) avg len (\S+)", run.stdout)
    if run.returncode != 0 or found is None:
        return None, f"unexpected output from limit.c: {run.stdout!r} {run.stderr!r}"
    games_per_s, steps_per_s, _avg_len = (float(x) for x in found.groups())
    return Rate(games_per_s, steps_per_s, steps_per_s), f"{compiler} -O2 {source.name}"


# --- our engine: whole random games ----------------------------------------------------


Clock = Callable[[], float]


def play_random_games(
    seconds: float, seed: int, checked: bool, clock: Clock = time.perf_counter
) -> Rate:
    """Uniformly random games for ``seconds`` of ``clock``; ``checked`` uses apply,
    else apply_unchecked."""
    rng = random.Random(seed)
    randrange = rng.randrange
    games = actions = move_turns = 0
    start = clock()
    deadline = start + seconds
    while True:
        state = State()
        step = state.apply if checked else state.apply_unchecked
        while state.phase != Phase.OVER:
            legal = state.legal_actions()
            if state.phase == Phase.MOVE:
                move_turns += 1
            step(legal[randrange(len(legal))])
        games += 1
        actions += state.ply
        if clock() >= deadline:
            break
    elapsed = clock() - start
    return Rate(games / elapsed, actions / elapsed, move_turns / elapsed)


# --- our engine: cost per call ----------------------------------------------------------


def sample_positions(n_games: int, seed: int) -> list[tuple[State, int]]:
    """Every decision of ``n_games`` random games: (position without cache, action played)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_games):
        state = State()
        while not state.is_terminal:
            action = rng.choice(state.legal_actions())
            out.append((State.from_text(state.to_text()), action))
            state.apply(action)
    return out


def best_us_per_call(
    prepare: Callable[[], T],
    run: Callable[[T], int],
    repeats: int,
    clock: Clock = time.perf_counter,
) -> float:
    """Best-of-``repeats`` microseconds per call of ``run`` (``prepare`` is not timed).

    ``run`` takes what ``prepare`` made and returns how many calls it made.
    """
    best = float("inf")
    for _ in range(repeats):
        data = prepare()
        start = clock()
        calls = run(data)
        best = min(best, (clock() - start) / calls)
    return best * 1e6


def call_costs(
    samples: list[tuple[State, int]], repeats: int = 5, clock: Clock = time.perf_counter
) -> dict[str, float]:
    """Microseconds per call of the engine's basic operations over ``samples``."""
    positions = [state for state, _ in samples]
    in_move_phase = [state for state in positions if state.phase == Phase.MOVE]
    texts = [state.to_text() for state in positions]

    def copies(states: list[State]) -> Callable[[], list[State]]:
        # Copies of positions read from text: no cached legal list.
        return lambda: [state.copy() for state in states]

    def listed(states: list[State]) -> Callable[[], list[State]]:
        # Copies whose legal list is cached, as after a search asked for it.
        def prepare() -> list[State]:
            out = copies(states)()
            for state in out:
                state.legal_actions()
            return out

        return prepare

    def legal_actions(states: list[State]) -> int:
        for state in states:
            state.legal_actions()
        return len(states)

    def batch(cache_legal: bool) -> Callable[[], list[tuple[State, int]]]:
        def prepare() -> list[tuple[State, int]]:
            out = [(state.copy(), action) for state, action in samples]
            if cache_legal:  # as in play, where the action came from legal_actions()
                for state, _ in out:
                    state.legal_actions()
            return out

        return prepare

    def apply(pairs: list[tuple[State, int]]) -> int:
        for state, action in pairs:
            state.apply(action)
        return len(pairs)

    def apply_unchecked(pairs: list[tuple[State, int]]) -> int:
        for state, action in pairs:
            state.apply_unchecked(action)
        return len(pairs)

    def applied() -> list[State]:
        pairs = batch(cache_legal=False)()
        apply_unchecked(pairs)
        return [state for state, _ in pairs]

    def pop(states: list[State]) -> int:
        for state in states:
            state.pop()
        return len(states)

    def each(method: Callable[[State], object]) -> Callable[[list[State]], int]:
        def run(states: list[State]) -> int:
            for state in states:
                method(state)
            return len(states)

        return run

    def from_text(lines: list[str]) -> int:
        for line in lines:
            State.from_text(line)
        return len(lines)

    def same() -> list[State]:
        return positions

    return {
        "legal_actions (move phase, uncached)": best_us_per_call(
            copies(in_move_phase), legal_actions, repeats, clock
        ),
        "apply (checked, legal list cached)": best_us_per_call(batch(True), apply, repeats, clock),
        "apply_unchecked": best_us_per_call(batch(False), apply_unchecked, repeats, clock),
        "pop (undo)": best_us_per_call(applied, pop, repeats, clock),
        "copy": best_us_per_call(same, each(State.copy), repeats, clock),
        "zobrist": best_us_per_call(same, each(State.zobrist), repeats, clock),
        "to_text": best_us_per_call(same, each(State.to_text), repeats, clock),
        "from_text": best_us_per_call(lambda: texts, from_text, repeats, clock),
        "legal_mask (legal list cached)": best_us_per_call(
            listed(positions), each(State.legal_mask), repeats, clock
        ),
        "legal_mask (uncached, as env() steps)": best_us_per_call(
            copies(positions), each(State.legal_mask), repeats, clock
        ),
    }


# --- report ---------------------------------------------------------------------------------


def _rate_row(name: str, rate: Rate) -> str:
    return (
        f"{name:<30} {rate.games_per_s:>9.0f} {rate.actions_per_s:>10.0f} "
        f"{rate.move_turns_per_s:>12.0f} {rate.actions_per_game:>7.1f} "
        f"{rate.move_turns_per_game:>7.1f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds",
        type=number_in(0, 3600, above=True),
        default=3.0,
        help="seconds per measurement",
    )
    parser.add_argument("--seed", type=int_in(0, 2**63 - 1), default=0)
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time our engine by wall clock or by this process's CPU time (steadier on a "
        "loaded machine; the C reference is always timed by wall clock)",
    )
    parser.add_argument(
        "--sample-games",
        type=int_in(1, 100_000),
        default=40,
        help="random games whose positions time each call",
    )
    args = parser.parse_args(argv)

    print(f"random play, {args.seconds:g} s each (noisy if the machine is shared)\n")
    c_rate, c_note = run_c_reference(args.seconds)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    ours = play_random_games(args.seconds, args.seed, checked=False, clock=clock)
    ours_checked = play_random_games(args.seconds, args.seed, checked=True, clock=clock)

    header = (
        f"{'engine':<30} {'games/s':>9} {'actions/s':>10} {'move-turns/s':>12} "
        f"{'len':>7} {'turns':>7}"
    )
    print(header)
    print("-" * len(header))
    if c_rate is not None:
        print(_rate_row("C reference (limit.c)", c_rate))
    print(_rate_row("yinsh_env, apply_unchecked", ours))
    print(_rate_row("yinsh_env, apply (checked)", ours_checked))
    print(
        "\nlen: actions per game (ours: placements, moves, passes, rows and rings;"
        " C: turns only)\nturns: move-phase turns per game (ring moves and passes)"
    )
    print(f"C reference: {c_note}")
    if c_rate is not None:
        for name, rate in (("apply_unchecked", ours), ("apply (checked)", ours_checked)):
            ratio = rate.games_per_s / c_rate.games_per_s
            verdict = "meets" if ratio >= GOAL_RATIO else "misses"
            print(
                f"ours/C games/s ({name}): {ratio:.4f} = 1/{1 / ratio:.1f}; "
                f"goal >= 1/{1 / GOAL_RATIO:.0f}: {verdict}"
            )

    samples = sample_positions(args.sample_games, args.seed + 1)
    costs = call_costs(samples, clock=clock)
    print(f"\ncost per call over {len(samples)} positions of {args.sample_games} random games")
    print(f"{'operation':<40} {'us/call':>9}")
    print("-" * 50)
    for name, us in costs.items():
        print(f"{name:<40} {us:>9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
