"""``yinsh-ratings FILE``: ratings over every game in a results database.

Players are told apart by identity
(:func:`~agents.evaluation.scale.agent_identity`), not by spec text:
``alphabeta`` and ``alphabeta:depth=2`` are one player, and
``net:path=runs/x`` before and after the run went on are two (their weights
differ; they are shown as ``SPEC@HASH``), as is a ``py:`` agent whose source
file changed.  A player is shown by the name it played under
(``yinsh-eval mine=SPEC``), else by its spec. One Bradley-Terry fit per group of
players connected by games: a group holding anchors of the fixed scale
(:mod:`agents.evaluation.scale`) is rated on it, the anchors at their frozen
ratings; a group without is rated relative to its first player, and the table
says so. Only games of the scale's variant are fitted (``--rings-to-win``
picks another, rated relative).

Prints the ratings table and the head-to-head matrix (row's score against
column, games in parentheses); ``--json`` writes both.

Usage::

    yinsh-ratings games.sqlite
    yinsh-ratings games.sqlite --json ratings.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.evaluation.elo import PairResult, elo_ratings
from agents.evaluation.results_db import ResultsDBError, StoredGame, read_games
from agents.evaluation.scale import Scale, ScaleError, default_scale, load_scale
from agents.infra.cli_args import input_file, int_in, output_file
from yinsh_env.util.atomic_write import write_text


@dataclass(frozen=True)
class PlayerRating:
    """One agent's rating from the results database, as ``yinsh-ratings`` prints and writes it."""

    name: str
    identity: str
    elo: float
    ci95: tuple[float, float]
    games: int
    scale: str | None  # None: relative to ``relative_to``
    anchor: bool
    relative_to: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.name,
            "identity": self.identity,
            "elo": round(self.elo, 1),
            "ci95": [round(self.ci95[0], 1), round(self.ci95[1], 1)],
            "games": self.games,
            "scale": self.scale,
            "anchor": self.anchor,
            "relative_to": self.relative_to,
        }


@dataclass(frozen=True)
class Table:
    """Ratings and head-to-head totals (``points[i][j]``: i's points against j)."""

    players: list[PlayerRating]
    names: list[str]
    games: list[list[int]]
    points: list[list[float]]
    skipped: int

    def to_json(self) -> dict[str, Any]:
        pairs = [
            {"a": self.names[i], "b": self.names[j], "games": g, "a_points": self.points[i][j]}
            for i, row in enumerate(self.games)
            for j, g in enumerate(row)
            if g and i < j
        ]
        return {
            "ratings": [p.to_json() for p in self.players],
            "head_to_head": pairs,
            "skipped_games": self.skipped,
        }


def _names(games: Sequence[StoredGame]) -> dict[str, str]:
    """Identity -> display name: its most used name (``yinsh-eval NAME=SPEC``; else the
    spec; the shortest of equals), or ``NAME@HASH`` where one name stands for several
    players."""
    uses: dict[str, dict[str, int]] = {}
    for g in games:
        sides = (
            (g.white_identity, g.white_name or g.white),
            (g.black_identity, g.black_name or g.black),
        )
        for identity, spec in sides:
            counts = uses.setdefault(identity, {})
            counts[spec] = counts.get(spec, 0) + 1
    specs = {
        identity: min(counts, key=lambda s: (-counts[s], len(s), s))
        for identity, counts in uses.items()
    }
    count: dict[str, int] = {}
    for spec in specs.values():
        count[spec] = count.get(spec, 0) + 1
    names = {}
    for identity, spec in specs.items():
        if "sha256=" in identity:
            tag = identity.split("sha256=")[-1][:8]
        else:
            tag = hashlib.sha256(identity.encode()).hexdigest()[:8]
        names[identity] = spec if count[spec] == 1 else f"{spec}@{tag}"
    return names


def _components(n: int, games: list[list[int]]) -> list[list[int]]:
    seen: set[int] = set()
    out = []
    for start in range(n):
        if start in seen:
            continue
        group, frontier = [], [start]
        seen.add(start)
        while frontier:
            i = frontier.pop()
            group.append(i)
            for j in range(n):
                if games[i][j] and j not in seen:
                    seen.add(j)
                    frontier.append(j)
        out.append(sorted(group))
    return out


