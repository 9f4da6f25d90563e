"""The arena: matches and round robins between agents named by spec strings.

:func:`run_arena` plays ``games`` games for every pairing of the given specs
(two specs: one match; more: a round robin).  Games start from a seeded set of
openings (``opening_plies`` random ring placements, alternating colours), the
same set for every pairing, and each opening is played twice with the colours
swapped (a game pair), so colour and opening advantages cancel
(:mod:`agents.evaluation.games`).  Games run in this process, in worker
processes or on Ray actors (:mod:`agents.evaluation.runners`), each of which
builds its own agents from the specs; every agent is first built once in the
calling process so that a bad spec (unknown agent, missing checkpoint, a
variant the agent was not made for) fails before any game starts.  Each game
is one :func:`agents.evaluation.match.play_match`: the PettingZoo ``agent_iter()`` loop
over :func:`yinsh_env.env` that any env user runs.

An agent that raises :class:`~agents.base.AgentFailure`, returns an illegal
action, raises any other error, or (with ``move_time_limit``) overruns its
time, forfeits the game: the opponent is scored the win and the record says
why (termination ``forfeit`` or ``timeout``, tag ``reason``).  The arena never
stops for a misbehaving agent.

With ``sprt`` (two agents), the match is a sequential test
(:mod:`agents.evaluation.sprt`): it stops as soon as the pairs played so far
decide, ``games`` being the most it plays.  Pairs are counted in the order of
their openings, whatever order workers finish them in, so the decision (and
the games it counts) is the same on every runner.

Results: per pairing wins/draws/losses and the score with a 95% Wilson
interval; Elo ratings from a Bradley-Terry fit (:mod:`agents.evaluation.elo`) on the
fixed scale (:mod:`agents.evaluation.scale`) when any of its anchors takes
part (they keep their frozen ratings), otherwise relative to the first agent;
time per decision per agent; every game as a
:class:`~yinsh_env.records.game_record.GameRecord` saved under ``records_dir`` when given,
as ``game-00000.yinsh`` (the game's index): a folder that already holds such
records (an earlier run's) is refused before any game, and each record is
created, never replacing nor following what is at its name.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.byo import as_agent
from agents.evaluation.elo import PairResult, Rating, Tally, elo_ratings
from agents.evaluation.games import (
    DEFAULT_OPENING_PLIES,
    GameResult,
    GameTask,
    game_record,
    make_openings,
    make_tasks,
    play_game,
)
from agents.evaluation.match import check_variant
from agents.evaluation.names import agent_labels, split_name
from agents.evaluation.rate import RatingResult
from agents.evaluation.results_db import GameWriter, check_db, game_writer
from agents.evaluation.runners import make_runner
from agents.evaluation.scale import Scale, agent_identity, default_scale
from agents.evaluation.settings import DEFAULT_SETTINGS, MatchSettings
from agents.evaluation.sprt import Sprt, SprtSettings
from agents.evaluation.travel import check_travel
from agents.spec import make_agent
from yinsh_env.records.formats import save_record
from yinsh_env.util.atomic_write import write_file, write_text

#: A game record's name in a records folder: ``game-00000.yinsh``, the game's index.
RECORD_NAME = re.compile(r"game-[0-9]+\.yinsh")

__all__ = [
    "DEFAULT_OPENING_PLIES",
    "AgentTime",
    "ArenaResult",
    "GameResult",
    "GameTask",
    "MatchSettings",
    "PairingResult",
    "game_record",
    "make_openings",
    "make_tasks",
    "play_game",
    "plot_elo",
    "run_arena",
    "save_json",
    "summarise",
    "validate_specs",
]


@dataclass
class PairingResult(Tally):
    """Totals of one pairing from agent ``a``'s side: ``wins`` are ``a``'s, ``losses`` ``b``'s."""

    a: str
    b: str
    a_forfeits: int = 0
    b_forfeits: int = 0

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.score_ci95
        return {
            "a": self.a,
            "b": self.b,
            "games": self.games,
            "a_wins": self.wins,
            "draws": self.draws,
            "b_wins": self.losses,
            "a_score": round(self.score, 4),
            "a_score_ci95": [round(lo, 4), round(hi, 4)],
            "a_forfeits": self.a_forfeits,
            "b_forfeits": self.b_forfeits,
        }


