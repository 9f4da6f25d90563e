"""The one match loop: two agents play a game through the PettingZoo AEC environment.

A match is the loop any user of :func:`yinsh_env.env` writes:

>>> from agents import make_agent
>>> from yinsh_env import env
>>> players = {"player_0": make_agent("greedy", seed=0), "player_1": make_agent("random", seed=0)}
>>> game = env()
>>> game.reset()
>>> for name in game.agent_iter():
...     observation, reward, termination, truncation, info = game.last()
...     state = game.unwrapped.copy_state()
...     action = None if termination or truncation else players[name].act(state)
...     game.step(action)
>>> game.unwrapped.game.result
<Result.WHITE_WINS: 'W'>

so an agent that plays here (in the arena, ``yinsh-play``, the trainer's
evaluation) plays in any code that drives ``env()``, and the reverse.  Agents
decide on a copy of the env's engine state
(:meth:`~yinsh_env.envs.aec_env.raw_env.copy_state`, the exact position the
observation encodes); the outcome is the env's rewards and terminations,
including its PettingZoo convention for an illegal action (the offender gets
-1 and the game ends).  What an env cannot
express, an agent that fails, crashes or overruns ``move_time_limit``, ends
the match as a forfeit without a step.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import numpy as np

from agents.base import Agent, AgentFailure
from agents.infra.worker_pool import agent_exit
from yinsh_env import Player, Result, Termination, action_to_str
from yinsh_env.engine.state import State
from yinsh_env.envs.aec_env import env
from yinsh_env.envs.aec_env import raw_env as RawEnv
from yinsh_env.envs.env_base import AGENT_INDEX


class VariantMismatchError(ValueError):
    """An agent built for one variant (rings to win) was paired in a game of another."""


def check_variant(agent: Agent, rings_to_win: int) -> None:
    """Refuse ``agent`` for a game of ``rings_to_win`` if it was made for another variant."""
    made_for = agent.rings_to_win
    if made_for is not None and made_for != rings_to_win:
        raise VariantMismatchError(
            f"agent {agent.name!r} was trained for {variant_name(made_for)} "
            f"(rings_to_win={made_for}) and cannot play {variant_name(rings_to_win)} "
            f"(rings_to_win={rings_to_win})"
        )


def variant_name(rings_to_win: int) -> str:
    return {3: "standard", 1: "Blitz"}.get(rings_to_win, f"{rings_to_win} rings to win")


@dataclass
class MatchResult:
    """How a match went.

    ``returns`` are the env's final rewards per player (+1 / -1 / 0; a
    forfeit scores -1 / +1).  ``termination`` is a rules ending (``rings``,
    ``pool``, ``passes``), ``forfeit`` or ``timeout`` (``forfeiter`` lost by
    misbehaving; ``reason`` says how, ``detail`` is the agent's own message),
    or ``unfinished`` when interrupted.  ``think`` holds (seconds, decisions)
    per player.
    """

    state: State
    returns: tuple[float, float]
    termination: Termination
    reason: str = ""
    detail: str = ""
    forfeiter: Player | None = None
    interrupted: bool = False
    think: list[list[float]] = field(default_factory=lambda: [[0.0, 0], [0.0, 0]])

    @property
    def result(self) -> Result:
        """Who won by the returns; ``Result.UNFINISHED`` for an interrupted game."""
        if self.interrupted:
            return Result.UNFINISHED
        white, black = self.returns
        if white == black:
            return Result.DRAW
        return Result.win_for(Player.WHITE if white > black else Player.BLACK)


class _MoveTimeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _MoveTimeout


def timed_act(agent: Agent, state: State, limit: float | None) -> Any:
    """``agent.act(state)``, interrupted after ``limit`` seconds if given (main thread only)."""
    use_alarm = (
        limit is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not use_alarm:
        return agent.act(state)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)  # type: ignore[arg-type]
    try:
        return agent.act(state)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def describe_action(action: object) -> str:
    try:
        return f"{action_to_str(action)} ({action})"  # type: ignore[arg-type]
    except ValueError:
        return repr(action)[:80]


def _is_action(action: object) -> bool:
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


def play_match(
    agents: Sequence[Agent],
    rings_to_win: int = 3,
    opening: Sequence[int | str] = (),
    move_time_limit: float | None = None,
    on_step: Callable[[State], None] | None = None,
    interruptible: bool = False,
    agent_interrupts: bool = False,
    on_turn: Callable[[int | None], None] | None = None,
) -> MatchResult:
    """Play one game between ``agents`` (White, Black) through the AEC env.

    ``opening`` actions start the game (the env's ``reset`` option);
    ``on_step(state)`` is called after every action; with ``interruptible``
    a ``KeyboardInterrupt`` ends the match as ``unfinished``.  An agent whose
    ``act`` raises ``SystemExit`` forfeits (a signal's ``SignalExit`` goes
    on up); one that raises ``KeyboardInterrupt`` forfeits only with
    ``agent_interrupts`` (in a worker, where Ctrl-C never arrives: that one
    can only be the agent's own).  ``on_turn(side)`` is called before each
    decision and ``on_turn(None)`` after it (a worker notes who is thinking,
    should its process die).  The agents are
    not reset here (callers seed them per game).  Raises
    :class:`VariantMismatchError` before the game if an agent was made for
    another variant.

    >>> from agents import make_agent
    >>> from agents.evaluation.match import play_match
    >>> match = play_match([make_agent("greedy", seed=0), make_agent("random", seed=0)])
    >>> match.result, match.termination, match.returns
    (<Result.WHITE_WINS: 'W'>, <Termination.RINGS: 'rings'>, (1.0, -1.0))
    """
    for agent in agents:
        check_variant(agent, rings_to_win)
    game = env(rings_to_win=rings_to_win)
    game.reset(options={"actions": list(opening)})
    base: RawEnv = game.unwrapped
    returns = [0.0, 0.0]
    think: list[list[float]] = [[0.0, 0], [0.0, 0]]
    try:
        for name in game.agent_iter():
            _, reward, termination, truncation, _ = game.last(observe=False)
            side = Player(AGENT_INDEX[name])
            returns[side] += reward
            if termination or truncation:
                game.step(None)
                continue
            agent = agents[side]
            start = time.perf_counter()
            failure = detail = ""
            termination_kind = Termination.FORFEIT
            action: Any = None
            if on_turn is not None:
                on_turn(side)
            try:
                action = timed_act(agent, base.copy_state(), move_time_limit)
            except AgentFailure as exc:
                failure, detail = f"agent failure: {exc.reason}", exc.reason
            except _MoveTimeout:
                failure = detail = f"no action within {move_time_limit} s"
                termination_kind = Termination.TIMEOUT
            except Exception as exc:  # an agent bug must not stop the match
                failure = detail = f"crashed: {type(exc).__name__}: {exc}"
            except SystemExit as exc:  # sys.exit() in act: the agent's, unless a signal's
                failure = detail = f"exited: {agent_exit(exc)}"
            except KeyboardInterrupt:  # a Ctrl-C here, unless no Ctrl-C can reach this process
                if not agent_interrupts:
                    raise
                failure = detail = "raised KeyboardInterrupt"
            if on_turn is not None:
                on_turn(None)
            think[side][0] += time.perf_counter() - start
            think[side][1] += 1
            if not failure and _is_action(action) and base.game.is_legal(int(action)):
                game.step(int(action))
                if on_step is not None:
                    on_step(base.game)
                continue
            if not failure:
                # Not stepped: the env would end the game the same way (-1 for the
                # offender), but the arena also wants to say which action it was.
                failure = detail = f"illegal action {describe_action(action)}"
            forfeit = [1.0, 1.0]
            forfeit[side] = -1.0
            return MatchResult(
                base.game,
                (forfeit[0], forfeit[1]),
                termination_kind,
                failure,
                detail,
                side,
                think=think,
            )
    except KeyboardInterrupt:
        if not interruptible:
            raise
        return MatchResult(
            base.game, (0.0, 0.0), Termination.UNFINISHED, interrupted=True, think=think
        )
    state = base.game
    ending = state.end_reason or Termination.UNFINISHED
    return MatchResult(state, (returns[0], returns[1]), ending, think=think)
