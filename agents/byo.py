"""Bring your own agent: the protocol a player meets, and the adapters that make it one.

The arena, ``yinsh-play``, the engine server and the trainer's evaluation
play :class:`~agents.base.Agent` s built from spec strings.  A player of your
own joins them without editing this project, in one of three ways:

* **a spec naming an importable callable**: ``py:MODULE:CALLABLE[,key=value...]``
  (``py:my_agents:make_agent,path=x.pt``; a file works too:
  ``py:./my_agents.py:make_agent``).  The callable is called with the spec's
  keys as keyword arguments (converted to the types of its defaults or
  annotations, as for every agent) and ``seed=`` if it takes one; a module
  found in the current folder is imported from there;
* **an entry point** that a package declares in group ``yinsh.agents``
  (``[project.entry-points."yinsh.agents"] mine = "my_pkg.agents:make_agent"``):
  then ``mine:key=value`` is a spec like the built-in ones;
* **an object** passed to :func:`agents.evaluation.arena.run_arena` in place of a spec.

What the callable returns (or the object given) may be:

* an :class:`~agents.base.Agent` (subclass it for the full interface);
* anything with ``act(state) -> action`` (:class:`StatePlayer`), reading the
  engine's :class:`~yinsh_env.State`; ``reset(seed=None)`` and ``close()``
  are called when present;
* an *observation callable* ``policy(observation) -> action``
  (:class:`ObservationPolicy`), as the Gymnasium environment's opponent may
  be: it gets the PettingZoo observation ``{"observation": planes,
  "action_mask": mask}`` of the player to act (:func:`observation`, built
  with :func:`encode` and :func:`legal_mask`), so a policy trained on the
  environments plays as it was trained.

An action is an integer (:mod:`yinsh_env.engine.actions`); an illegal one, or an
exception, forfeits the game and the arena says why.  With several worker
processes every agent is rebuilt in each worker from its spec, so a spec
must name something importable there: see :mod:`agents.evaluation.travel`
for the check made before any game.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.base import Agent
from yinsh_env import State
from yinsh_env.envs.observation import encode


@runtime_checkable
class StatePlayer(Protocol):
    """The least a player needs: an action for the player to act in ``state``."""

    def act(self, state: State) -> int: ...


class ObservationPolicy(Protocol):
    """A policy of the environments: the observation dict in, an action out."""

    def __call__(self, observation: Mapping[str, np.ndarray]) -> int: ...


def legal_mask(state: State) -> np.ndarray:
    """The legal actions of ``state`` as the environments' ``int8`` action mask."""
    return state.legal_mask()


def observation(state: State) -> dict[str, np.ndarray]:
    """The PettingZoo observation of the player to act in ``state`` (what ``env.last()`` gives)."""
    return {"observation": encode(state, state.to_act), "action_mask": legal_mask(state)}


class StatePlayerAgent(Agent):
    """An :class:`Agent` around an object with ``act(state)`` (reset and close if it has them)."""

    def __init__(self, player: StatePlayer, name: str = "") -> None:
        super().__init__()
        self.player = player
        self.spec = name

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        _reset(self.player, seed)

    def act(self, state: State) -> int:
        return self.player.act(state.copy())

    def close(self) -> None:
        close = getattr(self.player, "close", None)
        if callable(close):
            close()


class ObservationAgent(Agent):
    """An :class:`Agent` around an observation callable (see :func:`observation`)."""

    def __init__(self, policy: ObservationPolicy, name: str = "") -> None:
        super().__init__()
        self.policy = policy
        self.spec = name

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        _reset(self.policy, seed)

    def act(self, state: State) -> int:
        return self.policy(observation(state))


def _reset(player: object, seed: int | None) -> None:
    """Call ``player.reset`` if it has one, with ``seed=`` if it takes it."""
    reset = getattr(player, "reset", None)
    if not callable(reset):
        return
    try:
        parameters = inspect.signature(reset).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    if "seed" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        reset(seed=seed)
    else:
        reset()


def as_agent(player: Any, name: str = "") -> Agent:
    """``player`` as an :class:`Agent`: itself, or wrapped (see the module docstring).

    Raises :class:`TypeError` for an object that can choose no move.

    >>> from agents.byo import as_agent
    >>> from yinsh_env import action_to_str, new_game
    >>> def first_legal(observation):
    ...     return int(observation["action_mask"].argmax())
    >>> agent = as_agent(first_legal, name="first")
    >>> agent.name, action_to_str(agent.act(new_game()))
    ('first', 'A2')
    """
    if isinstance(player, Agent):
        if name and not player.spec:
            player.spec = name
        return player
    label = name or getattr(player, "__qualname__", "") or type(player).__qualname__
    if callable(getattr(player, "act", None)):
        return StatePlayerAgent(player, label)
    if callable(player):
        return ObservationAgent(player, label)
    raise TypeError(
        f"{player!r} is not an agent: give an Agent, an object with act(state), "
        "or a callable taking an observation dict"
    )


# --- py:MODULE:CALLABLE ------------------------------------------------------------


def import_target(target: str) -> Any:
    """The object ``MODULE:ATTRIBUTE`` (or ``path/to/file.py:ATTRIBUTE``) names.

    Raises :class:`ValueError` saying what could not be imported and why.
    """
    module_name, colon, attribute = target.rpartition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"expected py:MODULE:CALLABLE, got py:{target}")
    if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
        module = _import_file(module_name)
    else:
        module = _import_module(module_name)
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"module {module_name!r} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{module_name}:{attribute} is not callable")
    return obj


def _import_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if exc.name != name.split(".")[0] or here in sys.path:
            raise ValueError(f"cannot import module {name!r}: {exc}") from None
    # Not on the path: the current folder is where a user's own module usually is.
    sys.path.append(here)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        sys.path.remove(here)
        raise ValueError(
            f"cannot import module {name!r}: {exc} (not on PYTHONPATH nor in {here})"
        ) from None
    except Exception as exc:
        raise ValueError(f"importing module {name!r} failed: {type(exc).__name__}: {exc}") from None


def _import_file(path: str) -> Any:
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_file():
        raise ValueError(f"no Python file {path!r}")
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = f"yinsh_byo_{resolved.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ValueError(f"importing {path!r} failed: {type(exc).__name__}: {exc}") from None
    return module


def call_factory(factory: Callable[..., Any], seed: int | None, kwargs: dict[str, Any]) -> Any:
    """``factory(**kwargs)``, with ``seed=`` when it takes one."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    takes_seed = "seed" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    return factory(seed=seed, **kwargs) if takes_seed else factory(**kwargs)