@dataclass
class AgentTime:
    """Thinking time of one agent over all its games."""

    agent: str
    seconds: float = 0.0
    decisions: int = 0

    @property
    def per_move(self) -> float:
        """Mean seconds per decision (every act() call: moves, removals, placements)."""
        return self.seconds / self.decisions if self.decisions else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "seconds_per_move": round(self.per_move, 6),
            "decisions": self.decisions,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class ArenaResult:
    """Everything an arena run measured; :meth:`to_json` for other tools.

    ``scale`` names the scale the Elo ratings are on (``anchors``: the agents
    that kept their frozen ratings), or is None when no anchor took part and
    the ratings are relative to the first agent.  ``sprt`` is the sequential
    test, when the match was one.
    """

    agents: list[str]
    pairings: list[PairingResult]
    elo: list[Rating]
    times: list[AgentTime]
    games: list[GameResult] = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)
    scale: str | None = None
    anchors: dict[str, float] = field(default_factory=dict)
    sprt: Sprt | None = None
    #: The spec behind each of ``agents`` (an agent given by ``NAME=SPEC`` is shown by name).
    specs: list[str] = field(default_factory=list)

    def scale_line(self) -> str:
        """Which scale the ratings are on, in words."""
        if self.scale is not None:
            fixed = ", ".join(f"{a} {e:.0f}" for a, e in self.anchors.items())
            return f"Elo on the {self.scale} scale (random = 0; anchors fixed: {fixed}); 95% CI"
        return (
            f"Elo relative to this pool ({self.agents[0]} = 0), not on the fixed scale: "
            "no anchor took part (python -m agents.evaluation.scale lists them); 95% CI"
        )

    def to_json(self) -> dict[str, Any]:
        out = {
            "agents": self.agents,
            "settings": self.settings,
            "pairings": [p.to_json() for p in self.pairings],
            "elo": [r.to_json() for r in self.elo],
            "elo_scale": {
                "name": self.scale,
                "anchors": self.anchors,
                "relative_to": None if self.scale is not None else self.agents[0],
            },
            "time_per_move": [t.to_json() for t in self.times],
            "forfeits": [
                {
                    "game": g.task.index,
                    "agent": self.agents[g.forfeiter],
                    "termination": g.termination,
                    "reason": g.reason,
                }
                for g in self.games
                if g.forfeiter is not None
            ],
        }
        if self.sprt is not None:
            out["sprt"] = self.sprt.to_json()
        if self.specs:
            out["specs"] = dict(zip(self.agents, self.specs))
        return out

    def report(self) -> str:
        """The pairing table, the Elo list and the time per move, as text."""
        lines = []
        width = max(len(p.a) + len(p.b) for p in self.pairings) + 4
        lines.append(f"{'pairing':<{width}} {'games':>5} {'W-D-L':>11} {'score':>6}  95% CI")
        for p in self.pairings:
            lo, hi = p.score_ci95
            name = f"{p.a} vs {p.b}"
            lines.append(
                f"{name:<{width}} {p.games:>5} {p.wdl:>11} {p.score:>6.3f}  [{lo:.3f}, {hi:.3f}]"
            )
        if self.sprt is not None:
            lines += ["", self.sprt.status(), f"decision: {_decision_text(self.sprt, self.agents)}"]
        lines.append("")
        lines.append(self.scale_line())
        width = max(len(a) for a in self.agents) + 2
        per_move = {t.agent: t.per_move for t in self.times}
        lines.append(f"{'agent':<{width}} {'elo':>7}  {'95% CI':<17} {'ms/move':>9}")
        for r in sorted(self.elo, key=lambda r: -r.elo):
            fixed = r.agent in self.anchors or (self.scale is None and r.agent == self.agents[0])
            ci = "anchor" if fixed else f"[{r.ci95[0]:.0f}, {r.ci95[1]:.0f}]"
            elo = f"{r.elo:.0f}"
            if r.bound is not None and not fixed:  # no point (every point): a bound says more
                elo, ci = f"{r.bound[0]} {r.bound[1]:.0f}", "one-sided 95%"
            lines.append(f"{r.agent:<{width}} {elo:>7}  {ci:<17} {1000 * per_move[r.agent]:>9.2f}")
        named = [
            (a, s) for a, s in zip(self.agents, self.specs) if a != s and not a.startswith(f"{s}#")
        ]
        if named:
            lines.append("")
            lines += [f"{a}: {s}" for a, s in named]
        forfeits = [g for g in self.games if g.forfeiter is not None]
        if forfeits:
            lines.append("")
            lines.append(f"{len(forfeits)} game(s) forfeited:")
            for g in forfeits[:10]:
                who = self.agents[g.forfeiter] if g.forfeiter is not None else "?"
                lines.append(f"  game {g.task.index}: {who}: {g.reason}")
        return "\n".join(lines)


