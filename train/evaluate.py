"""In-run evaluation through the arena: scores against baselines, Elo across checkpoints.

At each evaluation the current checkpoint plays, through
:func:`agents.evaluation.arena.run_arena` with the ``net`` agent spec:

* its raw policy (``sims=0``) and its search (``sims=eval.simulations``)
  against each baseline of ``eval.opponents``;
* its raw policy against the raw policies of the last ``eval.elo_checkpoints``
  evaluated checkpoints.

Every pairing ever played in the run is kept in the run history, and one
Bradley-Terry fit over all of them (:func:`agents.evaluation.elo.elo_ratings`) rates
every evaluated checkpoint.  The baselines that are anchors of the fixed
rating scale (:mod:`agents.evaluation.scale`: ``random``, ``greedy``,
``alphabeta``, ...) keep their frozen ratings in that fit, so ``eval/elo`` is
on the scale every run shares, and curves of different runs and configs
compare (``python -m train.tools.curve RUN...``).  A run whose baselines hold no
anchor (or of a variant the scale was not calibrated for) is rated with its
first baseline at 0, and its history says so (``history["scale"]`` is None).
The checkpoint with the best rating is copied to ``best.pt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.elo import PairResult, Rating, elo_ratings
from agents.evaluation.scale import Scale, default_scale, identity_of_spec
from train.config import Config
from train.run_checkpoint import BEST_NAME, atomic_copy, checkpoint_path


def checkpoint_name(iteration: int) -> str:
    """The name of a checkpoint's raw policy in the Elo ladder."""
    return f"iter_{iteration:06d}"


def _spec(path: Path, sims: int) -> str:
    # Float, as every evaluation of a run so far: ratings stay comparable along a run
    # (its checkpoints' identities, agents.network.agent.NetAgent.identity, are unchanged).
    return f"net:path={path},sims={sims},precision=fp32"


def new_history() -> dict[str, Any]:
    """The evaluation history kept in checkpoints (plain values only)."""
    return {"evaluated": [], "pairings": [], "best": None}


def evaluate(
    run_dir: Path, iteration: int, config: Config, history: dict[str, Any]
) -> dict[str, float]:
    """Evaluate the checkpoint of ``iteration``; updates ``history`` and returns metrics."""
    ev = config.eval
    path = checkpoint_path(run_dir, iteration)
    me = checkpoint_name(iteration)
    metrics: dict[str, float] = {}
    seed = config.seed * 1_000_003 + iteration
    rings = config.selfplay.rings_to_win

    def match(a: str, b: str, games: int, key: str | None, ladder_name: str | None) -> None:
        """Play a vs b: report the score as ``key``, rate it as me vs ``ladder_name``."""
        threads = torch.get_num_threads()
        try:
            result = run_arena(
                [a, b],
                games,
                MatchSettings(seed=seed, workers=ev.workers, rings_to_win=rings),
                progress=False,
                db=ev.db,
                db_event=f"yinsh-train eval {run_dir}",
            )
        finally:
            torch.set_num_threads(threads)  # the net agent sets its own
        pairing = result.pairings[0]
        if key is not None:
            low, high = pairing.score_ci95
            metrics[f"{key}/score"] = pairing.score
            metrics[f"{key}/ci95_low"] = low
            metrics[f"{key}/ci95_high"] = high
        if ladder_name is not None:
            history["pairings"].append(
                {"a": me, "b": ladder_name, "points": pairing.points, "games": pairing.games}
            )

    raw = _spec(path, 0)
    for opponent in ev.opponents:
        match(raw, opponent, ev.games, f"eval/raw_vs_{opponent}", opponent)
        if ev.simulations > 0 and ev.search_games > 0:
            searching = _spec(path, ev.simulations)
            match(searching, opponent, ev.search_games, f"eval/search_vs_{opponent}", None)
    earlier = [i for i in history["evaluated"] if checkpoint_path(run_dir, i).exists()]
    for previous in earlier[-ev.elo_checkpoints :] if ev.elo_checkpoints else []:
        other = _spec(checkpoint_path(run_dir, previous), 0)
        match(raw, other, ev.games, None, checkpoint_name(previous))
    history["evaluated"].append(iteration)

    scale = run_scale(config)
    full = ladder_ratings(history, ev.opponents, scale)
    history["scale"] = ladder_scale(ev.opponents, scale)
    ratings = {name: r.elo for name, r in full.items()}
    if ratings:
        mine = ratings[me]
        metrics["eval/elo"] = mine
        metrics["eval/elo_ci95_low"], metrics["eval/elo_ci95_high"] = full[me].ci95
        best = history["best"]
        if best is None or mine >= ratings.get(checkpoint_name(best), float("-inf")):
            history["best"] = iteration
            atomic_copy(path, run_dir / BEST_NAME)
        metrics["eval/best_iteration"] = float(history["best"])
    return metrics


def run_scale(config: Config) -> Scale | None:
    """The fixed scale, if the run's variant is the one its anchors were calibrated in."""
    scale = default_scale()
    return scale if scale.rings_to_win == config.selfplay.rings_to_win else None


def _anchors(baselines: list[str], scale: Scale | None) -> dict[int, float]:
    """Baseline index -> frozen Elo, for the baselines that are anchors of ``scale``."""
    if scale is None:
        return {}
    return scale.fixed([identity_of_spec(b) for b in baselines])


def ladder_scale(baselines: list[str], scale: Scale | None) -> str | None:
    """The name of the scale a run's ladder is on, or None (first baseline at 0)."""
    return scale.name if scale is not None and _anchors(baselines, scale) else None


def ladder_ratings(
    history: dict[str, Any], baselines: list[str], scale: Scale | None = None
) -> dict[str, Rating]:
    """One Bradley-Terry fit of every pairing in the run's history.

    The baselines that are anchors of ``scale`` keep their frozen ratings; with
    none (or no scale), the first baseline is at 0.
    """
    names: list[str] = list(baselines)
    for i in history["evaluated"]:
        names.append(checkpoint_name(i))
    index = {n: k for k, n in enumerate(names)}
    results = [
        PairResult(index[p["a"]], index[p["b"]], float(p["points"]), float(p["games"]))
        for p in history["pairings"]
        if p["a"] in index and p["b"] in index
    ]
    if not results:
        return {}
    played = {k for r in results for k in (r.i, r.j)}
    fixed = {k: e for k, e in _anchors(list(baselines), scale).items() if k in played}
    return {r.agent: r for r in elo_ratings(names, results, anchor=0, fixed=fixed or None)}


def ladder(
    history: dict[str, Any], baselines: list[str], scale: Scale | None = None
) -> dict[str, float]:
    """Elo of every agent in the run's pairings (see :func:`ladder_ratings`)."""
    return {name: r.elo for name, r in ladder_ratings(history, baselines, scale).items()}
