"""Play YINSH in a terminal: ``yinsh-play --human white --opponent SPEC``.

The board is drawn with :func:`yinsh_env.render.ansi_board` after every
decision; the person types actions in notation (``E5``, ``E5-E8``,
``xE5-E9``, ``xE5``, ``pass``) or a command:

``help``, ``legal`` (the legal actions), ``undo`` (back to your previous
decision), ``hint [SPEC]`` (what an agent would play, with its value and top
moves when it has them), ``board``, ``position`` (the position text),
``quit``.  Typing a ring's point in the move phase shows where it can go.

Bad input is explained and asked again, never fatal; an agent that fails is
reported and the person may ``retry`` it, ``undo`` or ``quit``.  At the end
the game record is printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from agents.base import Agent, AgentFailure
from agents.params import clip
from agents.spec import AgentSpecError, make_agent
from agents.web.position_analysis import analyse
from yinsh_env import (
    MOVE_OFFSET,
    PASS_ACTION,
    ROW_OFFSET,
    Phase,
    Player,
    State,
    action_to_str,
    str_to_action,
)
from yinsh_env.engine.errors import YinshError
from yinsh_env.engine.geometry import MOVE_PAIRS, NAME_TO_POINT, POINT_NAMES
from yinsh_env.records.formats import GameRecord, write_record
from yinsh_env.render import ansi_board, describe

HELP = """\
Type an action in notation, or a command:
  E5          place a ring (placement phase); in the move phase, show that ring's moves
  E5-E8       move the ring on E5 to E8
  xE5-E9      remove the row from E5 to E9 (its end points)
  xE5         remove your ring on E5
  pass        pass (only when no ring can move)
  legal       list the legal actions         hint [SPEC]  what an agent would play
  undo        back to your previous decision board       draw the board again
  position    print the position text         quit        stop (the record is printed)
