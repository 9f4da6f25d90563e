"""Placing one agent on the fixed scale: ``yinsh-eval --rate SPEC``.

The agent plays game pairs (one opening, colours swapped) against the
scale's anchors (:mod:`agents.evaluation.scale`), in rounds.  Each round it
meets the anchors nearest its current estimate, one just below and one just
above (an agent learns most from opponents it scores about half against),
:data:`ROUND_PAIRS` game pairs each, and after each round its rating is
refitted with every anchor held at its frozen rating
(:func:`agents.evaluation.elo.fit_bradley_terry` with ``fixed=``).  It stops when the
rating's 95% interval is narrower than ``ci_width`` Elo, or after
``max_games`` games.  The first round meets the anchor in the middle of the
ladder.

Rounds are decided on complete results sorted by game, every game is seeded
by its anchor and pair number, and the openings are the same sequence for
every anchor, so a rating replays exactly for one seed, on any runner; two
seeds give two independent measurements (they agree within their intervals).

An agent stronger than the top anchor (or weaker than ``random``) can only
be placed by lopsided scores: the report says so, and the rating is then a
bound rather than a measurement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.elo import Z95, PairResult, Tally, elo_bound, fit_bradley_terry
from agents.evaluation.games import GameResult, GameTask, make_openings
from agents.evaluation.match import check_variant
from agents.evaluation.names import agent_labels, split_name
from agents.evaluation.results_db import check_db, game_writer
from agents.evaluation.runners import make_runner
from agents.evaluation.scale import Scale, default_scale
from agents.evaluation.settings import DEFAULT_SETTINGS, MatchSettings
from agents.evaluation.travel import check_travel
from agents.spec import check_spec, make_agent

#: Default width (Elo) of the 95% interval at which ``--rate`` stops.
DEFAULT_CI_WIDTH = 150.0
#: Default most games ``--rate`` plays.
DEFAULT_RATE_GAMES = 400
#: Game pairs against each chosen anchor per round (whatever the workers: a
#: rating replays exactly for its seed on any number of them).
ROUND_PAIRS = 2


@dataclass
class AnchorScore(Tally):
    """The rated agent's games against one anchor."""

    anchor: str
    anchor_elo: float

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.score_ci95
        return {
            "anchor": self.anchor,
            "anchor_elo": self.anchor_elo,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": round(self.score, 4) if self.games else None,
            "score_ci95": [round(lo, 4), round(hi, 4)],
        }


@dataclass
class RatingResult:
    """An agent placed on a scale: its Elo, 95% interval, and the games behind it."""

    agent: str
    elo: float
    ci95: tuple[float, float]
    scale: str
    scores: list[AnchorScore]
    games: list[GameResult] = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)
    stopped: str = ""
    note: str = ""
    #: The rated agent's spec (``agent`` is its name when given as ``NAME=SPEC``).
    spec: str = ""

    @property
    def agents(self) -> list[str]:
        """The match's agents by index: the rated one, then the anchors."""
        return [self.agent, *(s.anchor for s in self.scores)]

    @property
    def bound(self) -> tuple[str, float] | None:
        """``("<", X)`` (``(">", X)``) when no point (every point) was made: the
        one-sided 95% bound the report shows instead of the rating."""
        played = [(s.anchor_elo, float(s.games)) for s in self.scores if s.games]
        return elo_bound(sum(s.points for s in self.scores), played)

    def to_json(self) -> dict[str, Any]:
        bound = self.bound
        return {
            "rating": {
                "agent": self.agent,
                "spec": self.spec or self.agent,
                "elo": round(self.elo, 1),
                "ci95": [round(self.ci95[0], 1), round(self.ci95[1], 1)],
                "bound": None if bound is None else [bound[0], round(bound[1], 1)],
                "scale": self.scale,
            },
            "games": len(self.games),
            "stopped": self.stopped,
            "note": self.note,
            "anchors": [s.to_json() for s in self.scores if s.games],
            "settings": self.settings,
        }

    def report(self) -> str:
        """The games per anchor and the rating, as text."""
        played = [s for s in self.scores if s.games]
        width = max([len(s.anchor) for s in played] + [len("anchor")]) + 2
        lines = [f"{'anchor':<{width}} {'elo':>6} {'games':>6} {'W-D-L':>9} {'score':>6}  95% CI"]
        for s in played:
            lo, hi = s.score_ci95
            lines.append(
                f"{s.anchor:<{width}} {s.anchor_elo:>6.0f} {s.games:>6} {s.wdl:>9} "
                f"{s.score:>6.3f}  [{lo:.3f}, {hi:.3f}]"
            )
        lines.append("")
        bound = self.bound
        shown = (
            f"Elo {self.elo:.0f} [{self.ci95[0]:.0f}, {self.ci95[1]:.0f}]"
            if bound is None
            else f"Elo {bound[0]} {bound[1]:.0f} (one-sided 95%: "
            f"{'no' if bound[0] == '<' else 'every'} point in its games)"
        )
        lines.append(
            f"{self.agent}: {shown} on the {self.scale} scale (random = 0), "
            f"{len(self.games)} games; {self.stopped}"
        )
        if self.note:
            lines.append(self.note)
        if self.spec and self.spec != self.agent:
            lines.append(f"{self.agent}: {self.spec}")
        return "\n".join(lines)


