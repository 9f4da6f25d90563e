"""Real games (boardspace.net .sgf and a BGA transcription) replay under our rules.

The games live in the games directory (fixture ``games_dir``): the full set
beside the project, or the subset shipped in ``tests/data/games``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import is_bundled

from yinsh_env import (
    GameRecord,
    Outcome,
    RecordError,
    Termination,
    load_record,
    read_record,
    read_sgf,
    write_record,
    write_sgf,
)

#: What each known game's file says about its end (read from RE and its last
#: commands): winner, termination, number of engine actions.
KNOWN_GAMES = {
    "Y-BestBot-BOkpc-2026-03-13-1856.sgf": ("W", "resign", 11),  # BOkpc (P1) resigns
    "Y-BraveCombo-Dumbot-2026-03-20-0237.sgf": ("B", "rings", 76),
    "Y-DrMih-Dumbot-2026-02-20-0858.sgf": ("B", "rings", 56),
    "Y-DrMih-Dumbot-2026-02-23-1415.sgf": ("W", "rings", 53),
    "Y-phiulbrich-BestBot-2026-03-21-2221.sgf": ("B", "resign", 46),  # phiulbrich (P0) resigns
    "bga_862307561.json": ("B", "rings", 80),  # "Black wins 3-2"
}
#: The games shipped in ``tests/data/games`` (a resignation, the old ring-removal
#: form, a game won on rings, the BGA game).
BUNDLED_GAMES = {
    "Y-BestBot-BOkpc-2026-03-13-1856.sgf",
    "Y-BraveCombo-Dumbot-2026-03-20-0237.sgf",
    "Y-DrMih-Dumbot-2026-02-23-1415.sgf",
    "bga_862307561.json",
}
_COMMAND = re.compile(r"P([01])\[(\d+) ")


def game_files(games_dir: Path) -> list[Path]:
    files = sorted([*games_dir.glob("**/*.sgf"), *games_dir.glob("**/*.json")])
    assert files, f"no games found under {games_dir}"
    return files


def check_outcome(record: GameRecord) -> None:
    """The replayed game agrees with the recorded ending, stated case by case."""
    state = record.replay()
    if record.termination.by_rules:
        assert state.outcome() == Outcome(record.termination, record.result.winner)
        if record.termination is Termination.RINGS:
            winner = record.result.winner
            assert winner is not None and state.removed[winner] == record.rings_to_win
    elif record.termination is Termination.RESIGN:
        # Resigned: the position is unfinished, the winner is the side not to act.
        assert not state.is_terminal
        assert record.result.winner is state.to_act.other
    else:
        assert record.termination is Termination.UNFINISHED
        assert not state.is_terminal and record.result == "*"


def test_every_real_game_replays_with_its_result(games_dir: Path) -> None:
    for path in game_files(games_dir):
        record = load_record(path)
        check_outcome(record)
        assert record.white and record.black
        if path.name in KNOWN_GAMES:
            result, termination, plies = KNOWN_GAMES[path.name]
            assert (record.result, record.termination, len(record.actions)) == (
                result, termination, plies,
            ), path.name  # fmt: skip


def test_known_games_are_all_present(games_dir: Path) -> None:
    expected = BUNDLED_GAMES if is_bundled(games_dir) else set(KNOWN_GAMES)
    assert expected <= {p.name for p in game_files(games_dir)}


def test_real_games_round_trip_through_both_writers(games_dir: Path) -> None:
    for path in game_files(games_dir):
        record = load_record(path)
        assert read_record(write_record(record)) == record, path.name
        if path.suffix == ".sgf":
            assert read_sgf(write_sgf(record)) == record, path.name


def test_sgf_side_is_checked_at_every_command(games_dir: Path) -> None:
    """Giving any command of a real game to the other player is caught on its line."""
    for path in sorted(games_dir.glob("**/*.sgf")):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        commands = [
            i for i, line in enumerate(lines) if (m := _COMMAND.search(line)) and m.group(2) != "0"
        ]
        assert len(commands) > 20, path.name
        for i in commands[1::9] + commands[-2:]:  # a spread of commands, and the last ones
            flipped = list(lines)
            player = _COMMAND.search(lines[i]).group(1)  # type: ignore[union-attr]
            flipped[i] = lines[i].replace(f"P{player}[", f"P{1 - int(player)}[", 1)
            with pytest.raises(RecordError) as info:
                read_sgf("\n".join(flipped))
            assert f"line {i + 1}:" in str(info.value), (path.name, lines[i])
            assert "is to act" in str(info.value)


def test_sgf_with_old_ring_removal_form_and_no_done_lines(games_dir: Path) -> None:
    path = games_dir / "boardspace" / "Y-BraveCombo-Dumbot-2026-03-20-0237.sgf"
    if not path.is_file():
        pytest.skip("the BraveCombo game is not in the games directory")
    text = path.read_text(encoding="utf-8")
    record = read_sgf(text)
    old_form = text.replace("; P0[61 remove wr F 2]", "; P0[61 pick board F 2]\n; P0[61 drop wrc]")
    assert old_form != text
    assert read_sgf(old_form) == record
    no_done = "\n".join(line for line in text.split("\n") if " Done ]" not in line)
    assert read_sgf(no_done) == record