"""


class TerminalGame:
    """One game between a person (or two) and an agent, over text streams."""

    def __init__(
        self,
        humans: Sequence[int],
        opponent: Agent | None,
        hint_spec: str,
        stdin: TextIO,
        stdout: TextIO,
        color: bool = False,
        state: State | None = None,
    ) -> None:
        self.humans = set(humans)
        self.opponent = opponent
        self.hint_spec = hint_spec
        self.stdin = stdin
        self.out = stdout
        self.color = color
        self.state = state if state is not None else State()
        self.start = self.state.copy()
        self.failed = ""
        self._hinters: dict[str, Agent] = {}

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def show(self, highlight: Sequence[int] = ()) -> None:
        actions = self.state.actions
        last = actions[-1] if actions else None
        self.say(ansi_board(self.state, color=self.color, highlight=highlight, last_action=last))

    def run(self) -> int:
        """Play until the game ends or the person quits; returns the exit status."""
        self.say("Type 'help' for the commands.")
        self.show()
        while not self.state.is_terminal:
            side = self.state.to_act
            if side in self.humans and not self.failed:
                if not self._ask(side):
                    break
            elif self.failed:
                if not self._ask_after_failure():
                    break
            else:
                self._agent_move(side)
        self._finish()
        return 0

    # --- the agent ---------------------------------------------------------------------

    def _agent_move(self, side: int) -> None:
        agent = self.opponent
        assert agent is not None
        self.say(f"{Player(side).label} ({agent.name}) is thinking...")
        try:
            action = agent.act(self.state.copy())
            self.state.apply(action)
        except AgentFailure as exc:
            self.failed = f"{agent.name} failed: {exc.reason}"
        except Exception as exc:  # an agent bug is reported; the game goes on
            self.failed = f"{agent.name} crashed: {type(exc).__name__}: {exc}"
        if self.failed:
            self.say(f"{self.failed}\nType 'retry', 'undo' or 'quit'.")
            return
        self.say(f"{Player(side).label} plays {action_to_str(action)}")
        self.show()

    def _ask_after_failure(self) -> bool:
        line = self._read(f"{self.state.to_act.label} (agent failed)> ")
        if line is None or line in ("quit", "exit", "q"):
            return False
        if line == "retry":
            self.failed = ""
        elif line == "undo":
            self._undo()
        else:
            self.say("The agent failed: type 'retry', 'undo' or 'quit'.")
        return True

    # --- the person ------------------------------------------------------------------------

    def _read(self, prompt: str) -> str | None:
        print(prompt, end="", file=self.out, flush=True)
        line = self.stdin.readline()
        if not line:
            self.say()
            return None
        return line.strip()

    def _ask(self, side: int) -> bool:
        """Read one line from the person and act on it; False to stop."""
        state = self.state
        line = self._read(f"{Player(side).label} ({state.phase_name})> ")
        if line is None:
            return False
        word, _, rest = line.partition(" ")
        command = word.lower()
        if not line:
            return True
        if command in ("quit", "exit", "q"):
            return False
        if command in ("help", "?", "h"):
            self.say(HELP)
        elif command == "legal":
            self.say(" ".join(state.legal_action_names()))
        elif command == "board":
            self.show()
        elif command in ("position", "text"):
            self.say(state.to_text())
        elif command == "undo":
            if rest.strip():  # "undo 2" would take back one decision, not two
                self.say(
                    f"'undo' takes no argument (got {clip(rest.strip())!r}): type 'undo' alone "
                    "to go back to your previous decision."
                )
            else:
                self._undo()
        elif command == "hint":
            self._hint(rest.strip() or self.hint_spec)
        else:
            self._play(line)
        return True

    def _play(self, text: str) -> None:
        state = self.state
        upper = text.strip().upper()
        if state.phase == Phase.MOVE and upper in NAME_TO_POINT:
            self._show_ring_moves(NAME_TO_POINT[upper])
            return
        try:
            action = str_to_action(text)
        except YinshError as exc:
            self.say(f"{exc}. Type 'help' for the notation, 'legal' for the legal actions.")
            return
        if not state.is_legal(action):
            self.say(self._why_illegal(action))
            return
        state.apply(action)
        self.show()

    def _why_illegal(self, action: int) -> str:
        state = self.state
        name = action_to_str(action)
        if state.phase == Phase.ROW:
            rows = " ".join(action_to_str(a) for a in state.pending_rows())
            return f"{name} is not legal: remove one of your rows first: {rows}"
        if state.legal_actions() == [PASS_ACTION]:
            return f"{name} is not legal: no ring of yours can move, so you must 'pass'"
        legal = state.legal_action_names()
        shown = " ".join(legal[:12]) + (" ..." if len(legal) > 12 else "")
        return f"{name} is not legal in the {state.phase_name} phase. Legal: {shown}"

    def _show_ring_moves(self, point: int) -> None:
        moves = [a for a in self.state.legal_actions() if _move_origin(a) == point]
        if not moves:
            self.say(f"{POINT_NAMES[point]} holds no ring of yours that can move.")
            return
        targets = [MOVE_PAIRS[a - MOVE_OFFSET][1] for a in moves]
        self.show(highlight=targets)
        self.say(f"{POINT_NAMES[point]} can go to: " + " ".join(POINT_NAMES[t] for t in targets))

    def _undo(self) -> None:
        state = self.state
        probe = state.copy(history=True)
        target = None
        while probe.actions:
            probe.pop()
            if probe.to_act in self.humans:
                target = len(probe.actions)
                break
        if target is None:
            self.say("Nothing to undo: you have not decided anything yet.")
            return
        while len(state.actions) > target:
            state.pop()
        self.failed = ""
        self.show()

    def _hint(self, spec: str) -> None:
        try:
            agent = self._hinters.get(spec) or make_agent(spec, seed=0)
        except AgentSpecError as exc:
            self.say(f"hint: {exc}")
            return
        self._hinters[spec] = agent
        try:
            result = analyse(agent, self.state)
        except Exception as exc:  # a failing hint never ends the game
            self.say(f"hint: {spec} failed: {type(exc).__name__}: {exc}")
            return
        line = f"{spec} suggests {action_to_str(result.best)}"
        if result.value is not None:
            line += f" (value for you {result.value:+.2f})"
        self.say(line)
        for move in result.moves[:5]:
            parts = [action_to_str(move.action)]
            if move.prior is not None:
                parts.append(f"prior {100 * move.prior:.0f}%")
            if move.visits is not None:
                parts.append(f"{move.visits} visits")
            self.say("  " + ", ".join(parts))

    def _finish(self) -> None:
        state = self.state
        if state.is_terminal:
            self.say(describe(state))
        else:
            self.say(f"Stopped after {len(state.actions)} actions.")
        self.say(state.to_text())
        if self.start.key() == State(rings_to_win=state.rings_to_win).key():
            names = ["human" if i in self.humans else self._name() for i in (0, 1)]
            record = GameRecord.from_state(state, *names, actions=state.actions)
            self.say(write_record(record).rstrip())

    def _name(self) -> str:
        return self.opponent.name if self.opponent is not None else "?"

    def close(self) -> None:
        for agent in self._hinters.values():
            agent.close()


def _move_origin(action: int) -> int | None:
    if MOVE_OFFSET <= action < ROW_OFFSET:
        return MOVE_PAIRS[action - MOVE_OFFSET][0]
    return None
