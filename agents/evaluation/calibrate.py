"""Calibrating the fixed rating scale: the anchors' round robin and its fit.

The anchors form a ladder, weakest first.  Each anchor plays the next two up
(neighbours are where games carry information: a 100-0 pairing says little),
through :func:`agents.evaluation.arena.run_arena` (seeded openings, colours swapped).
The cheap pairings play ``--games`` games each, those involving an anchor in
:data:`COSTLY` play ``--costly-games``.  One Bradley-Terry fit over every
pairing with ``random`` fixed at 0 gives the frozen ratings, written with the
command, the games and the date to the scale file
(:mod:`agents.evaluation.scale`).  Each pairing's result is kept in ``--work``
as it finishes, so a calibration that is stopped resumes where it was; any
other pairing of two anchors found there (from an earlier ladder) is fitted
too.

Usage (the command that made ``yinsh-v1.json`` is in the file)::

    python -m agents.evaluation.calibrate --work runs/calibration --workers 2 \\
        --out agents/evaluation/yinsh-v1.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.elo import PairResult, elo_ratings
from agents.evaluation.scale import DEFAULT_SCALE_FILE, spec_identities
from agents.evaluation.version import code_version, machine
from yinsh_env.util.atomic_write import write_text

SCALE_NAME = "yinsh-v1"
#: The anchors, weakest first: budgeted by depth or simulations, never by time; the
#: network in fp32 (int8 kernels differ between CPUs: an anchor plays the same moves anywhere).
LADDER = (
    "random",
    "greedy:noise=1000",
    "greedy:noise=300",
    "greedy:noise=100",
    "greedy",
    "alphabeta:depth=2",
    "pretrained:weights=anchor-v1,sims=0,precision=fp32",
    "alphabeta:depth=3",
    "pretrained:weights=anchor-v1,sims=32,precision=fp32",
    "pretrained:weights=anchor-v1,sims=256,precision=fp32",
)
#: Anchors whose games take a second or more each: they play fewer games.
COSTLY = frozenset(LADDER[7:])


def ladder_pairings(ladder: Sequence[str], reach: int = 2) -> list[tuple[int, int]]:
    """Every anchor against the next ``reach`` up the ladder, cheap pairings first."""
    pairs = [
        (i, j) for i in range(len(ladder)) for j in range(i + 1, min(i + reach + 1, len(ladder)))
    ]
    return sorted(pairs, key=lambda p: (ladder[p[1]] in COSTLY, p[1], p[0]))


def _slug(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in spec)


def calibrate(
    work: Path,
    games: int,
    costly_games: int,
    workers: int,
    seed: int,
    ladder: Sequence[str] = LADDER,
) -> list[dict[str, Any]]:
    """Play (or read back from ``work``) every ladder pairing; returns their totals."""
    work.mkdir(parents=True, exist_ok=True)
    for i, j in ladder_pairings(ladder):
        a, b = ladder[i], ladder[j]
        n = costly_games if a in COSTLY or b in COSTLY else games
        out = work / f"{_slug(a)}--{_slug(b)}.json"
        if out.is_file():
            continue
        start = time.perf_counter()
        settings = MatchSettings(seed=seed + 1000 * i + j, workers=workers)
        result = run_arena([a, b], n, settings, progress=False)
        data = result.to_json()["pairings"][0]
        data["seconds"] = round(time.perf_counter() - start, 1)
        data["seed"] = seed + 1000 * i + j
        data["time_per_move"] = result.to_json()["time_per_move"]
        write_text(out, json.dumps(data, indent=1))
        print(f"{a} vs {b}: {data['a_wins']}-{data['draws']}-{data['b_wins']}", flush=True)
    totals = [json.loads(p.read_text()) for p in sorted(work.glob("*.json"))]
    return [t for t in totals if t["a"] in ladder and t["b"] in ladder]


def fit(ladder: Sequence[str], totals: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anchors with their ratings: one fit over every pairing, ``random`` (first) at 0."""
    index = {spec: k for k, spec in enumerate(ladder)}
    results = [
        PairResult(index[t["a"]], index[t["b"]], t["a_wins"] + 0.5 * t["draws"], t["games"])
        for t in totals
    ]
    ratings = elo_ratings(list(ladder), results, anchor=0)
    identities = spec_identities(ladder)
    return [
        {
            "spec": r.agent,
            "identity": ident,
            "elo": round(r.elo, 1),
            "ci95": [round(c, 1) for c in r.ci95],
        }
        for r, ident in zip(ratings, identities)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.evaluation.calibrate", description=__doc__
    )
    parser.add_argument(
        "--work", type=Path, required=True, help="folder keeping each pairing's result"
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_SCALE_FILE, help="the scale file to write"
    )
    parser.add_argument("--games", type=int, default=200, help="games per cheap pairing")
    parser.add_argument("--costly-games", type=int, default=60, help="games per costly pairing")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    command = "python -m agents.evaluation.calibrate " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)
    )
    start = time.perf_counter()
    totals = calibrate(args.work, args.games, args.costly_games, args.workers, args.seed)
    anchors = fit(LADDER, totals)
    scale = {
        "name": SCALE_NAME,
        "rings_to_win": 3,
        "anchors": anchors,
        "calibration": {
            "command": command,
            "date": date.today().isoformat(),
            "code": code_version(),
            "machine": machine(),
            "games": sum(t["games"] for t in totals),
            "wall_seconds": round(sum(t.get("seconds", 0.0) for t in totals), 1),
            "pairings": [
                {k: t[k] for k in ("a", "b", "games", "a_wins", "draws", "b_wins", "seed")}
                for t in totals
            ],
        },
    }
    write_text(args.out, json.dumps(scale, indent=1) + "\n")
    print(f"scale written to {args.out} ({time.perf_counter() - start:.0f} s)")
    for a in anchors:
        print(f"  {a['spec']:<40} {a['elo']:7.0f}  [{a['ci95'][0]:.0f}, {a['ci95'][1]:.0f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