def _decision_text(sprt: Sprt, agents: Sequence[str]) -> str:
    """What a decision shows: a sequential test rejects one bound, it never measures the other."""
    s, (a, b) = sprt.settings, agents[:2]
    if sprt.decision == "H1":
        return (
            f"H1 accepted: {a}'s Elo over {b} is above elo0 = {s.elo0:+g} "
            f"(wrong at most {s.alpha:g} of the time; the test was sized for elo1 = {s.elo1:+g})"
        )
    if sprt.decision == "H0":
        return (
            f"H0 accepted: {a}'s Elo over {b} is below elo1 = {s.elo1:+g} "
            f"(wrong at most {s.beta:g} of the time; the test was sized for elo0 = {s.elo0:+g})"
        )
    return f"none: the games ran out before the LLR reached a bound ({sprt.pairs} pairs)"


class PairMonitor:
    """Feeds a :class:`Sprt` the game pairs of a two-agent match in opening order.

    Pair ``k`` is games ``2k`` and ``2k + 1`` (one opening, colours swapped);
    a pair counts once both games are in and every earlier pair has counted,
    so the test sees the same sequence whatever order the games finish in.
    """

    def __init__(self, sprt: Sprt) -> None:
        self.sprt = sprt
        self.waiting: dict[int, GameResult] = {}
        #: Games counted by the test so far: indices 0 .. counted - 1.
        self.counted = 0

    def add(self, result: GameResult) -> bool:
        """Take a finished game; True once the test has decided."""
        self.waiting[result.task.index] = result
        while self.sprt.decision == "none":
            first, second = self.counted, self.counted + 1
            if first not in self.waiting or second not in self.waiting:
                break
            points = self.waiting[first].score_of(0) + self.waiting[second].score_of(0)
            self.sprt.add_pair(points)
            self.counted += 2
        return self.sprt.decision != "none"


# --- the arena ----------------------------------------------------------------------


def validate_specs(specs: Sequence[Any], rings_to_win: int | None = None) -> list[Agent]:
    """Build every agent once (raising :class:`AgentSpecError` for a bad spec).

    An entry that is not a spec string is an agent of your own
    (:func:`agents.byo.as_agent`: an Agent, an object with ``act``, an
    observation callable).

    With ``rings_to_win``, an agent made for another variant raises
    :class:`~agents.evaluation.match.VariantMismatchError` (a ``ValueError``).  On an
    error the agents already built are closed.
    """
    built: list[Agent] = []
    try:
        for i, spec in enumerate(specs):
            built.append(make_agent(spec, seed=i) if isinstance(spec, str) else as_agent(spec))
        if rings_to_win is not None:
            for agent in built:
                check_variant(agent, rings_to_win)
    except BaseException:
        for agent in built:
            agent.close()
        raise
    return built


