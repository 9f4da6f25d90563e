"""Differential tests against games recorded by an independent engine.

At every ply of every game in ``traces.jsonl.gz``: the player to act, the
phase and the set of legal actions agree; at the end, the result, the way the
game ended, the rings removed and the pool agree.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import is_bundled

from yinsh_env import ACTION_NAMES, State

#: Games in the full set (``../shared/traces``) and in the subset in ``tests/data``.
FULL_GAMES, BUNDLED_GAMES = 1000, 300


def _games(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh]


def _legal_names(state: State) -> list[str]:
    return sorted(ACTION_NAMES[a] for a in state.legal_actions())


@pytest.mark.slow
def test_every_trace_agrees(traces_file: Path) -> None:
    games = _games(traces_file)
    assert len(games) >= (BUNDLED_GAMES if is_bundled(traces_file) else FULL_GAMES)
    with_full_lists = 0
    for game in games:
        state = State()
        for ply, step in enumerate(game["plies"]):
            where = f"game {game['id']} ply {ply} at {state.to_text()}"
            names = _legal_names(state)
            assert state.to_act.letter == step["to_act"], where
            assert state.phase.text == step["phase"], where
            assert len(names) == step["legal_n"], where
            digest = hashlib.sha1("\n".join(names).encode()).hexdigest()[:12]
            assert digest == step["legal_sha1"], where
            if "legal" in step:
                with_full_lists += 1
                assert names == step["legal"], where
            state.push(step["action"])
        assert state.is_terminal, f"game {game['id']} did not end"
        assert state.result == game["result"], game["id"]
        assert state.end_reason == game["end"], game["id"]
        assert state.removed == game["rings_removed"], game["id"]
        assert state.pool == game["pool_left"], game["id"]
    assert with_full_lists > 0


@pytest.mark.parametrize("kind", ["random", "jumpy", "mcts"])
def test_trace_kinds_are_present(traces_file: Path, kind: str) -> None:
    assert any(g["kind"] == kind for g in _games(traces_file))