def _choose(estimate: float | None, elos: Sequence[float]) -> list[int]:
    """Anchor positions to meet next: the nearest below and above ``estimate``."""
    if estimate is None:
        return [len(elos) // 2]
    below = [k for k, e in enumerate(elos) if e <= estimate]
    above = [k for k, e in enumerate(elos) if e > estimate]
    chosen = []
    if below:
        chosen.append(max(below, key=lambda k: elos[k]))
    if above:
        chosen.append(min(above, key=lambda k: elos[k]))
    return chosen


def _fit(scores: Sequence[AnchorScore], anchors_elo: Sequence[float]) -> tuple[float, float]:
    """The agent's Elo and standard error, the anchors fixed (one virtual draw each)."""
    results = [PairResult(0, k + 1, s.points, s.games) for k, s in enumerate(scores) if s.games]
    fixed = {k + 1: e for k, e in enumerate(anchors_elo)}
    elo, stderr = fit_bradley_terry(len(anchors_elo) + 1, results, fixed=fixed)
    return float(elo[0]), float(stderr[0])


def rate_agent(
    spec: str,
    scale: Scale | None = None,
    settings: MatchSettings = DEFAULT_SETTINGS,
    *,
    ci_width: float = DEFAULT_CI_WIDTH,
    max_games: int = DEFAULT_RATE_GAMES,
    on_game: Callable[[GameResult], None] | None = None,
    on_round: Callable[[int, float, tuple[float, float]], None] | None = None,
    db: str | Path | None = None,
) -> RatingResult:
    """Rate ``spec`` on ``scale`` (default: the shipped one); see the module docstring.

    The games are played as ``settings`` say
    (:class:`~agents.evaluation.settings.MatchSettings`).
    ``on_round(games, elo, ci95)`` is called after every round; ``db``
    appends every finished game to a results database.  Raises
    ``ValueError`` (a bad spec, an agent made for another variant, bad
    settings) before any game.
    """
    scale = scale if scale is not None else default_scale()
    if not (isinstance(ci_width, (int, float)) and ci_width > 0 and math.isfinite(ci_width)):
        raise ValueError(f"the interval width to stop at must be a positive number, got {ci_width}")
    if max_games < 2:
        raise ValueError(f"--rate needs games >= 2, got {max_games}")
    rings_to_win, seed = settings.rings_to_win, settings.seed
    if rings_to_win != scale.rings_to_win:
        raise ValueError(
            f"the {scale.name} scale is calibrated for rings_to_win={scale.rings_to_win}; "
            f"it cannot rate games with rings_to_win={rings_to_win}"
        )
    if db is not None:
        check_db(db)
    name, spec = split_name(str(spec))
    specs = [spec] + [a.spec for a in scale.anchors]
    names = agent_labels([name] + [None] * len(scale.anchors), specs)
    recorded = {
        "scale": scale.name,
        "ci_width": ci_width,
        "max_games": max_games,
        **settings.to_json(),
    }
    candidate = make_agent(spec, seed=0)
    try:
        for anchor in specs[1:]:
            check_spec(anchor)  # a scale naming an agent this install lacks fails here
        check_variant(candidate, rings_to_win)
        if settings.parallel:
            check_travel([spec], [spec], settings.backend)
        writer = None
        if db is not None:
            writer = game_writer(
                db, "yinsh-eval --rate", specs, {0: candidate}, rings_to_win, recorded, names
            )
    except BaseException:
        candidate.close()
        raise
    elos = [a.elo for a in scale.anchors]
    scores = [AnchorScore(a.spec, a.elo) for a in scale.anchors]
    openings = make_openings(max_games // 2 + 1, settings.opening_plies, seed, rings_to_win)
    pairs_played = [0] * len(elos)
    runner = make_runner(specs, {0: candidate}, settings)
    results: list[GameResult] = []
    estimate: float | None = None
    ci95 = (-math.inf, math.inf)
    stopped = f"stopped at the most games ({max_games})"
    try:
        while len(results) + 2 <= max_games:
            chosen = _choose(estimate, elos)
            per_anchor = ROUND_PAIRS
            tasks: list[GameTask] = []
            for _ in range(per_anchor):
                for k in chosen:
                    if len(results) + len(tasks) + 2 > max_games:
                        break
                    j = pairs_played[k]
                    pairs_played[k] += 1
                    for colour in (0, 1):
                        white, black = (0, k + 1) if colour == 0 else (k + 1, 0)
                        game_seed = int(
                            np.random.SeedSequence([seed, k, 2 * j + colour]).generate_state(1)[0]
                        )
                        index = len(results) + len(tasks)
                        tasks.append(GameTask(index, k, white, black, openings[j], game_seed))
            finished = sorted(runner.play(tasks), key=lambda r: r.task.index)
            for result in finished:
                scores[result.task.pairing].add(result.score_of(0))
                if writer is not None:
                    writer.add(result)
                if on_game is not None:
                    on_game(result)
            results += finished
            estimate, stderr = _fit(scores, elos)
            ci95 = (estimate - Z95 * stderr, estimate + Z95 * stderr)
            if on_round is not None:
                on_round(len(results), estimate, ci95)
            if ci95[1] - ci95[0] <= ci_width:
                stopped = f"stopped with the 95% interval narrower than {ci_width:g} Elo"
                break
    finally:
        runner.close()
        if writer is not None:
            writer.close()
    if estimate is None:
        raise ValueError(f"--rate played no game (most games {max_games})")
    note = _edge_note(scores)
    return RatingResult(
        names[0], estimate, ci95, scale.name, scores, results, recorded, stopped, note, spec
    )


def _edge_note(scores: Sequence[AnchorScore]) -> str:
    """A warning when the agent is placed only by lopsided games at an end of the ladder."""
    top, bottom = scores[-1], scores[0]
    if top.games and top.score >= 0.9:
        return (
            f"note: it scored {top.score:.2f} against the top anchor "
            f"({top.anchor}): it may be stronger than the scale measures (a lower bound)"
        )
    if bottom.games and bottom.score <= 0.1:
        return f"note: it scored {bottom.score:.2f} against {bottom.anchor}"
    return ""
