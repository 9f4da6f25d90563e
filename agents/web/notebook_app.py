"""The web app and the analysis inside a Jupyter notebook.

* :func:`analysis_view` asks an agent about a position and shows the answer
  inline: the board with the candidate moves marked, the value and a table of
  priors and visits.  It is plain HTML and SVG, so it stays in a saved notebook.
* :func:`play_inline` starts the web app on a free local port (once per
  kernel) and shows the page in an iframe: the whole app, playable, while the
  kernel runs.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agents.spec import make_agent
from agents.web.position import action_points
from agents.web.position_analysis import Analysis, analyse
from agents.web.server import AppConfig, YinshServer
from yinsh_env import State, action_to_str
from yinsh_env.render import svg_board

_SERVER: YinshServer | None = None


class AnalysisView:
    """An :class:`~agents.web.position_analysis.Analysis` that draws itself in a notebook."""

    def __init__(self, state: State, analysis: Analysis, size: int = 420) -> None:
        self.state = state.copy()
        self.analysis = analysis
        self.size = size

    def _repr_html_(self) -> str:
        a = self.analysis
        targets = {_target(m.action) for m in a.moves[:5]} | {_target(a.best)}
        board = svg_board(
            self.state,
            size=self.size,
            highlight=sorted(t for t in targets if t is not None),
            last_action=self.state.actions[-1] if self.state.actions else None,
        )
        value = a.white_value()
        head = f"<b>{escape(a.spec)}</b> plays <b>{escape(action_to_str(a.best))}</b>"
        if value is not None:
            head += f" · value for White {value:+.2f}"
        rows = "".join(
            f"<tr><td><code>{escape(action_to_str(m.action))}</code></td>"
            f"<td>{_pct(m.prior)}</td><td>{'&ndash;' if m.visits is None else m.visits}</td>"
            f"<td>{'&ndash;' if m.q is None else f'{m.q:+.2f}'}</td></tr>"
            for m in a.moves
        )
        table = (
            f"<table><tr><th>move</th><th>prior</th><th>visits</th><th>Q</th></tr>{rows}</table>"
            if rows
            else ""
        )
        return (
            '<div style="display:flex;gap:16px;align-items:flex-start">'
            f"<div>{board}</div><div>{head}{table}</div></div>"
        )

    def __repr__(self) -> str:
        return f"<AnalysisView {self.analysis.spec}: {action_to_str(self.analysis.best)}>"


def analysis_view(state: State, spec: str = "mcts:sims=200", size: int = 420) -> AnalysisView:
    """What the agent ``spec`` thinks of ``state``, ready to display."""
    agent = make_agent(spec, seed=0)
    try:
        return AnalysisView(state, analyse(agent, state), size)
    finally:
        agent.close()


def play_inline(
    opponent: str = "alphabeta",
    human: str = "white",
    analyst: str = "mcts:sims=200",
    width: int = 1050,
    height: int = 720,
) -> Any:
    """Start the web app (once per kernel) and return an iframe showing it."""
    from IPython.display import IFrame

    global _SERVER
    white = "human" if human in ("white", "both") else opponent
    black = "human" if human in ("black", "both") else opponent
    make_agent(opponent).close()  # a bad spec fails here
    if _SERVER is None:
        _SERVER = YinshServer("127.0.0.1", 0).start()
    _SERVER.configure(AppConfig(white=white, black=black, analyst=analyst))
    return IFrame(_SERVER.url, width=width, height=height)


def _target(action: int) -> int | None:
    """The point a move is drawn at: its destination, its row's first point, its ring."""
    points = action_points(action)
    if not points:
        return None
    return points[1] if len(points) == 2 else points[0]


def _pct(x: float | None) -> str:
    return "&ndash;" if x is None else f"{100 * x:.1f}%"
