"""Agent parameters: each declared once, beside its default, with its constraint.

An agent's keyword parameters are the keys of its spec (``mcts:sims=800,c=1.5``).
Each is annotated with one of the types below, or with its own
``Annotated[type, Field(...)]`` (pydantic's constraints: ``ge``, ``le``,
``min_length``...), and the constructor is decorated with :func:`checked`:

>>> from agents import Agent
>>> from agents.params import Seconds, Sims, checked
>>> class FirstLegal(Agent):
...     @checked
...     def __init__(self, seed: int | None = None, sims: Sims = 400, time: Seconds = 0.0):
...         super().__init__(seed)
...         self.sims, self.time = sims, time
...     def act(self, state):
...         return state.legal_actions()[0]
>>> FirstLegal(sims=50).sims
50
>>> FirstLegal(sims=0)
Traceback (most recent call last):
...
agents.params.ParamError: sims must be >= 1, got 0

Adding a parameter is then one line.  The declaration serves both ways in:

* a spec: :mod:`agents.spec` converts the text to the declared type
  (:func:`from_text`) and checks it (:func:`check`) where the spec is parsed,
  before anything is built, so ``yinsh-eval``, the trainer's preflight and the
  web app refuse ``mcts:c=inf`` before any game;
* a Python call: :func:`checked` applies the same checks to the arguments
  (``MCTSAgent(sims=0)`` raises), so a constructor holds no checks of its own.

Every number is finite and bounded above (a ceiling far above any useful
setting, so that no spec starts unbounded work; the web app sets lower ones of
its own); a parameter whose default fails its own constraint (``path=""``)
must be given.  Errors are :class:`ParamError` (a ``ValueError``) naming the
key and a bounded slice of the value.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from pydantic import (
    AfterValidator,
    Field,
    PydanticSchemaGenerationError,
    TypeAdapter,
    ValidationError,
)

from yinsh_env.util.numeric_text import parse_float, parse_int

#: Seeds every agent's generators take: numpy's need non-negative ones, and
#: ``torch.manual_seed`` overflows past it.
MAX_SEED = 2**63 - 1
#: Most simulations (or nodes) per decision any spec may ask for.
MAX_SIMS = 10_000_000
#: Longest time, in seconds, any spec may give one decision or one wait.
MAX_SECONDS = 86_400.0
#: Most threads an agent may ask for.
MAX_THREADS = 1024
#: Longest text value (a path, a command line).
MAX_TEXT = 4096


def _no_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("must not contain a NUL character")
    return text


def device_name(text: str) -> str:
    """A torch device name: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``."""
    if not re.fullmatch(r"auto|cpu|mps|cuda(:[0-9]{1,2})?", text):
        raise ValueError("must be auto, cpu, cuda[:N] or mps")
    return text


#: A number of simulations or nodes: at least one.
Sims = Annotated[int, Field(ge=1, le=MAX_SIMS)]
#: Simulations where 0 means "none" or "the other side decides".
OptionalSims = Annotated[int, Field(ge=0, le=MAX_SIMS)]
#: Seconds, 0 meaning no limit (or "not given").
Seconds = Annotated[float, Field(ge=0.0, le=MAX_SECONDS, allow_inf_nan=False)]
#: Seconds to wait: a millisecond at least (a shorter wait cannot be met).
PositiveSeconds = Annotated[float, Field(ge=1e-3, le=MAX_SECONDS, allow_inf_nan=False)]
#: A weight or probability.
Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
#: A torch thread count.
Threads = Annotated[int, Field(ge=1, le=MAX_THREADS)]
#: Text such as a command line or a log file; empty allowed.
Text = Annotated[str, Field(max_length=MAX_TEXT), AfterValidator(_no_nul)]
#: A file or directory that must be given (the default ``""`` is not one).
PathText = Annotated[str, Field(min_length=1, max_length=MAX_TEXT), AfterValidator(_no_nul)]
#: A torch device name (whether it exists here is checked when the agent is built).
Device = Annotated[str, AfterValidator(device_name)]
#: How a network is evaluated: ONNX Runtime, PyTorch, or ONNX where it can.
Backend = Literal["auto", "torch", "onnx"]

#: Words a boolean parameter takes.
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


class ParamError(ValueError):
    """A parameter value that is not of its declared type or breaks its constraint."""


def clip(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (with ``...``): errors never echo a whole input."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Param:
    """One declared parameter: its name, base type, default and checker."""

    name: str
    kind: type  # int, float, bool or str: what spec text is converted to
    default: Any
    adapter: TypeAdapter[Any] | None  # None: undeclared (a runtime registration)
    required: bool

    def error(self, problem: str, value: object) -> ParamError:
        """``key must be ..., got value``, the value's repr bounded."""
        return ParamError(f"{self.name} {problem}, got {clip(repr(value))}")


