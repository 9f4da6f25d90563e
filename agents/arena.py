"""The arena: matches and round robins between agents named by spec strings.

:func:`run_arena` plays ``games`` games for every pairing of the given specs
(two specs: one match; more: a round robin).  Games start from a seeded set of
openings (``opening_plies`` random ring placements, alternating colours), the
same set for every pairing, and each opening is played twice with the colours
swapped, so colour and opening advantages cancel.  Games run in worker
processes, each of which builds its own agents from the specs; every agent is
first built once in the calling process so that a bad spec (unknown agent,
missing checkpoint, a variant the agent was not made for) fails before any
game starts.  Each game is one :func:`agents.match.play_match`: the PettingZoo
``agent_iter()`` loop over :func:`yinsh_env.env` that any env user runs.

An agent that raises :class:`~agents.base.AgentFailure`, returns an illegal
action, raises any other error, or (with ``move_time_limit``) overruns its
time, forfeits the game: the opponent is scored the win and the record says
why (termination ``forfeit`` or ``timeout``, tag ``reason``).  The arena never
stops for a misbehaving agent.

Results: per pairing wins/draws/losses and the score with a 95% Wilson
interval; Elo ratings for all agents from a Bradley-Terry fit
(:mod:`agents.elo`), the first agent anchored at 0; time per decision per
agent; every game as a :class:`~yinsh_env.records.GameRecord` saved under
``records_dir`` when given.
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from yinsh_env import Result, State, Termination, action_to_str
from yinsh_env.records import GameRecord, save_record

from . import spec as spec_module
from .base import Agent
from .elo import PairResult, Rating, elo_ratings, wilson_interval
from .match import check_variant, play_match
from .spec import make_agent
from .worker_pool import guarded_pool, kill_workers, results_as_finished, signals_deferred

#: Random ring placements at the start of every arena game (two per player).
DEFAULT_OPENING_PLIES = 4


@dataclass(frozen=True)
class GameTask:
    """One game to play: which agents (indices into the spec list), opening, seed."""

    index: int
    pairing: int
    white: int
    black: int
    opening: tuple[int, ...]
    seed: int


@dataclass
class GameResult:
    """How one game went: result, why it ended, its actions and the time spent.

    ``result`` is ``'W'``, ``'B'`` or ``'draw'``; ``termination`` is a rules
    ending (``rings``, ``pool``, ``passes``) or ``forfeit`` / ``timeout``, when
    ``forfeiter`` (an agent index) lost by misbehaving, with ``reason``.
    ``think`` holds (seconds, decisions) for White and Black.
    """

    task: GameTask
    result: str
    termination: str
    actions: list[int]
    think: tuple[tuple[float, int], tuple[float, int]]
    reason: str = ""
    forfeiter: int | None = None

    def score_of(self, agent: int) -> float:
        """Points (1, 1/2, 0) that agent index ``agent`` made in this game."""
        if self.result == "draw":
            return 0.5
        winner = self.task.white if self.result == "W" else self.task.black
        return 1.0 if winner == agent else 0.0


@dataclass
class PairingResult:
    """Totals of one pairing from agent ``a``'s side."""

    a: str
    b: str
    games: int = 0
    a_wins: int = 0
    draws: int = 0
    b_wins: int = 0
    a_forfeits: int = 0
    b_forfeits: int = 0

    @property
    def a_score(self) -> float:
        """``a``'s mean score: wins plus half the draws, over games."""
        return (self.a_wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def a_score_ci95(self) -> tuple[float, float]:
        return wilson_interval(self.a_wins + 0.5 * self.draws, self.games)

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.a_score_ci95
        return {
            "a": self.a,
            "b": self.b,
            "games": self.games,
            "a_wins": self.a_wins,
            "draws": self.draws,
            "b_wins": self.b_wins,
            "a_score": round(self.a_score, 4),
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
    """Everything an arena run measured; :meth:`to_json` for other tools."""

    agents: list[str]
    pairings: list[PairingResult]
    elo: list[Rating]
    times: list[AgentTime]
    games: list[GameResult] = field(repr=False)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": self.agents,
            "settings": self.settings,
            "pairings": [p.to_json() for p in self.pairings],
            "elo": [r.to_json() for r in self.elo],
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

    def report(self) -> str:
        """The pairing table, the Elo list and the time per move, as text."""
        lines = []
        width = max(len(p.a) + len(p.b) for p in self.pairings) + 4
        lines.append(f"{'pairing':<{width}} {'games':>5} {'W-D-L':>11} {'score':>6}  95% CI")
        for p in self.pairings:
            lo, hi = p.a_score_ci95
            wdl = f"{p.a_wins}-{p.draws}-{p.b_wins}"
            name = f"{p.a} vs {p.b}"
            lines.append(
                f"{name:<{width}} {p.games:>5} {wdl:>11} {p.a_score:>6.3f}  [{lo:.3f}, {hi:.3f}]"
            )
        lines.append("")
        anchor = self.agents[0]
        lines.append(f"Elo (Bradley-Terry, {anchor} anchored at 0; 95% CI)")
        width = max(len(a) for a in self.agents) + 2
        per_move = {t.agent: t.per_move for t in self.times}
        lines.append(f"{'agent':<{width}} {'elo':>7}  {'95% CI':<17} {'ms/move':>9}")
        for r in sorted(self.elo, key=lambda r: -r.elo):
            ci = f"[{r.ci95[0]:.0f}, {r.ci95[1]:.0f}]"
            lines.append(
                f"{r.agent:<{width}} {r.elo:>7.0f}  {ci:<17} {1000 * per_move[r.agent]:>9.2f}"
            )
        forfeits = [g for g in self.games if g.forfeiter is not None]
        if forfeits:
            lines.append("")
            lines.append(f"{len(forfeits)} game(s) forfeited:")
            for g in forfeits[:10]:
                who = self.agents[g.forfeiter] if g.forfeiter is not None else "?"
                lines.append(f"  game {g.task.index}: {who}: {g.reason}")
        return "\n".join(lines)


# --- openings and tasks -----------------------------------------------------------


def make_openings(
    count: int, plies: int, seed: int, rings_to_win: int = 3
) -> list[tuple[int, ...]]:
    """``count`` seeded openings of ``plies`` random ring placements each (distinct)."""
    if not 0 <= plies <= 10:
        raise ValueError(f"opening plies must be in 0..10 (ring placements), got {plies}")
    rng = np.random.default_rng([seed, 0x0BE11])
    openings: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    attempts = 0
    while len(openings) < count:
        state = State(rings_to_win=rings_to_win)
        for _ in range(plies):
            legal = state.legal_actions()
            state.apply_unchecked(legal[int(rng.integers(len(legal)))])
        opening = tuple(state.actions)
        attempts += 1
        if opening in seen and attempts < 10 * count:
            continue  # only the empty opening repeats for long
        seen.add(opening)
        openings.append(opening)
    return openings


def make_tasks(
    n_agents: int, games: int, openings: Sequence[tuple[int, ...]], seed: int
) -> list[GameTask]:
    """Every pairing's games, interleaved across pairings; colours swap per opening."""
    pairs = [(a, b) for a in range(n_agents) for b in range(a + 1, n_agents)]
    tasks: list[GameTask] = []
    for g in range(games):
        for pairing, (a, b) in enumerate(pairs):
            white, black = (a, b) if g % 2 == 0 else (b, a)
            index = len(tasks)
            game_seed = int(np.random.SeedSequence([seed, pairing, g]).generate_state(1)[0])
            tasks.append(GameTask(index, pairing, white, black, openings[g // 2], game_seed))
    return tasks


# --- playing one game ---------------------------------------------------------------


def play_game(
    white: Agent,
    black: Agent,
    task: GameTask,
    rings_to_win: int = 3,
    move_time_limit: float | None = None,
) -> GameResult:
    """Play one game (agents reset with the task's seed) from its opening: one match loop."""
    white.reset(seed=task.seed)
    black.reset(seed=task.seed ^ 0x5EED)
    match = play_match((white, black), rings_to_win, task.opening, move_time_limit)
    indices = (task.white, task.black)
    think = match.think
    return GameResult(
        task=task,
        result=match.result,
        termination=match.termination,
        actions=match.state.actions,
        think=((float(think[0][0]), int(think[0][1])), (float(think[1][0]), int(think[1][1]))),
        reason=match.reason,
        forfeiter=None if match.forfeiter is None else indices[match.forfeiter],
    )


def game_record(result: GameResult, agents: Sequence[str], rings_to_win: int) -> GameRecord:
    """The :class:`GameRecord` of an arena game (the full action list, opening included)."""
    task = result.task
    tags = {
        "event": "yinsh-eval",
        "game": str(task.index),
        "seed": str(task.seed),
        "opening_plies": str(len(task.opening)),
    }
    if result.reason:
        tags["reason"] = result.reason
    return GameRecord(
        rings_to_win=rings_to_win,
        white=agents[task.white],
        black=agents[task.black],
        result=Result(result.result),
        termination=Termination(result.termination),
        actions=[action_to_str(a) for a in result.actions],
        tags=tags,
    )


# --- worker processes ---------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _registry_snapshot() -> dict[str, Any]:
    """Registry entries that can travel to a worker process (runtime registrations too)."""
    snapshot = {}
    for name, factory in spec_module.registered_agents().items():
        try:
            pickle.dumps(factory)
        except Exception:
            continue
        snapshot[name] = factory
    return snapshot


def _init_worker(
    specs: list[str], registry: dict[str, Any], rings_to_win: int, limit: float | None
) -> None:
    for name, factory in registry.items():
        spec_module.register_agent(name, factory, replace=False)
    # Build the agents lazily: a worker only needs the ones its games use.
    _WORKER.update(specs=specs, agents={}, rings_to_win=rings_to_win, limit=limit)


def _worker_agent(index: int) -> Agent:
    agents: dict[int, Agent] = _WORKER["agents"]
    if index not in agents:
        agents[index] = make_agent(_WORKER["specs"][index], seed=index)
    return agents[index]


def _play_task(task: GameTask) -> GameResult:
    return play_game(
        _worker_agent(task.white),
        _worker_agent(task.black),
        task,
        rings_to_win=_WORKER["rings_to_win"],
        move_time_limit=_WORKER["limit"],
    )


def _run_parallel(
    tasks: list[GameTask],
    specs: list[str],
    workers: int,
    rings_to_win: int,
    limit: float | None,
) -> Generator[GameResult, None, None]:
    """Results as games finish in ``workers`` processes that die with this one.

    Interrupted (a signal, an error, the consumer closing the generator), the
    workers are killed at once rather than left to finish their games.
    """
    pool = guarded_pool(workers, _init_worker, (specs, _registry_snapshot(), rings_to_win, limit))
    interrupted = True
    try:
        for _, result in results_as_finished(pool, _play_task, [(t,) for t in tasks]):
            yield result
        interrupted = False
    finally:
        with signals_deferred():  # a second signal waits for the workers' end
            if interrupted:
                kill_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)


# --- the arena ----------------------------------------------------------------------


def validate_specs(specs: Sequence[str], rings_to_win: int | None = None) -> list[Agent]:
    """Build every agent once (raising :class:`AgentSpecError` for a bad spec).

    With ``rings_to_win``, an agent made for another variant raises
    :class:`~agents.match.VariantMismatchError` (a ``ValueError``).
    """
    built = [make_agent(spec, seed=i) for i, spec in enumerate(specs)]
    if rings_to_win is not None:
        try:
            for agent in built:
                check_variant(agent, rings_to_win)
        except ValueError:
            for agent in built:
                agent.close()
            raise
    return built


def run_arena(
    specs: Sequence[str],
    games: int,
    workers: int = 1,
    seed: int = 0,
    records_dir: str | Path | None = None,
    progress: bool = True,
    *,
    opening_plies: int = DEFAULT_OPENING_PLIES,
    rings_to_win: int = 3,
    move_time_limit: float | None = None,
    on_game: Callable[[GameResult], None] | None = None,
) -> ArenaResult:
    """Play ``games`` games per pairing of ``specs`` and rate the agents.

    Two specs play a match, more a round robin.  ``workers`` > 1 plays games
    in that many processes.  ``records_dir`` receives one ``.yinsh`` record per
    game.  ``opening_plies`` random ring placements start every game (each
    opening is played with both colour assignments); ``move_time_limit``
    forfeits an agent that thinks longer than that many seconds on one
    decision.  Raises :class:`~agents.spec.AgentSpecError` (a ``ValueError``)
    for a bad spec, :class:`~agents.match.VariantMismatchError` for an agent
    made for another variant, and ``ValueError`` for bad settings, before any
    game.  Every game is one :func:`agents.match.play_match` loop over the
    PettingZoo env.
    """
    specs = [str(s).strip() for s in specs]
    if len(specs) < 2:
        raise ValueError(f"the arena needs at least two agent specs, got {specs}")
    if games < 1 or workers < 1:
        raise ValueError(f"games and workers must be >= 1, got games={games}, workers={workers}")
    if move_time_limit is not None and not 0 < move_time_limit < math.inf:
        raise ValueError(f"move_time_limit must be positive, got {move_time_limit}")
    names = _unique_names(specs)
    built = validate_specs(specs, rings_to_win)
    openings = make_openings(math.ceil(games / 2), opening_plies, seed, rings_to_win)
    tasks = make_tasks(len(specs), games, openings, seed)
    records_path = Path(records_dir) if records_dir is not None else None
    if records_path is not None:
        records_path.mkdir(parents=True, exist_ok=True)

    if workers == 1:
        results_iter: Generator[GameResult, None, None] = (
            play_game(built[t.white], built[t.black], t, rings_to_win, move_time_limit)
            for t in tasks
        )
    else:
        for agent in built:
            agent.close()
        results_iter = _run_parallel(
            tasks, specs, min(workers, len(tasks)), rings_to_win, move_time_limit
        )

    results: list[GameResult] = []
    bar = _progress_bar(len(tasks), progress)
    try:
        for result in results_iter:
            results.append(result)
            if records_path is not None:
                record = game_record(result, names, rings_to_win)
                save_record(record, records_path / f"game-{result.task.index:05d}.yinsh")
            if on_game is not None:
                on_game(result)
            if bar is not None:
                bar.update(1)
    finally:
        results_iter.close()  # an interrupted loop stops the worker processes at once
        if bar is not None:
            bar.close()
        if workers == 1:
            for agent in built:
                agent.close()
    results.sort(key=lambda r: r.task.index)
    settings = {
        "games_per_pairing": games,
        "workers": workers,
        "seed": seed,
        "opening_plies": opening_plies,
        "rings_to_win": rings_to_win,
        "move_time_limit": move_time_limit,
    }
    return summarise(names, results, settings)


def summarise(
    names: Sequence[str], results: Sequence[GameResult], settings: dict[str, Any] | None = None
) -> ArenaResult:
    """Tables, Elo and times from a list of game results."""
    n = len(names)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    pairings = [PairingResult(names[a], names[b]) for a, b in pairs]
    times = [AgentTime(name) for name in names]
    for r in results:
        a, b = pairs[r.task.pairing]
        p = pairings[r.task.pairing]
        p.games += 1
        score = r.score_of(a)
        if score == 1.0:
            p.a_wins += 1
        elif score == 0.0:
            p.b_wins += 1
        else:
            p.draws += 1
        if r.forfeiter == a:
            p.a_forfeits += 1
        elif r.forfeiter == b:
            p.b_forfeits += 1
        for side, agent in ((0, r.task.white), (1, r.task.black)):
            times[agent].seconds += r.think[side][0]
            times[agent].decisions += r.think[side][1]
    pair_results = [
        PairResult(a, b, p.a_wins + 0.5 * p.draws, p.games)
        for (a, b), p in zip(pairs, pairings)
        if p.games
    ]
    elo = elo_ratings(list(names), pair_results)
    return ArenaResult(list(names), pairings, elo, times, list(results), settings or {})


def _unique_names(specs: Sequence[str]) -> list[str]:
    """The specs, with ``#2``, ``#3`` appended to repeats (self-play sanity checks)."""
    names: list[str] = []
    for spec in specs:
        name, k = spec, 1
        while name in names:
            k += 1
            name = f"{spec}#{k}"
        names.append(name)
    return names


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="game", desc="arena", dynamic_ncols=True)


def save_json(result: ArenaResult, path: str | Path) -> None:
    """Write :meth:`ArenaResult.to_json` to ``path``."""
    Path(path).write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")


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
    ax.set_xlabel(f"Elo ({result.agents[0]} = 0), 95% CI")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
