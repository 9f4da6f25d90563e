"""Helpers shared by the tests: positions from piece maps, seeded random games, tiny configs.

Imported as ``from helpers import ...`` (pytest puts ``tests/`` on the path);
fixtures live in ``conftest.py``.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from yinsh_env import State
from yinsh_env.engine.geometry import COLUMN_LETTERS, NAME_TO_POINT, POINTS

if TYPE_CHECKING:
    from train.config import Config
    from train.replay import GameSamples


def board_field(pieces: dict[str, str]) -> str:
    """The board field of position text for ``pieces`` (point name -> ``R r M m``)."""
    unknown = [name for name in pieces if name not in NAME_TO_POINT]
    assert not unknown, f"not points: {unknown}"
    columns = [""] * len(COLUMN_LETTERS)
    for c, n in POINTS:
        columns[c] += pieces.get(f"{COLUMN_LETTERS[c]}{n}", ".")
    return "/".join(re.sub(r"\.+", lambda run: str(len(run.group())), col) for col in columns)


def pieces(R: str = "", r: str = "", M: str = "", m: str = "") -> dict[str, str]:
    """A piece map from space-separated point lists: white/black rings, white/black markers."""
    return {name: char for char, names in zip("RrMm", (R, r, M, m)) for name in names.split()}


def position_text(pieces: dict[str, str], rest: str) -> str:
    """Position text with ``pieces`` on the board and ``rest`` the other seven fields."""
    return f"{board_field(pieces)} {rest}"


def random_game(seed: int, rings_to_win: int = 3, stop: int | None = None) -> State:
    """A seeded uniformly random game from the start, to its end or ``stop`` plies."""
    rng = random.Random(seed)
    state = State(rings_to_win=rings_to_win)
    while not state.is_terminal and (stop is None or state.ply < stop):
        state.apply(rng.choice(state.legal_actions()))
    return state


def random_positions(n: int, seed: int = 0) -> list[State]:
    """Positions from seeded random games, every phase included (rows and rings always)."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < n:
        state = State()
        while not state.is_terminal:
            if rng.random() < 0.15 or state.phase >= 2:
                out.append(state.copy())
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
    return out[:n]


def game_of(states: list[State], seed: int = 0) -> GameSamples:
    """A replay game holding ``states`` with random policy targets over their legal actions."""
    # The trainer (torch) is imported only by the tests that train.
    from train.replay import GameSamples, pack_planes
    from yinsh_env.envs.observation import bitboard_plane, encode

    rng = np.random.default_rng(seed)
    planes = np.stack([encode(s) for s in states])
    bits, values = pack_planes(planes)
    actions = [np.asarray(s.legal_actions()) for s in states]
    probs = [rng.dirichlet(np.ones(len(a))).astype(np.float32) for a in actions]
    final = states[-1]
    return GameSamples(
        bits=bits,
        plane_values=values,
        players=np.array([s.to_act for s in states], dtype=np.int8),
        policy_actions=np.concatenate(actions).astype(np.int16),
        policy_probs=np.concatenate(probs),
        policy_offsets=np.concatenate([[0], np.cumsum([len(a) for a in actions])]),
        returns=np.array([1.0, -1.0], dtype=np.float32),
        removed=np.array([3.0, 1.0], dtype=np.float32),
        rings_to_win=3,
        finished=True,
        final_markers=np.stack([bitboard_plane(m) for m in final.markers]).astype(np.int8),
    )


#: The smallest training run that writes a network checkpoint (a few seconds).
TINY_TRAIN_CONFIG = """\
seed: 1
iterations: 1
backend: inprocess
network: {blocks: 1, channels: 8, value_hidden: 8}
search: {simulations: 4, gumbel_considered: 4}
selfplay: {games_per_iteration: 2, games_in_flight: 2, fast_simulations: 2}
replay: {window: 5000, min_positions: 4}
optim: {batch_size: 8, steps_per_iteration: 1, warmup_steps: 1}
eval: {every: 0, games: 2, opponents: [random], simulations: 0}
"""


