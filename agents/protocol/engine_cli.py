"""``yinsh-engine SPEC``: serve any agent over the YINSH engine protocol.

Examples::

    yinsh-engine random
    yinsh-engine alphabeta:depth=3 --seed 1
    yinsh-engine "mcts:sims=800" --debug      # transcript on stderr

The engine reads commands on stdin and answers on stdout (see
:mod:`agents.protocol.line_protocol`).  Anything the agent itself prints is redirected to
stderr so that stdout carries protocol replies only.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import BinaryIO

from agents.learned import MODEL_FILES_NOTE
from agents.protocol.line_protocol import PROTOCOL_VERSION, nonnegative_seed, serve
from agents.spec import AgentSpecError, available_agents, make_agent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yinsh-engine",
        description=(
            f"Serve a YINSH agent over the engine protocol (version {PROTOCOL_VERSION}): "
            "commands on stdin, one reply line each on stdout."
        ),
        epilog=MODEL_FILES_NOTE,
    )
    parser.add_argument("spec", help="agent spec, e.g. random, greedy, mcts:sims=800")
    parser.add_argument(
        "--seed", type=nonnegative_seed, default=0, help="seed of the agent (default 0)"
    )
    parser.add_argument("--name", default=None, help="name to report (default: the spec)")
    parser.add_argument(
        "--debug", action="store_true", help="write a transcript of the conversation to stderr"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        agent = make_agent(args.spec, seed=args.seed)
    except AgentSpecError as exc:
        print(f"yinsh-engine: {exc}", file=sys.stderr)
        print(f"known agents: {', '.join(available_agents())}", file=sys.stderr)
        return 2
    replies = sys.stdout.buffer
    previous, sys.stdout = sys.stdout, sys.stderr  # stray prints must not corrupt the protocol
    try:
        serve(
            agent,
            _own_input(),
            replies,
            name=args.name,
            log=sys.stderr if args.debug else None,
        )
    except (BrokenPipeError, KeyboardInterrupt):
        # The controller went away: silence the final flush of the dead pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, replies.fileno())
        return 0
    finally:
        sys.stdout = previous
        agent.close()
    return 0


def _own_input() -> BinaryIO:
    """Standard input as a reader of our own, on a copy of its file descriptor.

    :func:`~agents.protocol.line_protocol.serve` reads it in a daemon thread, which may
    still be blocked in a read when ``quit`` ends the program; Python's
    shutdown would then wait for ``sys.stdin``'s lock and abort.  A reader
    no one else closes is left alone.
    """
    try:
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    except (AttributeError, OSError, ValueError):  # not a real file (tests): read it as is
        return sys.stdin.buffer


if __name__ == "__main__":
    sys.exit(main())
