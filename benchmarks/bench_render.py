"""Rendering speed: SVG, ANSI text and RGB raster pictures of positions.

    python -m benchmarks.bench_render [--positions 300] [--size 480]

Draws each picture for positions taken from seeded random games, with the last
action drawn, and prints milliseconds per frame (best of three rounds).
"""

from __future__ import annotations

import argparse
import random
import timeit

from agents.infra.cli_args import int_in
from yinsh_env import State
from yinsh_env.render import ansi_board, rgb_board, svg_board


def sample_positions(count: int, seed: int = 0) -> list[tuple[State, int]]:
    """``count`` (position, last action) pairs from seeded random games."""
    rng = random.Random(seed)
    frames: list[tuple[State, int]] = []
    state = State()
    while len(frames) < count:
        if state.is_terminal:
            state = State()
        legal = state.legal_actions()
        action = legal[rng.randrange(len(legal))]
        state.apply(action)
        frames.append((state.copy(), action))
    return frames


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int_in(1, 100_000), default=300)
    parser.add_argument("--size", type=int_in(16, 8192), default=480)
    args = parser.parse_args(argv)
    frames = sample_positions(args.positions)
    rgb_board(frames[0][0], size=args.size)  # the static board is cached per size
    pictures = {
        "svg": lambda s, a: svg_board(s, size=args.size, last_action=a),
        "ansi": lambda s, a: ansi_board(s, last_action=a),
        "rgb": lambda s, a: rgb_board(s, size=args.size, last_action=a),
    }
    print(f"{len(frames)} positions, size {args.size}, last action drawn")
    for name, draw in pictures.items():
        best = min(timeit.repeat(lambda d=draw: [d(s, a) for s, a in frames], number=1, repeat=3))
        print(f"{name:5s} {1000 * best / len(frames):7.2f} ms/frame")


if __name__ == "__main__":
    main()