def tiny_training_run(folder: Path, *overrides: str) -> Path:
    """Train :data:`TINY_TRAIN_CONFIG` (with ``overrides``) in ``folder/run`` on one
    torch thread; returns the run directory."""
    import torch

    from train.trainer import run

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run(load_yaml_config(folder, TINY_TRAIN_CONFIG, *overrides), folder / "run", progress=False)
    finally:
        torch.set_num_threads(threads)
    return folder / "run"


def replay_file(folder: Path, games: int = 10) -> Path:
    """A replay window of ``games`` six-position random games, saved as a checkpoint's."""
    import torch

    from train.replay import ReplayBuffer

    buffer = ReplayBuffer(10**6)
    for g in range(games):
        buffer.add(game_of(random_positions(6, seed=g), seed=g))
    path = folder / "iter_000001.replay.pt"
    torch.save({"format": "test", "replay": buffer.state_dict()}, path)
    return path


def load_yaml_config(tmp_path: Path, text: str, *overrides: str) -> Config:
    """Write ``text`` to ``tmp_path/tiny.yaml`` and load it with ``overrides``."""
    from train.config import load_config  # the trainer (torch) only for the tests that train

    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return load_config(path, list(overrides))


# Positions named by what the next move does (White to act); the environments'
# tests play them.

#: White's ring E7 moves to E8, leaving a marker that completes White's row E3-E7.
OWN_ROW = position_text(
    {"E3": "M", "E4": "M", "E5": "M", "E6": "M", "E7": "R", "A2": "r", "K10": "r"},
    "w move - 2-1 30 0 3",
)
#: White's ring E5 jumps F5 to G5, flipping it: Black's row F3-F7 stands, White has none.
OPPONENT_ROW = position_text(
    {"F3": "m", "F4": "m", "F5": "M", "F6": "m", "F7": "m", "E5": "R", "A2": "r", "K10": "r"},
    "w move - 1-2 30 0 3",
)
#: White moves with one marker left in the pool: the game ends, Black ahead on rings.
LAST_MARKER = position_text({"E5": "R", "A2": "r", "K10": "r"}, "w move - 0-1 1 0 3")
#: Both sides' rings are walled in by rings and marker runs to the edge (the blocked
#: position of test_rules), and Black has passed: White's pass ends the game.
SECOND_PASS = "RrMM/mmRmMmm/1MMmm3/1mM1mm3/1Mm2mm3/mm3MM2/mM4Mm2/m5mM1/6Mm/6m/4 w move - 2-1 17 1 3"

#: A blitz game (one ring wins) whose last move throws a won position away:
#: Black, to move at ply 48, wins with F2-G2 (a row of five, then its ring) but
#: plays A4-A2, after which White makes a row at once.  Found by playing seeded
#: random games; tests/agents/review/test_review.py checks both facts with the rules.
THROWN_AWAY = """[Variant "blitz"]
[Result "*"]
G4 G9 B2 E7 I7 I4 G10 F4 I6 G3 G4-H4 I4-H3 B2-H8 F4-G5 H4-H7 G9-G7 G10-F9 G5-I5
I7-E3 G3-E1 F9-E9 G7-C3 E3-E6 C3-C4 I6-I8 E7-C5 H7-E4 C4-D5 E6-J11 E1-F2 E9-H9
D5-D3 J11-H11 I5-F5 I8-I9 F5-H5 H8-E8 C5-B5 I9-I10 B5-A4 E4-E2 H5-F3 I10-I11
D3-D6 H11-H10 H3-H6 H10-F10 A4-A2
"""


#: Packages of the ``train`` extra (and pytest, of ``dev``): not in ``pip install yinsh``.
NOT_IN_BASE_INSTALL = ("torch", "onnx", "yaml", "tensorboard", "pytest")
#: Python source that makes those packages unimportable in the interpreter that runs it
#: first (a meta-path finder refusing them): what the base install plays without them.
BLOCK_NON_BASE_PACKAGES = f"""\
import importlib.abc as _abc
import sys as _sys


class _NotInBaseInstall(_abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {NOT_IN_BASE_INSTALL!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None


_sys.meta_path.insert(0, _NotInBaseInstall())
"""


class PicklePayload:
    """Unpickled, it writes ``marker``: proof that a model file's pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "ran"))
