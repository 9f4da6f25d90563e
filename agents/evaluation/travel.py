"""Whether a match's agents can reach its workers, checked before any game.

With several worker processes (``workers`` > 1) every worker rebuilds the
agents: a spec string is parsed again there (a ``py:`` module imported
again), and anything else (an :class:`~agents.base.Agent` or a callable
passed to :func:`~agents.evaluation.arena.run_arena`, a factory registered at run time
with :func:`~agents.register_agent`) is pickled, which sends classes and
functions *by name*.  A worker can then not find one defined in a notebook
cell or at the prompt (``__main__`` has no file to import), nor one defined
in a script without an ``if __name__ == "__main__":`` guard (each worker
would run the script again, and the pool breaks with ``BrokenProcessPool``),
nor a lambda or a function defined inside another.  Such an agent is refused
here with :class:`AgentTravelError`, which names the remedy: put the code in
a module and name it ``py:MODULE:CALLABLE``, or play with one worker.

Ray actors receive the same objects through cloudpickle, which sends what
``__main__`` defines by value: there only what cloudpickle cannot send is
refused.
"""

from __future__ import annotations

import ast
import pickle
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.spec import parse_spec, registered_agents


class AgentTravelError(ValueError):
    """An agent that worker processes could not rebuild (the message says what to do)."""


def _defining_object(obj: Any) -> Any:
    """The class or function whose home decides whether ``obj`` travels."""
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        return obj
    return type(obj)


def _has_main_guard(path: str) -> bool:
    """Whether the script at ``path`` has a top-level ``if __name__ == "__main__":``."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            parts = [node.test.left, *node.test.comparators]
            names = {p.id for p in parts if isinstance(p, ast.Name)}
            texts = {p.value for p in parts if isinstance(p, ast.Constant)}
            if "__name__" in names and "__main__" in texts:
                return True
    return False


def travel_problem(obj: Any, backend: str = "local") -> str | None:
    """Why ``obj`` cannot be sent to a worker of ``backend``, or None if it can."""
    if backend == "ray":
        try:
            from ray import cloudpickle

            cloudpickle.dumps(obj)
        except Exception as exc:
            return f"cloudpickle cannot send it ({type(exc).__name__}: {exc})"
        return None
    home = _defining_object(obj)
    qualname = getattr(home, "__qualname__", "")
    if getattr(home, "__module__", None) == "__main__":
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        if main_file is None:
            return (
                f"{qualname} is defined in a notebook or at the prompt (__main__), "
                "which worker processes cannot import"
            )
        if not _has_main_guard(main_file):
            return (
                f"{qualname} is defined in the script {main_file}, which has no "
                '`if __name__ == "__main__":` guard: every worker would run the whole script '
                "again"
            )
    if "<lambda>" in qualname or "<locals>" in qualname:
        return f"{qualname} is a lambda or a function defined inside another: pickle sends neither"
    try:
        pickle.dumps(obj)
    except Exception as exc:
        return f"pickle cannot send it ({type(exc).__name__}: {exc})"
    return None


def check_travel(entries: Sequence[Any], names: Sequence[str], backend: str = "local") -> None:
    """Raise :class:`AgentTravelError` for the first agent workers could not rebuild.

    ``entries`` are what the match was given (spec strings or objects);
    ``names`` how the match names them.
    """
    registry = registered_agents()
    for entry, name in zip(entries, names):
        if isinstance(entry, str):
            agent_name = parse_spec(entry)[0]
            sent = registry.get(agent_name)
            if sent is None or isinstance(sent, str):
                continue  # a built-in, an entry point or a py: spec: imported by name
        else:
            sent = entry
        problem = travel_problem(sent, backend)
        if problem is not None:
            raise AgentTravelError(
                f"agent {name!r} cannot travel to worker processes: {problem}. "
                "Remedy: put it in a module (say my_agents.py, importable from here) and "
                "name it by spec, py:my_agents:NAME (a class or a function making the "
                "agent), or play with one worker (--workers 1, workers=1)"
            )