def run_arena(
    specs: Sequence[Any],
    games: int,
    settings: MatchSettings = DEFAULT_SETTINGS,
    *,
    records_dir: str | Path | None = None,
    progress: bool = True,
    on_game: Callable[[GameResult], None] | None = None,
    sprt: SprtSettings | None = None,
    on_pair: Callable[[Sprt], None] | None = None,
    scale: Scale | None = None,
    db: str | Path | None = None,
    db_event: str = "yinsh-eval",
) -> ArenaResult:
    """Play ``games`` games per pairing of ``specs`` and rate the agents.

    Two specs play a match, more a round robin, as ``settings`` say (seed,
    workers, openings, variant, move time limit, backend:
    :class:`~agents.evaluation.settings.MatchSettings`).  ``records_dir``
    receives one ``.yinsh`` record per game.  ``on_game(result)`` is called
    for every finished game.  With ``sprt`` (two specs only) the match stops
    when the test decides (``games`` is its most), calling ``on_pair(test)``
    after every pair.  Ratings are on ``scale`` (default: the shipped one)
    when its anchors take part.  ``db`` appends every finished game to a
    results database (:mod:`agents.evaluation.results_db`), tagged
    ``db_event``.

    Raises :class:`~agents.spec.AgentSpecError` (a ``ValueError``) for a bad
    spec, :class:`~agents.evaluation.match.VariantMismatchError` for an agent made for
    another variant, and ``ValueError`` for bad settings, before any game.

    One game pair (an opening played with either colour) in this process:

    >>> from agents.evaluation.arena import run_arena
    >>> from agents.evaluation.settings import MatchSettings
    >>> result = run_arena(["greedy", "random"], 2, MatchSettings(seed=0), progress=False)
    >>> pairing = result.pairings[0]
    >>> pairing.a, pairing.b, pairing.wins, pairing.draws, pairing.losses
    ('greedy', 'random', 2, 0, 0)
    """
    entries = [split_name(s) if isinstance(s, str) else (None, s) for s in specs]
    given = [name for name, _ in entries]
    specs = [spec for _, spec in entries]
    _check_request(specs, games, sprt)
    if records_dir is not None:
        check_records_dir(records_dir)
    rings_to_win = settings.rings_to_win
    scale = scale if scale is not None else default_scale()
    if scale.rings_to_win != rings_to_win:
        scale = None  # the anchors' ratings hold for their own variant only
    if db is not None:
        check_db(db)
    recorded: dict[str, Any] = {"games_per_pairing": games, **settings.to_json()}
    if sprt is not None:
        recorded["sprt"] = [sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta]
    built = validate_specs(specs, rings_to_win)
    try:
        names = agent_labels(given, [agent.name for agent in built])
        identities = [agent_identity(agent) for agent in built]
        if settings.backend == "ray" or min(settings.workers, games * len(specs)) > 1:
            check_travel(specs, names, settings.backend)
        texts = [s if isinstance(s, str) else a.name for s, a in zip(specs, built)]
        writer = None
        if db is not None:
            writer = game_writer(
                db, db_event, texts, dict(enumerate(built)), rings_to_win, recorded, names
            )
    except BaseException:
        for agent in built:
            agent.close()
        raise
    openings = make_openings(
        math.ceil(games / 2), settings.opening_plies, settings.seed, rings_to_win
    )
    tasks = make_tasks(len(specs), games, openings, settings.seed)
    records_path = Path(records_dir) if records_dir is not None else None
    if records_path is not None:
        records_path.mkdir(parents=True, exist_ok=True)
    try:
        runner = make_runner(
            specs, dict(enumerate(built)), settings, min(settings.workers, len(tasks))
        )
    except BaseException:
        if writer is not None:
            writer.close()
        raise
    test = Sprt(sprt) if sprt is not None else None
    monitor = PairMonitor(test) if test is not None else None
    results: list[GameResult] = []
    bar = _progress_bar(len(tasks), progress)
    results_iter: Iterator[GameResult] = runner.play(tasks)
    try:
        for result in results_iter:
            results.append(result)
            _announce(result, writer, records_path, names, rings_to_win, on_game)
            if bar is not None:
                bar.update(1)
            if monitor is not None and test is not None:
                pairs = test.pairs
                decided = monitor.add(result)
                if test.pairs != pairs and on_pair is not None:
                    on_pair(test)
                if decided:
                    break
    finally:
        close = getattr(results_iter, "close", None)
        if close is not None:
            close()  # a stopped loop abandons the games still running, at once
        runner.close()
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close()
    if monitor is not None and test is not None and test.decision != "none":
        results = [r for r in results if r.task.index < monitor.counted]
    results.sort(key=lambda r: r.task.index)
    summary = summarise(names, results, recorded, scale=scale, identities=identities, sprt=test)
    summary.specs = texts
    return summary


def _check_request(specs: Sequence[Any], games: int, sprt: SprtSettings | None) -> None:
    """ValueError unless ``games`` per pairing of ``specs`` (and the SPRT) can be played."""
    if len(specs) < 2:
        raise ValueError(f"the arena needs at least two agent specs, got {specs}")
    if games < 1:
        raise ValueError(f"games must be >= 1, got games={games}")
    if sprt is not None and len(specs) != 2:
        raise ValueError(f"an SPRT compares two agents, got {len(specs)} specs")
    if sprt is not None and games < 2:
        raise ValueError(f"an SPRT plays game pairs: games must be >= 2, got {games}")


