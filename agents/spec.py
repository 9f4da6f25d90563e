"""Agent spec strings: ``name`` or ``name:key=value,key=value``.

Agents register a factory under a name; the factory's keyword parameters are
the spec's keys, each declared with its type and constraint
(:mod:`agents.params`).  The text of each value is converted to that type and
checked where the spec is parsed (:func:`check_spec`, :func:`make_agent`), so
an unknown name or key, a key given twice, a value of the wrong type, not
finite or out of range, or a required key left out raises
:class:`AgentSpecError` naming the key and the value, before anything is built
and before any game starts.  Messages quote a bounded slice of the spec.

Agents of your own (:mod:`agents.byo`): ``py:MODULE:CALLABLE[,key=value...]``
names any importable callable, and installed packages add names through
entry points in group :data:`ENTRY_POINT_GROUP`.

>>> from agents.spec import make_agent
>>> agent = make_agent("alphabeta:depth=1", seed=0)
>>> type(agent).__name__, agent.depth
('AlphaBetaAgent', 1)
>>> make_agent("alphabeta:depht=1")
Traceback (most recent call last):
...
agents.spec.AgentSpecError: agent spec 'alphabeta:depht=1': unknown parameter 'depht' for ...
"""

from __future__ import annotations

import importlib.metadata
import inspect
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.byo import as_agent, call_factory, import_target
from agents.infra.worker_pool import agent_exit
from agents.params import ParamError, clip, declared, from_text

Factory = Callable[..., Agent]


class AgentSpecError(ValueError):
    """A malformed agent spec, an unknown agent, or a bad parameter value."""


# name -> factory or "module:attribute" (imported on first use, so that e.g.
# torch, SB3, Ray or OpenSpiel are only loaded when an agent needing them is asked for).
_REGISTRY: dict[str, Factory | str] = {
    "random": "agents.base:RandomAgent",
    "greedy": "agents.baselines.greedy:GreedyAgent",
    "alphabeta": "agents.baselines.alphabeta:AlphaBetaAgent",
    "mcts": "agents.baselines.mcts:MCTSAgent",
    "engine": "agents.protocol.external_engine:ExternalAgent",
    "net": "agents.network.agent:NetAgent",
    "pretrained": "agents.network.pretrained:PretrainedAgent",
    "sb3": "agents.learned.sb3_agent:SB3Agent",
    "rllib": "agents.learned.rllib_agent:RLlibAgent",
    "ppo": "agents.learned.ppo_agent:PPOAgent",
    "torchrl": "agents.learned.torchrl_agent:TorchRLAgent",
    "openspiel_mcts": "agents.baselines.openspiel_mcts:OpenSpielMCTSAgent",
}


_BUILT_IN = frozenset(_REGISTRY)


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


#: Entry-point group through which installed packages offer agents
#: (``name = "module:callable"``).
ENTRY_POINT_GROUP = "yinsh.agents"
#: The spec prefix naming an importable callable: ``py:MODULE:CALLABLE``.
PY_PREFIX = "py"


def is_py_spec(spec: object) -> bool:
    """Whether ``spec`` is a ``py:MODULE:CALLABLE`` spec string: your own code, which the
    arena and ``yinsh-play`` run in a process of its own."""
    return isinstance(spec, str) and spec.strip().partition(":")[0].strip() == PY_PREFIX


def entry_point_agents() -> dict[str, str]:
    """Agents that installed packages declare: name -> ``"module:attribute"``."""
    try:
        found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # a broken distribution's metadata must not break every spec
        return {}
    return {ep.name: ep.value for ep in found}