def ratings_table(games: Sequence[StoredGame], scale: Scale, rings_to_win: int) -> Table:
    """Fit every group of connected players; see the module docstring."""
    kept = [g for g in games if g.rings_to_win == rings_to_win]
    display = _names(kept)
    identities = sorted(display, key=lambda i: display[i])
    index = {identity: k for k, identity in enumerate(identities)}
    n = len(identities)
    played = [[0] * n for _ in range(n)]
    points = [[0.0] * n for _ in range(n)]
    for g in kept:
        w, b = index[g.white_identity], index[g.black_identity]
        if w == b:
            continue  # a player against itself says nothing about its rating
        white_points = {"W": 1.0, "B": 0.0}.get(g.result, 0.5)
        played[w][b] += 1
        played[b][w] += 1
        points[w][b] += white_points
        points[b][w] += 1.0 - white_points
    use_scale = scale if scale.rings_to_win == rings_to_win else None
    players: list[PlayerRating] = []
    for group in _components(n, played):
        if len(group) == 1 and not any(played[group[0]]):
            continue
        local = {k: m for m, k in enumerate(group)}
        results = [
            PairResult(local[i], local[j], points[i][j], played[i][j])
            for i in group
            for j in group
            if i < j and played[i][j]
        ]
        # Positions in ``group`` are the local indices.
        fixed = use_scale.fixed([identities[k] for k in group]) if use_scale is not None else {}
        names = [display[identities[k]] for k in group]
        fitted = elo_ratings(names, results, anchor=0, fixed=fixed or None)
        for m, (k, r) in enumerate(zip(group, fitted)):
            players.append(
                PlayerRating(
                    r.agent,
                    identities[k],
                    r.elo,
                    r.ci95,
                    sum(played[k]),
                    use_scale.name if fixed and use_scale is not None else None,
                    m in fixed,
                    None if fixed else names[0],
                )
            )
    players.sort(key=lambda p: (p.scale is None, p.relative_to or "", -p.elo))
    return Table(players, [display[i] for i in identities], played, points, len(games) - len(kept))


def format_table(table: Table) -> str:
    """The ratings, then the head-to-head matrix, as text."""
    if not table.players:
        return "no games" + (
            f" ({table.skipped} of another variant skipped)" if table.skipped else ""
        )
    width = max(len(p.name) for p in table.players) + 2
    lines = [f"{'#':>3} {'agent':<{width}} {'elo':>7}  {'95% CI':<15} {'games':>6}  scale"]
    order = {p.name: k + 1 for k, p in enumerate(table.players)}
    for p in table.players:
        ci = "anchor" if p.anchor else f"[{p.ci95[0]:.0f}, {p.ci95[1]:.0f}]"
        where = f"{p.scale} (random = 0)" if p.scale else f"relative ({p.relative_to} = 0)"
        lines.append(
            f"{order[p.name]:>3} {p.name:<{width}} {p.elo:>7.0f}  {ci:<15} {p.games:>6}  {where}"
        )
    lines += ["", "head to head: the row's score against the column (games)"]
    index = {name: k for k, name in enumerate(table.names)}
    ranked = [p.name for p in table.players]
    lines.append(" " * 4 + "".join(f"{'#' + str(order[c]):>13}" for c in ranked))
    for r in ranked:
        cells = []
        for c in ranked:
            i, j = index[r], index[c]
            g = table.games[i][j]
            cells.append(f"{table.points[i][j] / g:.2f} ({g})" if g else "-")
        lines.append(f"{'#' + str(order[r]):>4}" + "".join(f"{cell:>13}" for cell in cells))
    if table.skipped:
        lines.append(f"\n{table.skipped} game(s) of another variant not fitted (--rings-to-win)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="yinsh-ratings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "db", type=input_file, metavar="FILE", help="a results database (yinsh-eval --db)"
    )
    parser.add_argument(
        "--json", type=output_file(), metavar="PATH", help="also write the tables as JSON"
    )
    parser.add_argument(
        "--scale",
        type=input_file,
        metavar="FILE",
        help="a rating scale file (default: the shipped one)",
    )
    parser.add_argument(
        "--rings-to-win", type=int_in(1, 5), default=3, help="the variant to rate (default 3)"
    )
    args = parser.parse_args(argv)
    if args.json is not None and args.json.resolve() == args.db.resolve():
        parser.error(f"argument --json: {str(args.json)!r} is the database FILE itself")
    try:
        scale = load_scale(args.scale) if args.scale else default_scale()
        table = ratings_table(list(read_games(args.db)), scale, args.rings_to_win)
    except (ResultsDBError, ScaleError) as exc:
        message = str(exc).removeprefix("--db ")  # the database is this command's FILE
        print(f"yinsh-ratings: {message}", file=sys.stderr)
        return 2
    print(format_table(table))
    if args.json is not None:
        write_text(args.json, json.dumps(table.to_json(), indent=1) + "\n")
        print(f"\nratings written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