def _announce(
    result: GameResult,
    writer: GameWriter | None,
    records_path: Path | None,
    names: Sequence[str],
    rings_to_win: int,
    on_game: Callable[[GameResult], None] | None,
) -> None:
    """A finished game to all that keep it: the results database first, then its record
    file, then ``on_game``."""
    if writer is not None:
        writer.add(result)  # on disk before anything else hears of the game
    if records_path is not None:
        record = game_record(result, names, rings_to_win)
        save_record(record, records_path / record_name(result.task.index), new=True)
    if on_game is not None:
        on_game(result)


def record_name(index: int) -> str:
    """The file name of game ``index``'s record in a records folder."""
    return f"game-{index:05d}.yinsh"


def check_records_dir(folder: str | Path) -> None:
    """ValueError, naming ``folder``, when it already holds game records (an earlier
    run's, or a link planted under a record's name): they are never replaced."""
    try:
        with os.scandir(folder) as entries:
            taken = sorted(e.name for e in entries if RECORD_NAME.fullmatch(e.name))
    except (FileNotFoundError, NotADirectoryError):
        return  # created by the run (a file in the way fails there, naming it)
    except OSError as exc:
        raise ValueError(f"records folder {folder}: cannot be read ({exc.strerror})") from None
    if taken:
        raise ValueError(
            f"records folder {folder} already holds {len(taken)} game record(s) "
            f"({taken[0]}{', ...' if len(taken) > 1 else ''}): they are not replaced; "
            "give another folder"
        )


def summarise(
    names: Sequence[str],
    results: Sequence[GameResult],
    settings: dict[str, Any] | None = None,
    *,
    scale: Scale | None = None,
    identities: Sequence[str] | None = None,
    sprt: Sprt | None = None,
) -> ArenaResult:
    """Tables, Elo and times from a list of game results.

    With ``scale`` and the agents' ``identities``, the anchors among them keep
    their frozen ratings and the others are rated around them.
    """
    n = len(names)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    pairings = [PairingResult(names[a], names[b]) for a, b in pairs]
    times = [AgentTime(name) for name in names]
    for r in results:
        a, b = pairs[r.task.pairing]
        p = pairings[r.task.pairing]
        p.add(r.score_of(a))
        if r.forfeiter == a:
            p.a_forfeits += 1
        elif r.forfeiter == b:
            p.b_forfeits += 1
        for side, agent in ((0, r.task.white), (1, r.task.black)):
            times[agent].seconds += r.think[side][0]
            times[agent].decisions += r.think[side][1]
    pair_results = [
        PairResult(a, b, p.points, p.games) for (a, b), p in zip(pairs, pairings) if p.games
    ]
    fixed = scale.fixed(identities) if scale is not None and identities is not None else {}
    played = {k for r in pair_results for k in (r.i, r.j)}
    fixed = {k: e for k, e in fixed.items() if k in played}
    elo = elo_ratings(list(names), pair_results, fixed=fixed or None)
    return ArenaResult(
        list(names),
        pairings,
        elo,
        times,
        list(results),
        settings or {},
        scale=scale.name if fixed and scale is not None else None,
        anchors={names[k]: e for k, e in sorted(fixed.items())},
        sprt=sprt,
    )


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="game", desc="arena", dynamic_ncols=True)


def save_json(result: ArenaResult | RatingResult, path: str | Path) -> None:
    """Write the result's ``to_json()`` to ``path``."""
    write_text(path, json.dumps(result.to_json(), indent=2) + "\n")


def plot_elo(result: ArenaResult, path: str | Path) -> bool:
    """Save a bar chart of the Elo ratings with their intervals; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ratings = sorted(result.elo, key=lambda r: r.elo)
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.5 * len(ratings)))
    elo = [r.elo for r in ratings]
    errors = [[r.elo - r.ci95[0] for r in ratings], [r.ci95[1] - r.elo for r in ratings]]
    ax.barh([r.agent for r in ratings], elo, xerr=errors, capsize=4, color="#4a7ab0")
    where = f"{result.scale} scale, random = 0" if result.scale else f"{result.agents[0]} = 0"
    ax.set_xlabel(f"Elo ({where}), 95% CI")
    fig.tight_layout()
    fmt = Path(path).suffix[1:].lower() or "png"
    try:
        write_file(path, lambda handle: fig.savefig(handle, format=fmt))
    finally:
        plt.close(fig)
    return True
