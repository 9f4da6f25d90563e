"""How steady and how right an agent's value is along real games, from its reviews.

A review (:mod:`agents.review.reviewer`) values every position of a game from
White's side.  Along a game played by strong players a good value moves little
from one position to the next, and does not lean toward whoever is to move.
Three figures per agent, over the decisions that were not forced:

- **jitter**: the mean of ``|after - before|``, how far the value jumps across
  one decision;
- **mover lean**: half the mean of the mover's signed drop
  ``s * (before - after)`` over the decisions after which the other player is
  to move (``s`` = +1 for White, -1 for Black).  A value that overrates the side
  to move by ``b`` shows ``b`` here, plus half the players' own mean error,
  which is the same for every agent reviewing the same games: compare agents,
  not the figure with 0;
- **error**: the mean squared distance of every position's value from the
  game's result (+1, -1, 0), where the records give one.

and the review's marks (blunders, mistakes) over all the games, as ``yinsh-review``
counts them.

Usage::

    python -m agents.review.steadiness RECORD [RECORD ...] --agents SPEC [SPEC ...]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass

from agents.infra.cli_args import agent_spec, input_file, int_in
from agents.params import MAX_SEED
from agents.review.reviewer import Review, check_values, review_record
from agents.spec import make_agent
from yinsh_env import Result, load_record


@dataclass(frozen=True)
class Steadiness:
    """An agent's value along a set of reviewed games (see the module's docstring)."""

    agent: str
    games: int
    decisions: int
    jitter: float
    mover_lean: float
    error: float | None
    blunders: int
    mistakes: int


def steadiness(agent: str, reviews: Sequence[Review]) -> Steadiness:
    """The figures of ``reviews``, all made by ``agent``.

    Raises ValueError when no review holds a decision that was not forced.
    """
    jumps: list[float] = []
    drops: list[float] = []
    errors: list[float] = []
    marks = {"blunder": 0, "mistake": 0}
    for review in reviews:
        decisions = review.decisions
        for i, d in enumerate(decisions):
            if d.mark in marks:
                marks[d.mark] += 1
            if d.forced or d.value is None or d.value_played is None:
                continue
            jumps.append(abs(d.value_played - d.value))
            next_side = decisions[i + 1].side if i + 1 < len(decisions) else None
            if next_side is not None and next_side != d.side:
                mover = 1.0 if d.side == "W" else -1.0
                drops.append(mover * (d.value - d.value_played))
        outcome = Result(review.result).white_value
        if outcome is not None:
            errors.extend((v - outcome) ** 2 for v in review.values() if v is not None)
    if not jumps:
        raise ValueError(f"{agent}: no decision that was not forced in the reviews")
    return Steadiness(
        agent=agent,
        games=len(reviews),
        decisions=len(jumps),
        jitter=sum(jumps) / len(jumps),
        mover_lean=sum(drops) / len(drops) / 2 if drops else math.nan,
        error=sum(errors) / len(errors) if errors else None,
        blunders=marks["blunder"],
        mistakes=marks["mistake"],
    )


def table(rows: Sequence[Steadiness]) -> str:
    """A Markdown table of ``rows``."""
    lines = [
        "| agent | games | decisions | jitter | mover lean | error | blunders | mistakes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        error = "n/a" if r.error is None else f"{r.error:.3f}"
        lines.append(
            f"| `{r.agent}` | {r.games} | {r.decisions} | {r.jitter:.3f} | {r.mover_lean:+.3f} "
            f"| {error} | {r.blunders} | {r.mistakes} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.review.steadiness",
        description="How steady an agent's value is along game records (jitter, mover lean, "
        "error against the result, marks), one row per agent.",
    )
    parser.add_argument("records", nargs="+", metavar="RECORD", type=input_file)
    parser.add_argument("--agents", nargs="+", required=True, type=agent_spec, metavar="SPEC")
    parser.add_argument("--seed", type=int_in(0, MAX_SEED), default=0, help="each agent's seed")
    args = parser.parse_args(argv)
    try:
        records = [load_record(path) for path in args.records]
        agents = [make_agent(spec) for spec in args.agents]
        for agent in agents:
            check_values(agent)
    except ValueError as exc:
        parser.error(str(exc))
    rows = []
    for spec, agent in zip(args.agents, agents):
        reviews = [review_record(record, agent, seed=args.seed) for record in records]
        rows.append(steadiness(spec, reviews))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