def _kind(annotation: Any, default: Any) -> type:
    """The plain type behind an annotation (``Annotated`` and ``Literal`` unwrapped)."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is Literal:
        return type(typing.get_args(annotation)[0])
    if annotation in (int, float, bool, str):
        return typing.cast(type, annotation)
    return type(default) if default is not inspect.Parameter.empty else str


@functools.cache
def declared(function: Callable[..., Any]) -> dict[str, Param]:
    """The keyword parameters of ``function`` (a class: its constructor), but ``seed``.

    Each is checked by its annotation (plain floats must be finite); one
    without (agents registered at run time by users) only by the type of its
    default, numbers finite.
    """
    init = function.__init__ if isinstance(function, type) else function  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(init, include_extras=True)
    except (NameError, TypeError):
        hints = {}
    params: dict[str, Param] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if name in ("self", "seed") or parameter.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        annotation, default = hints.get(name), parameter.default
        adapter = _adapter(annotation)
        required = default is inspect.Parameter.empty or (
            adapter is not None and not _passes(adapter, default)
        )
        params[name] = Param(name, _kind(annotation, default), default, adapter, required)
    return params


def _adapter(annotation: Any) -> TypeAdapter[Any] | None:
    """The checker of an annotation (plain floats finite); None for none or a foreign type."""
    if annotation is None:
        return None
    if annotation is float:
        annotation = Annotated[float, Field(allow_inf_nan=False)]
    try:
        return TypeAdapter(annotation)
    except PydanticSchemaGenerationError:
        return None


def _passes(adapter: TypeAdapter[Any], value: object) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


def from_text(param: Param, text: str) -> Any:
    """Spec text as the parameter's type (ASCII numbers; ``true``/``false`` words), checked."""
    kind = param.kind
    value: Any = text
    if kind is bool:
        lowered = text.lower()
        if lowered not in TRUE_WORDS + FALSE_WORDS:
            raise param.error("must be true or false", text)
        value = lowered in TRUE_WORDS
    elif kind in (int, float):
        value = _number(param, text, kind)
    return check(param, value, shown=text)


def _number(param: Param, text: str, kind: type) -> int | float:
    word = "an integer" if kind is int else "a number"
    if len(text) > 400:  # int() of thousands of digits is slow, and no setting needs them
        raise param.error("is too long for a number", text)
    try:  # strictly: int() reads "3_0" as 30, "٣" as 3 and " 3" as 3
        number: int | float = parse_int(text) if kind is int else parse_float(text)
    except ValueError:
        raise param.error(f"must be {word}", text) from None
    return number


def check(param: Param, value: object, shown: object = None) -> Any:
    """``value`` checked against the parameter's declaration (converted: ``5.0`` -> 5).

    Errors quote ``shown`` (the spec's text) when given, else ``value``.
    """
    shown = value if shown is None else shown
    if isinstance(value, bool) and param.kind is not bool:
        raise param.error("must be a number, not true or false", shown)
    if param.adapter is None:
        if isinstance(value, float) and not math.isfinite(value):
            raise param.error("must be a finite number", shown)
        return value
    try:
        return param.adapter.validate_python(value)
    except ValidationError as err:
        raise param.error(_phrase(err), shown) from None


def _phrase(err: ValidationError) -> str:
    """The first problem of a pydantic error as ``must be ...``."""
    error = err.errors()[0]
    kind, ctx = error["type"], error.get("ctx", {})
    bounds = {k: ctx[k] for k in ("gt", "ge", "lt", "le") if k in ctx}
    if kind == "finite_number":
        return "must be a finite number"
    for name, bound in bounds.items():
        shown = f"{bound:g}" if isinstance(bound, float) else str(bound)
        return f"must be {_SYMBOLS[name]} {shown}"
    if kind == "literal_error":
        return f"must be one of {ctx['expected']}"
    if kind == "string_too_short":
        return "must be given (not empty)"
    if kind == "string_too_long":
        return f"must be at most {ctx['max_length']} characters"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx['pattern']}"
    if kind == "value_error":
        return str(ctx["error"])
    phrases = {
        "int": "must be an integer",
        "float": "must be a number",
        "bool": "must be true or false",
        "string": "must be text",
    }
    for prefix, phrase in phrases.items():
        if kind.startswith(prefix):
            return phrase
    return str(error["msg"])


_SYMBOLS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}

P = ParamSpec("P")
R = TypeVar("R")


def checked(init: Callable[P, R]) -> Callable[P, R]:
    """Check a constructor's arguments against its declarations before it runs."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        bound = signature.bind(*args, **kwargs)
        params = declared(init)
        for name, value in bound.arguments.items():
            if name in params:
                bound.arguments[name] = check(params[name], value)
        missing = [p.name for p in params.values() if p.required and p.name not in bound.arguments]
        if missing:
            raise ParamError(f"{missing[0]} must be given")
        return init(*bound.args, **bound.kwargs)

    return wrapper
