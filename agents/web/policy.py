"""Which agents a web client may ask for: a whitelist, with a ceiling on every budget.

A web client names agents by spec (``mcts:sims=400``) for either side of a
game and for analysis.  Specs can also start programs (``engine:cmd=...``),
read files (``net:path=...``) and write them (``engine:...,log=...``), so the
web app never builds a client's spec as given.  :meth:`AgentPolicy.admit`
lets through only

* **the built-in agents of** :data:`OFFERED`, with only the keys listed there,
  each within the web's bounds (on top of the checks every spec gets where it
  is parsed, :mod:`agents.params`).  Searches get at most
  :data:`MAX_SIMS` simulations, and every decision at most
  :data:`MAX_SECONDS` seconds: a search still running then is told to stop and
  plays the best move it has (:mod:`agents.search.stopping`).  ``alphabeta`` is
  built with a transposition table of :data:`FIXED` size whatever the client
  says (its memory is the server's);
* **the specs the server was started with** (``yinsh-play --web --opponent
  SPEC --allow SPEC``, and the page's defaults), exactly as written, with no
  ceiling beyond the game's ``think_timeout``; a client may add a budget key
  (:data:`BUDGET`: ``sims``, ``time``, within the ceilings above) that the
  operator's spec leaves unset.

Anything else is refused before anything is built: an unknown agent, key or a
malformed value with 400; an agent that is not offered (``engine``, ``net``,
``sb3``, ...), a key not open to clients (``path``, ``cmd``, ``log``,
``threads``, ...) or a value past its ceiling with 403.  What is built is the
canonical text :meth:`AgentPolicy.admit` writes (name, then each key with the
number it parsed), never the client's own text, so no quoting trick can
smuggle another value through.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agents.spec import (
    AgentSpecError,
    agent_parameters,
    check_spec,
    parse_spec,
    registered_agents,
    spec_params,
)
from agents.web.http_errors import Refused, SessionError, clip

#: Simulations per decision a client may ask of a search (``mcts``, ``pretrained``).
MAX_SIMS = 5000
#: Seconds a decision or an analysis a client asked for may take; then the search stops.
MAX_SECONDS = 5.0
#: Characters of a client's spec at most (the operator's longest path fits).
MAX_SPEC_LENGTH = 1000


@dataclass(frozen=True)
class Bound:
    """The range the web allows a numeric key (inclusive), within the agent's own."""

    low: float
    high: float

    def check(self, name: str, key: str, value: Any) -> str:
        """``value`` as the canonical spec writes it; 403 outside the bounds."""
        if not self.low <= value <= self.high:
            raise Refused(
                f"{name}: {key}={clip(value)} is outside what the web app allows "
                f"({self.low:g}..{self.high:g})"
            )
        return repr(value)


#: The built-in agents every client may choose, and the keys it may set on each.
OFFERED: dict[str, dict[str, Bound]] = {
    "random": {},
    "greedy": {"noise": Bound(0, 1000)},
    "alphabeta": {"depth": Bound(1, 8), "place_depth": Bound(1, 3), "time": Bound(0, MAX_SECONDS)},
    "mcts": {
        "sims": Bound(1, MAX_SIMS),
        "time": Bound(0, MAX_SECONDS),
        "c": Bound(0, 100),
        "rollout_limit": Bound(0, 1000),
        "eval_weight": Bound(0, 1),
    },
    "pretrained": {"sims": Bound(0, MAX_SIMS)},
}
#: Settings the web app gives an offered agent whatever the client asks (they bound memory).
FIXED: dict[str, dict[str, str]] = {"alphabeta": {"tt_size": "100000"}}
#: Keys a client may add to a spec the server was started with.
BUDGET: dict[str, Bound] = {"sims": Bound(0, MAX_SIMS), "time": Bound(0, MAX_SECONDS)}


@dataclass(frozen=True)
class Admitted:
    """A spec the web app will build."""

    #: The canonical spec: shown in the page, written in records.
    spec: str
    #: The spec built (``spec`` plus the :data:`FIXED` settings).
    build: str
    #: Seconds before the agent's searches are told to stop; None for the
    #: operator's own specs (the game's ``think_timeout`` still reports them).
    ceiling: float | None