def available_agents() -> list[str]:
    """Every registered agent name, entry points included (and ``py:`` specs besides)."""
    return sorted({*_REGISTRY, *entry_point_agents()})


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name:key=value,...`` into its name and raw string parameters.

    Checks the form only: a name, then (after ``:``) ``key=value`` items, each
    key once.  Whether the name and keys exist is :func:`check_spec`'s job.

    >>> parse_spec("mcts:sims=200,c=1.5")
    ('mcts', {'sims': '200', 'c': '1.5'})
    """
    if not isinstance(spec, str):
        raise AgentSpecError(f"an agent spec is text, not {type(spec).__name__}")
    if not spec.strip():
        raise AgentSpecError(f"agent spec {spec!r} is empty")
    name, colon, rest = spec.strip().partition(":")
    if not name.strip():
        raise AgentSpecError(f"agent spec {_show(spec)} has no agent name before ':'")
    params: dict[str, str] = {}
    items = _split_params(rest) if colon else []
    if name.strip() == PY_PREFIX:
        if not items or "=" in items[0].partition(":")[0]:
            raise AgentSpecError(
                f"agent spec {_show(spec)}: expected py:MODULE:CALLABLE[,key=value...]"
            )
        name = f"{PY_PREFIX}:{items.pop(0).strip()}"
    if colon:
        for item in items:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise AgentSpecError(
                    f"agent spec {_show(spec)}: expected key=value, got {clip(repr(item))}"
                )
            if key in params:
                raise AgentSpecError(f"agent spec {_show(spec)}: key {clip(repr(key))} given twice")
            params[key] = _unquote(value.strip())
    return name.strip(), params


def _show(spec: str) -> str:
    """The spec as quoted in an error: bounded, whatever its length."""
    return clip(repr(spec.strip()), 80)


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


#: Factories imported from their "module:attribute" (the registry keeps the text,
#: which is what travels to worker processes).
_LOADED: dict[str, Factory] = {}


def _resolve(name: str, spec: str) -> Factory:
    if name.startswith(f"{PY_PREFIX}:"):
        try:
            return typing.cast(Factory, import_target(name[len(PY_PREFIX) + 1 :]))
        except ValueError as exc:
            raise AgentSpecError(f"agent spec {_show(spec)}: {exc}") from None
    factory = _REGISTRY.get(name)
    if factory is None:
        factory = entry_point_agents().get(name)
        if factory is not None:
            _REGISTRY[name] = factory
    if factory is None:
        raise AgentSpecError(
            f"unknown agent {clip(repr(name))} in spec {_show(spec)}; "
            f"known agents: {', '.join(available_agents())}; your own: "
            f"{PY_PREFIX}:MODULE:CALLABLE (a callable making an agent, see agents.byo)"
        )
    if not isinstance(factory, str):
        return factory
    loaded = _LOADED.get(factory)
    if loaded is None:
        try:
            loaded = _LOADED[factory] = import_target(factory)
        except ValueError as exc:
            raise AgentSpecError(f"agent {name!r} in spec {_show(spec)}: {exc}") from None
    return loaded


def _bind(spec: str) -> tuple[str, Factory, dict[str, Any]]:
    """The spec's name, factory and checked keyword arguments (AgentSpecError if bad)."""
    name, raw = parse_spec(spec)
    factory = _resolve(name, spec)
    params = declared(factory)
    kwargs: dict[str, Any] = {}
    for key, text in raw.items():
        if key not in params:
            raise AgentSpecError(
                f"agent spec {_show(spec)}: unknown parameter {clip(repr(key))} for {name!r}"
                f" (parameters: {', '.join(params) or 'none'})"
            )
        try:
            kwargs[key] = from_text(params[key], text)
        except ParamError as exc:
            raise AgentSpecError(f"agent spec {_show(spec)}: {exc}") from None
    for param in params.values():
        if param.required and param.name not in kwargs:
            raise AgentSpecError(
                f"agent spec {_show(spec)}: {name} needs {param.name}=... (it has no default)"
            )
    return name, factory, kwargs


def agent_parameters(name: str) -> list[str]:
    """The spec keys of the agent registered as ``name`` (AgentSpecError if unknown).

    Imports the agent's module but builds nothing.
    """
    return list(declared(_resolve(name, name)))


