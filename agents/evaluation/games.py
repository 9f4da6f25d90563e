"""One arena game: the task (agents, opening, seed), its result, its record.

Games start from seeded openings (``opening_plies`` random ring placements),
and :func:`make_tasks` plays each opening twice with the colours swapped: a
*game pair*, the unit of the sequential test (:mod:`agents.evaluation.sprt`).
Every game's randomness comes from its task's seed, so a game replays the
same wherever it is played: in this process, a worker process or a Ray actor
(:mod:`agents.evaluation.runners`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agents.base import Agent
from agents.evaluation.match import play_match
from agents.infra.worker_pool import agent_exit
from agents.params import clip
from yinsh_env import Result, State, Termination, action_to_str
from yinsh_env.envs.env_base import ARENA_OPENING_PLIES, check_opening_plies, play_opening
from yinsh_env.records.formats import GameRecord

#: Random ring placements at the start of every arena game: the environments'
#: number (:data:`yinsh_env.envs.env_base.ARENA_OPENING_PLIES`), which they take
#: as ``opening_plies=`` to train on the games the arena plays.
DEFAULT_OPENING_PLIES = ARENA_OPENING_PLIES


class WorkerDied(RuntimeError):
    """Workers died where no agent's turn explains it (or Ray actors too often): the match stops.

    Here, beside the game tasks and results, so that every runner (processes, Ray)
    raises the one class without importing another runner."""


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


# --- openings and tasks -----------------------------------------------------------


def make_openings(
    count: int, plies: int, seed: int, rings_to_win: int = 3
) -> list[tuple[int, ...]]:
    """``count`` seeded openings of ``plies`` random ring placements each (distinct)."""
    check_opening_plies(plies)
    rng = np.random.default_rng([seed, 0x0BE11])
    openings: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    attempts = 0
    while len(openings) < count:
        state = State(rings_to_win=rings_to_win)
        play_opening(state, plies, rng)  # the environments' opening_plies, drawn the same way
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
    in_worker: bool = False,
    on_turn: Callable[[int | None], None] | None = None,
) -> GameResult:
    """Play one game (agents reset with the task's seed) from its opening: one match loop.

    ``in_worker``: a ``KeyboardInterrupt`` from an agent forfeits (no Ctrl-C
    reaches a worker); ``on_turn(agent index)`` is called before each decision,
    ``on_turn(None)`` after it.
    """
    indices = (task.white, task.black)
    for index, agent, seed in (
        (task.white, white, task.seed),
        (task.black, black, task.seed ^ 0x5EED),
    ):
        failure = _reset(agent, seed, in_worker)
        if failure:  # a crash in reset loses the game, as one in act does
            return forfeit_result(task, index, failure)
    match = play_match(
        (white, black),
        rings_to_win,
        task.opening,
        move_time_limit,
        agent_interrupts=in_worker,
        on_turn=None if on_turn is None else lambda side: on_turn(_index(indices, side)),
    )
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


def _reset(agent: Agent, seed: int, in_worker: bool) -> str:
    """``agent.reset(seed=seed)``; what went wrong, as a forfeit's reason ("" if nothing)."""
    try:
        agent.reset(seed=seed)
    except Exception as exc:
        return f"crashed in reset: {type(exc).__name__}: {clip(str(exc), 200)}"
    except SystemExit as exc:
        return f"exited in reset: {agent_exit(exc)}"
    except KeyboardInterrupt:
        if not in_worker:
            raise
        return "raised KeyboardInterrupt in reset"
    return ""


def _index(indices: tuple[int, int], side: int | None) -> int | None:
    return None if side is None else indices[side]


def forfeit_result(task: GameTask, forfeiter: int, reason: str) -> GameResult:
    """A game lost by agent index ``forfeiter`` without a finished match (its worker died)."""
    return GameResult(
        task=task,
        result="B" if forfeiter == task.white else "W",
        termination=Termination.FORFEIT.value,
        actions=list(task.opening),
        think=((0.0, 0), (0.0, 0)),
        reason=reason,
        forfeiter=forfeiter,
    )


def game_record(
    result: GameResult, agents: Sequence[str] | Mapping[int, str], rings_to_win: int
) -> GameRecord:
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