class AgentPolicy:
    """The whitelist: :data:`OFFERED` agents, plus the operator's ``allowed`` specs."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self._allowed: dict[str, tuple[str, dict[str, str]]] = {}
        self.reset(allowed)

    def reset(self, allowed: Iterable[str]) -> None:
        """Trust exactly ``allowed`` (besides the built-in offer); see :meth:`allow`."""
        kept, self._allowed = self._allowed, {}
        try:
            for spec in allowed:
                self.allow(spec)
        except AgentSpecError:
            self._allowed = kept
            raise

    def allow(self, spec: str) -> None:
        """Let clients use ``spec`` as written (the operator's choice: it is trusted).

        Raises :class:`~agents.spec.AgentSpecError` unless the spec names a known
        agent with known parameters (nothing is built).  A spec the built-in
        offer admits anyway stays under its ceilings.
        """
        check_spec(spec)
        name, params = parse_spec(spec)
        try:
            self._offer(name, params, spec)
        except SessionError:
            self._allowed = {**self._allowed, spec.strip(): (name, params)}

    def offered(self) -> list[str]:
        """What the page lists: the operator's specs, then the built-in agents."""
        return [*self._allowed, *OFFERED]

    def admit(self, spec: str) -> Admitted:
        """The spec to build for a client's ``spec``, or :class:`SessionError` (400/403)."""
        if len(spec) > MAX_SPEC_LENGTH:
            raise SessionError(
                f"agent spec of {len(spec)} characters (at most {MAX_SPEC_LENGTH}): {clip(spec)}"
            )
        try:
            name, params = parse_spec(spec)
        except AgentSpecError as exc:
            raise SessionError(str(exc)) from None
        refusal: SessionError | None = None
        if name in OFFERED:
            try:
                return self._offer(name, params, spec)
            except SessionError as exc:
                refusal = exc
        allowed = self._allowed
        for text, (allowed_name, allowed_params) in allowed.items():
            if (name, params) == (allowed_name, allowed_params):
                return Admitted(text, text, None)
        for text, (allowed_name, allowed_params) in allowed.items():
            if name == allowed_name and _extends(params, allowed_params):
                values = _values(spec)
                extra = [key for key in params if key not in allowed_params]
                canonical = {key: BUDGET[key].check(name, key, values[key]) for key in extra}
                built = text + ("," if ":" in text else ":") + _join(canonical)
                return Admitted(built, _checked(built), MAX_SECONDS)
        if refusal is not None:
            raise refusal
        offered = ", ".join(self.offered())
        if name not in registered_agents():
            raise SessionError(f"unknown agent {clip(name)} (offered: {offered})")
        raise Refused(f"agent {clip(name)} is not offered to web clients (offered: {offered})")

    @staticmethod
    def _offer(name: str, params: dict[str, str], spec: str) -> Admitted:
        """``spec`` (parsed: ``name``, ``params``) as a built-in agent of :data:`OFFERED`."""
        keys = OFFERED.get(name)
        if keys is None:
            raise Refused(f"agent {clip(name)} is not one of the built-in agents offered")
        known = agent_parameters(name)
        for key in params:
            if key not in known:
                raise SessionError(
                    f"{name}: unknown key {clip(key)} (keys: {', '.join(known) or 'none'})"
                )
            if key not in keys:
                open_keys = ", ".join(keys) or "none"
                raise Refused(
                    f"{name}: key {clip(key)} is not open to web clients (open: {open_keys})"
                )
        values = _values(spec)  # parsed as above: the same keys
        canonical = {key: keys[key].check(name, key, values[key]) for key in params}
        text = f"{name}:{_join(canonical)}" if canonical else name
        fixed = {**FIXED.get(name, {}), **canonical}
        built = f"{name}:{_join(fixed)}" if fixed else name
        return Admitted(text, _checked(built), MAX_SECONDS)


def _extends(params: dict[str, str], base: dict[str, str]) -> bool:
    """Whether ``params`` keeps every value of ``base`` and adds only budget keys."""
    if any(params.get(key) != value for key, value in base.items()):
        return False
    extra = set(params) - set(base)
    return bool(extra) and extra <= set(BUDGET)


def _values(spec: str) -> dict[str, Any]:
    """The converted, checked values of ``spec`` (:func:`~agents.spec.spec_params`; else 400)."""
    try:
        return spec_params(spec)[1]
    except AgentSpecError as exc:
        raise SessionError(str(exc)) from None


def _checked(spec: str) -> str:
    """``spec``, once :func:`~agents.spec.check_spec` accepts it (else a 400)."""
    try:
        check_spec(spec)
    except AgentSpecError as exc:
        raise SessionError(f"bad agent spec: {exc}") from None
    return spec


def _join(values: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in values.items())
