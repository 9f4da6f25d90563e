"""Cooperative cancellation: ask a running search to stop and return its best so far.

The engine protocol's ``stop`` and the web app's cancelled analyses run a
search in one thread and decide to end it in another.  Rather than thread a
parameter through every agent's ``act``/``analyse``, the caller wraps the call
in :func:`stop_when`; every search started inside (the core's
:class:`~agents.search.Search`, alpha-beta's iterative deepening) polls the
condition between simulations (nodes) and, once it holds, stops as if its
budget were spent: an MCTS after at least one simulation, alpha-beta with
the best move of the last completed depth.  Agents that do not search
finish on their own; OpenSpiel's bot and external engines are not stopped.

The condition lives in a :class:`contextvars.ContextVar`, so each thread
(and each asyncio task) has its own: stopping one analysis never stops
another running in parallel.  A typical caller (here the event is set before the
search starts, so it stops after its first simulation):

>>> import threading
>>> from agents import make_agent
>>> from agents.search import stop_when
>>> from yinsh_env import new_game
>>> agent, state = make_agent("mcts:sims=100000", seed=0), new_game()
>>> cancelled = threading.Event()
>>> cancelled.set()  # another thread's job
>>> with stop_when(cancelled.is_set):
...     action = agent.act(state)  # returns soon after another thread sets the event
>>> action in state.legal_actions()
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: A condition polled by a running search: True means stop now.
StopCondition = Callable[[], bool]

_STOP: ContextVar[StopCondition | None] = ContextVar("yinsh_search_stop", default=None)


@contextmanager
def stop_when(should_stop: StopCondition) -> Iterator[None]:
    """Searches started in this block (in this thread) stop once ``should_stop()`` is True."""
    token = _STOP.set(should_stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def current_stop() -> StopCondition | None:
    """The condition of the innermost :func:`stop_when` block, None outside any."""
    return _STOP.get()