#: Parameters that change how an agent runs, not what it plays (left out of
#: :func:`canonical_spec`): ``mcts`` on one thread or two is the same player.
RUNTIME_PARAMS = frozenset({"device", "threads", "backend"})


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def canonical_spec(spec: str) -> str:
    """``spec`` with every parameter written out (defaults too) in the factory's order.

    Two specs naming the same player have the same canonical form.  Parameters
    in :data:`RUNTIME_PARAMS` are left out.  Raises :class:`AgentSpecError`
    like :func:`check_spec`; builds nothing.

    >>> canonical_spec("alphabeta") == canonical_spec("alphabeta:depth=2")
    True
    >>> canonical_spec("alphabeta")
    'alphabeta:depth=2,place_depth=1,time=0.0,tt_size=500000'
    """
    name, factory, kwargs = _bind(spec)
    items = [
        f"{key}={_format_value(kwargs.get(key, param.default))}"
        for key, param in declared(factory).items()
        if key not in RUNTIME_PARAMS
    ]
    return f"{name}:{','.join(items)}" if items else name


def spec_params(spec: str) -> tuple[str, dict[str, Any]]:
    """The agent name and the checked, converted parameters of ``spec``; builds nothing.

    Callers that allow less than the declarations (the web app's ceilings)
    check these.

    >>> spec_params("mcts:sims=50")
    ('mcts', {'sims': 50})
    """
    name, _, kwargs = _bind(spec)
    return name, kwargs


def source_files(spec: str) -> list[str]:
    """The Python file a ``py:MODULE:CALLABLE`` spec's callable is defined in; [] for others.

    A ``py:`` agent's code is the user's and changes under the same spec, so its
    identity and the results database name the file by hash
    (:func:`agents.evaluation.scale.agent_identity`).  Imports the module,
    builds nothing; AgentSpecError for a bad spec.
    """
    name, _ = parse_spec(spec)
    if not name.startswith(f"{PY_PREFIX}:"):
        return []
    factory = _resolve(name, spec)
    module = sys.modules.get(getattr(factory, "__module__", "") or "")
    try:
        path = inspect.getsourcefile(factory) or getattr(module, "__file__", None)
    except TypeError:  # a built-in, or a callable object without a module file
        path = getattr(module, "__file__", None)
    return [str(Path(path).resolve())] if path else []


def check_spec(spec: str) -> None:
    """Raise :class:`AgentSpecError` unless ``spec`` names a known agent with known,
    well-typed parameters; builds nothing (no network loaded, no engine started)."""
    _bind(spec)


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent a spec names; :class:`AgentSpecError` for a bad spec.

    >>> agent = make_agent("mcts:sims=200", seed=1)
    >>> agent.name, agent.sims
    ('mcts:sims=200', 200)
    >>> make_agent("mcts:sims=-3")
    Traceback (most recent call last):
    ...
    agents.spec.AgentSpecError: agent spec 'mcts:sims=-3': sims must be >= 1, got '-3'
    """
    if isinstance(spec, Agent):
        return spec
    name, factory, kwargs = _bind(spec)
    try:
        agent = as_agent(call_factory(factory, seed, kwargs))
    except Exception as exc:
        if isinstance(exc, (TypeError, ValueError)):
            reason = str(exc)
        elif name in _BUILT_IN:
            raise
        else:  # your own agent's code failed: say how, and that it is the spec's
            reason = f"{type(exc).__name__}: {exc}"
        reason = clip(" ".join(reason.split()), 400)
        raise AgentSpecError(f"agent spec {_show(spec)}: {reason}") from exc
    except SystemExit as exc:  # sys.exit() in your agent's constructor: not the program's end
        reason = f"exited while being built: {agent_exit(exc)}"
        raise AgentSpecError(f"agent spec {_show(spec)}: {reason}") from None
    agent.spec = spec.strip()
    return agent
