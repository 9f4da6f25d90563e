"""Agent spec strings: ``name`` or ``name:key=value,key=value``.

Agents register a factory under a name; the factory's keyword parameters are
the spec's keys, converted from text to the annotated type of the parameter's
default (int, float, bool, str).  Unknown names or keys raise
:class:`AgentSpecError` before any game starts.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from .base import Agent

Factory = Callable[..., Agent]


class AgentSpecError(ValueError):
    """A malformed agent spec, an unknown agent, or a bad parameter value."""


# name -> factory or "module:attribute" (imported on first use, so that e.g.
# torch, SB3, Ray or OpenSpiel are only loaded when an agent needing them is asked for).
_REGISTRY: dict[str, Factory | str] = {
    "random": "agents.base:RandomAgent",
    "greedy": "agents.greedy:GreedyAgent",
    "alphabeta": "agents.alphabeta:AlphaBetaAgent",
    "mcts": "agents.mcts:MCTSAgent",
    "engine": "agents.external:ExternalAgent",
    "net": "train.agent:NetAgent",
    "pretrained": "train.pretrained:PretrainedAgent",
    "sb3": "train.sb3_agent:SB3Agent",
    "rllib": "train.rllib_agent:RLlibAgent",
    "openspiel_mcts": "agents.openspiel_mcts:OpenSpielMCTSAgent",
}


def register_agent(name: str, factory: Factory | str, *, replace: bool = True) -> None:
    """Make ``name`` usable in specs; ``factory`` may be ``"module:attribute"``.

    ``replace=False`` keeps an entry already registered under ``name``.
    """
    if replace or name not in _REGISTRY:
        _REGISTRY[name] = factory


def unregister_agent(name: str) -> None:
    """Forget ``name`` (a runtime registration); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def registered_agents() -> dict[str, Factory | str]:
    """A copy of the registry: name -> factory (or ``"module:attribute"`` not yet loaded)."""
    return dict(_REGISTRY)


def available_agents() -> list[str]:
    return sorted(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name:key=value,...`` into its name and raw string parameters."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"agent spec {spec!r} is empty")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    if rest:
        for item in _split_params(rest):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise AgentSpecError(f"agent spec {spec!r}: expected key=value, got {item!r}")
            params[key.strip()] = _unquote(value.strip())
    return name.strip(), params


def _split_params(text: str) -> list[str]:
    """Split on commas, except inside a value that runs to the end (``cmd=a b,c``).

    A comma starts a new parameter only when what follows looks like ``key=``
    and it is not inside a quoted value (``cmd="prog mcts:sims=9,c=2",timeout=5``).
    """
    items: list[str] = []
    for piece in text.split(","):
        head = piece.split("=", 1)[0]
        if items and (
            "=" not in piece or not head.strip().isidentifier() or _open_quote(items[-1])
        ):
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


def _open_quote(item: str) -> bool:
    """Whether ``key=value`` item has a quoted value whose closing quote is still to come."""
    value = item.partition("=")[2].lstrip()
    return value[:1] in ("'", '"') and value.count(value[0]) % 2 == 1


def _unquote(value: str) -> str:
    """A value without the pair of quotes around it, if it is one quoted string."""
    quote = value[:1]
    if (
        quote in ("'", '"')
        and len(value) >= 2
        and value.endswith(quote)
        and value.count(quote) == 2
    ):
        return value[1:-1]
    return value


def _resolve(name: str, spec: str) -> Factory:
    factory = _REGISTRY.get(name)
    if factory is None:
        raise AgentSpecError(
            f"unknown agent {name!r} in spec {spec!r}; "
            f"known agents: {', '.join(available_agents())}"
        )
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
        _REGISTRY[name] = factory
    return factory


def _convert(value: str, default: Any, key: str, spec: str) -> Any:
    kind = type(default)
    try:
        if kind is bool:
            lowered = value.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if kind in (int, float):
            return kind(value)
    except ValueError:
        raise AgentSpecError(
            f"agent spec {spec!r}: {key}={value!r} is not a valid {kind.__name__}"
        ) from None
    return value


def _bind(spec: str) -> tuple[str, Factory, dict[str, Any]]:
    """The spec's name, factory and converted keyword arguments (AgentSpecError if bad)."""
    name, raw = parse_spec(spec)
    factory = _resolve(name, spec)
    params = inspect.signature(factory).parameters
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "seed" or key not in params:
            allowed = [k for k in params if k not in ("self", "seed")]
            raise AgentSpecError(
                f"agent spec {spec!r}: unknown parameter {key!r} for {name!r}"
                f" (parameters: {', '.join(allowed) or 'none'})"
            )
        default = params[key].default
        kwargs[key] = _convert(
            value, default if default is not inspect.Parameter.empty else "", key, spec
        )
    return name, factory, kwargs


#: Parameters that change how an agent runs, not what it plays (left out of
#: :func:`canonical_spec`): ``mcts`` on one thread or two is the same player.
RUNTIME_PARAMS = frozenset({"device", "threads", "backend"})


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def canonical_spec(spec: str) -> str:
    """``spec`` with every parameter written out (defaults too) in the factory's order.

    Two specs naming the same player have the same canonical form:
    ``alphabeta`` and ``alphabeta:depth=2`` both give
    ``alphabeta:depth=2,place_depth=1,time=0.0,tt_size=500000``.  Parameters
    in :data:`RUNTIME_PARAMS` are left out.  Raises :class:`AgentSpecError`
    like :func:`check_spec`; builds nothing.
    """
    name, factory, kwargs = _bind(spec)
    items = []
    for key, param in inspect.signature(factory).parameters.items():
        if key in ("self", "seed") or key in RUNTIME_PARAMS:
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if key in kwargs:
            items.append(f"{key}={_format_value(kwargs[key])}")
        elif param.default is not inspect.Parameter.empty:
            items.append(f"{key}={_format_value(param.default)}")
    return f"{name}:{','.join(items)}" if items else name


def check_spec(spec: str) -> None:
    """Raise :class:`AgentSpecError` unless ``spec`` names a known agent with known,
    well-typed parameters; builds nothing (no network loaded, no engine started)."""
    _bind(spec)


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent a spec names, e.g. ``make_agent("mcts:sims=200", seed=1)``."""
    if isinstance(spec, Agent):
        return spec
    _, factory, kwargs = _bind(spec)
    try:
        agent = factory(seed=seed, **kwargs)
    except (TypeError, ValueError) as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from exc
    agent.spec = spec.strip()
    return agent
