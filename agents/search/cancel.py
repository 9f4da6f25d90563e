"""Cooperative cancellation: a search stops early when the thread's stop hook says so.

A caller that must bound or cancel an agent's thinking (the web app: a new
request replaced it, its game was closed, its time ceiling passed) runs the
agent inside :func:`stop_when`; every :class:`~agents.search.core.Search`
built in that context, and the alpha-beta search, ask the hook between
simulations (nodes) and, once it answers True, finish with the best move
found so far.  No thread is killed and no agent needs a new parameter.  The
hook is a context variable, so it belongs to the thread (or task) that set it
and costs nothing where none is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

StopHook = Callable[[], bool]

_HOOK: ContextVar[StopHook | None] = ContextVar("yinsh_search_stop", default=None)


@contextmanager
def stop_when(should_stop: StopHook) -> Iterator[None]:
    """Searches started inside the block stop once ``should_stop()`` returns True."""
    token = _HOOK.set(should_stop)
    try:
        yield
    finally:
        _HOOK.reset(token)


def stop_hook() -> StopHook | None:
    """The hook set by the innermost :func:`stop_when` of this context, if any."""
    return _HOOK.get()
