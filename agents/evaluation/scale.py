"""The fixed rating scale: frozen anchors, so that an Elo from any run compares.

A rating from one round robin means something only within that pool (its fit
fixes one agent at 0).  Rating lists for chess engines (CCRL with Ordo or
BayesElo) solve this with *anchors*: agents whose ratings are frozen, so that
every new agent is placed on the same axis.  This module ships such a scale:
anchor agents from ``random`` (0, so the README's figures keep their meaning)
to the shipped network with search, each budgeted by depth or simulations
(never by time), so an anchor plays the same moves on any machine and its
strength does not depend on the hardware.  The network anchors play a frozen
copy of the network (``pretrained:weights=anchor-v1``), not ``pretrained``,
which may be replaced by a better network.

The ratings were measured once, by a calibration round robin
(:mod:`agents.evaluation.calibrate`: its command, games and date are in the
data file, ``python -m agents.evaluation.scale`` prints them), and are frozen:
a fit that includes anchors keeps them at their ratings
(``fixed=`` in :func:`agents.evaluation.elo.fit_bradley_terry`) and places the other
agents around them.

An agent is recognised as an anchor by its *identity*, not its spelling:
``alphabeta`` and ``alphabeta:depth=2`` are one anchor, and so is any
``net:path=...`` spec reaching the anchor network's file (its hash).
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.spec import canonical_spec, make_agent, source_files
from yinsh_env.util.file_hash import file_sha256

#: The scale shipped with the package.
DEFAULT_SCALE_FILE = Path(__file__).with_name("yinsh-v1.json")


class ScaleError(ValueError):
    """A scale file that is missing, malformed or inconsistent (the message names it)."""


@dataclass(frozen=True)
class Anchor:
    """An agent with a frozen rating: its spec, identity and Elo on the scale."""

    spec: str
    identity: str
    elo: float
    #: The calibration's 95% interval (relative to ``random``); informative only:
    #: on the scale the anchor's rating is exact by definition.
    ci95: tuple[float, float] = (math.nan, math.nan)


@dataclass(frozen=True)
class Scale:
    """A named set of anchors with frozen ratings, and how they were calibrated."""

    name: str
    anchors: tuple[Anchor, ...]
    calibration: Mapping[str, Any] = field(default_factory=dict)
    #: The variant the anchors were calibrated in: ratings of other variants are not on it.
    rings_to_win: int = 3

    def anchor_for(self, identity: str) -> Anchor | None:
        """The anchor with this identity (see :func:`agent_identity`), or None."""
        return next((a for a in self.anchors if a.identity == identity), None)

    def fixed(self, identities: Sequence[str]) -> dict[int, float]:
        """Index -> frozen Elo for every entry of ``identities`` that is an anchor."""
        out = {}
        for index, identity in enumerate(identities):
            anchor = self.anchor_for(identity)
            if anchor is not None:
                out[index] = anchor.elo
        return out

    def label(self) -> str:
        """How printed ratings name this scale."""
        return f"the {self.name} scale (random = 0)"

    def describe(self) -> str:
        """The anchors and the calibration, as text."""
        lines = [f"scale {self.name}: {len(self.anchors)} anchors, ratings frozen"]
        width = max(len(a.spec) for a in self.anchors) + 2
        for a in self.anchors:
            ci = ""
            if not math.isnan(a.ci95[0]):
                ci = f"  calibration 95% CI [{a.ci95[0]:.0f}, {a.ci95[1]:.0f}]"
            lines.append(f"  {a.spec:<{width}} {a.elo:7.0f}{ci}")
        cal = self.calibration
        if cal:
            lines.append(
                f"calibrated {cal.get('date', '?')}: {cal.get('games', '?')} games, "
                f"{cal.get('command', '?')}"
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rings_to_win": self.rings_to_win,
            "anchors": [
                {"spec": a.spec, "identity": a.identity, "elo": a.elo, "ci95": list(a.ci95)}
                for a in self.anchors
            ],
            "calibration": dict(self.calibration),
        }


def agent_identity(agent: Agent) -> str:
    """What makes ``agent`` the player it is: its own :meth:`~agents.base.Agent.identity`,
    else its canonical spec (every parameter written out), else its class name.

    A ``py:`` agent's canonical spec ends with ``source_sha256=`` and the first
    16 hex of its source file's hash: the same spec over edited code is
    another player.
    """
    own = agent.identity()
    if own:
        return own
    if agent.spec:
        try:
            canonical = canonical_spec(agent.spec)
            sources = source_files(agent.spec)
        except ValueError:
            pass
        else:
            hashes = [f"source_sha256={file_sha256(path)[:16]}" for path in sources]
            return ",".join([canonical, *hashes])
    return agent.spec or type(agent).__qualname__


def spec_identities(specs: Iterable[str]) -> list[str]:
    """The identity of each spec (builds each agent once, then closes it)."""
    out = []
    for spec in specs:
        agent = make_agent(spec, seed=0)
        try:
            out.append(agent_identity(agent))
        finally:
            agent.close()
    return out


_IDENTITIES: dict[str, str] = {}


def identity_of_spec(spec: str) -> str:
    """:func:`spec_identities` of one spec, remembered for the process's life.

    For baselines named again at every evaluation; a spec whose files change
    under it (``net:path=RUN`` as the run goes on) wants :func:`spec_identities`.
    """
    if spec not in _IDENTITIES:
        _IDENTITIES[spec] = spec_identities([spec])[0]
    return _IDENTITIES[spec]


def _pair(values: Sequence[Any]) -> tuple[float, float]:
    low, high = values
    return float(low), float(high)


def load_scale(path: str | Path | None = None) -> Scale:
    """Read a scale file (default: the shipped one); :class:`ScaleError` if it is bad."""
    file = Path(path) if path is not None else DEFAULT_SCALE_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        anchors = tuple(
            Anchor(
                spec=str(a["spec"]),
                identity=str(a["identity"]),
                elo=float(a["elo"]),
                ci95=_pair(a.get("ci95", [math.nan, math.nan])),
            )
            for a in data["anchors"]
        )
        scale = Scale(
            str(data["name"]),
            anchors,
            dict(data.get("calibration", {})),
            int(data.get("rings_to_win", 3)),
        )
    except OSError as exc:
        raise ScaleError(f"scale file {file}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise ScaleError(f"scale file {file} is not a rating scale: {exc}") from None
    if not anchors:
        raise ScaleError(f"scale file {file} has no anchors")
    identities = [a.identity for a in anchors]
    if len(set(identities)) != len(identities):
        raise ScaleError(f"scale file {file} names one anchor twice")
    if not all(math.isfinite(a.elo) for a in anchors):
        raise ScaleError(f"scale file {file}: every anchor needs a finite elo")
    return scale


@functools.lru_cache(maxsize=1)
def default_scale() -> Scale:
    """The scale shipped with the package (read once)."""
    return load_scale(DEFAULT_SCALE_FILE)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.evaluation.scale [FILE]``: print a scale's anchors and calibration."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        scale = load_scale(args[0] if args else None)
    except ScaleError as exc:
        print(f"agents.evaluation.scale: {exc}", file=sys.stderr)
        return 2
    print(scale.describe())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
