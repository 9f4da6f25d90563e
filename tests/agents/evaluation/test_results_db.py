"""The results database: what a row holds, several writers, SIGKILL, refusals, yinsh-ratings."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import tiny_training_run

from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.ratings_cli import main as ratings_main
from agents.evaluation.results_db import APPLICATION_ID, SCHEMA_VERSION, file_sha256
from agents.network.pretrained import weights_path
from train.config import ConfigError
from train.run_checkpoint import latest_checkpoint, read_file
from yinsh_env import action_to_str
from yinsh_env.records.formats import read_record

ROOT = Path(__file__).resolve().parents[3]


def rows(path: Path, query: str = "SELECT * FROM games ORDER BY id") -> list[sqlite3.Row]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return list(conn.execute(query))
    finally:
        conn.close()


def test_every_finished_game_is_a_row_with_what_it_needs(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite"
    result = run_arena(
        ["pretrained:sims=0", "random"], 3, MatchSettings(seed=5), progress=False, db=db
    )
    stored = rows(db)
    assert len(stored) == 3 == len(result.games)
    network = str(weights_path())
    for row, game in zip(stored, result.games):
        task = game.task
        assert row["game"] == task.index and row["seed"] == task.seed
        assert row["rings_to_win"] == 3 and row["event"] == "yinsh-eval"
        names = ["pretrained:sims=0", "random"]
        assert (row["white"], row["black"]) == (names[task.white], names[task.black])
        assert row["opening"] == " ".join(action_to_str(a) for a in task.opening)
        record = read_record(row["record"])
        assert record.replay().actions == game.actions and row["plies"] == len(game.actions)
        assert row["result"] == game.result and row["termination"] == game.termination
        assert row["white_decisions"] == game.think[0][1] and row["white_seconds"] >= 0
        net_side = "white" if task.white == 0 else "black"
        assert json.loads(row[f"{net_side}_files"]) == {network: file_sha256(network)}
        assert row[f"{net_side}_identity"].startswith("net:sha256=")
        assert row["code_version"].startswith("yinsh ")
    assert len({r["match_id"] for r in stored}) == 1
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def _eval_process(db: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    eval_cli = [sys.executable, "-m", "agents.evaluation.eval_cli"]
    command = [*eval_cli, *args, "--db", str(db), "--no-progress"]
    return subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_two_matches_writing_one_file_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    first = _eval_process(db, "random", "random", "--games", "60", "--seed", "1")
    second = _eval_process(db, "random", "random", "--games", "50", "--seed", "2")
    for process in (first, second):
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    stored = rows(db)
    assert len(stored) == 110
    by_match: dict[str, list[int]] = {}
    for row in stored:
        by_match.setdefault(row["match_id"], []).append(row["game"])
    assert sorted(sorted(g) for g in by_match.values()) == [list(range(50)), list(range(60))]
    assert rows(db, "PRAGMA integrity_check")[0][0] == "ok"


KILLED_WRITER = """
import sys
from agents.evaluation.arena import MatchSettings, run_arena
run_arena(["random", "random"], 5000, MatchSettings(seed=3), progress=False, db=sys.argv[1],
          on_game=lambda r: print(r.task.index, flush=True))
"""


@pytest.mark.slow
def test_sigkill_keeps_every_finished_game_and_a_sound_file(tmp_path: Path) -> None:
    db = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(db)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    reported: list[int] = []
    deadline = time.monotonic() + 180
    assert writer.stdout is not None
    while len(reported) < 30 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if not line:
            break
        reported.append(int(line))
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    writer.stdout.close()
    assert len(reported) >= 30, "the writer reported too few games"
    assert rows(db, "PRAGMA integrity_check")[0][0] == "ok"
    stored = {row["game"] for row in rows(db)}
    # Written before it is reported: every reported game is there (and nothing half-made).
    assert set(reported) <= stored and len(stored) < 5000
    for row in rows(db):
        assert read_record(row["record"]).replay().result == row["result"]


@pytest.mark.parametrize("kind", ["text", "other_app", "newer", "directory", "no_folder"])
def test_a_file_that_is_not_our_database_is_refused_before_any_game(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "file.db"
    if kind == "text":
        path.write_text("name,score\nme,1\n")
    elif kind in ("other_app", "newer"):
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE games (x)")
        if kind == "newer":
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        conn.commit()
        conn.close()
    elif kind == "directory":
        path.mkdir()
    else:
        path = tmp_path / "missing" / "games.db"
    before = path.read_bytes() if path.is_file() else None
    out = tmp_path / "out.json"
    args = ["random", "random", "--games", "2", "--db", str(path), "--json", str(out)]
    assert eval_main(args) == 2
    err = capsys.readouterr().err
    assert "--db" in err and str(path) in err
    assert not out.exists()
    if before is not None:
        assert path.read_bytes() == before
        assert not Path(f"{path}-wal").exists()
    assert eval_main(["--rate", "random", "--db", str(path)]) == 2
    try:  # argparse refuses what is no file (a folder, a missing one) with SystemExit
        status = ratings_main([str(path)])
    except SystemExit as exit:
        status = exit.code
    assert status == 2


def test_bad_input_with_a_db_creates_no_file(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    assert eval_main(["random", "nope", "--games", "2", "--db", str(db)]) == 2
    assert eval_main(["random", "random", "--sprt", "elo0=0,elo1=0", "--db", str(db)]) == 2
    assert not db.exists()


@pytest.mark.slow
def test_ratings_fit_every_stored_game_on_the_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "games.sqlite"
    # "greedy" and "greedy:noise=0" are one player; noise=500 sits between it and random.
    run_arena(["greedy", "random"], 4, MatchSettings(seed=1), progress=False, db=db)
    run_arena(
        ["greedy:noise=500", "greedy:noise=0"], 4, MatchSettings(seed=2), progress=False, db=db
    )
    run_arena(["greedy:noise=500", "random"], 4, MatchSettings(seed=3), progress=False, db=db)
    run_arena(["random", "random"], 2, MatchSettings(seed=4, rings_to_win=1), progress=False, db=db)
    out = tmp_path / "ratings.json"
    assert ratings_main([str(db), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "head to head" in text and "yinsh-v1 (random = 0)" in text
    data = json.loads(out.read_text())
    ratings = {r["agent"]: r for r in data["ratings"]}
    assert set(ratings) == {"greedy", "greedy:noise=500", "random"}
    assert ratings["random"]["elo"] == 0.0 and ratings["random"]["anchor"]
    assert ratings["greedy"]["anchor"] and ratings["greedy"]["games"] == 8
    assert ratings["greedy:noise=500"]["scale"] == "yinsh-v1"
    assert not ratings["greedy:noise=500"]["anchor"]
    assert data["skipped_games"] == 2
    pairs = {(p["a"], p["b"]): p["games"] for p in data["head_to_head"]}
    assert sum(pairs.values()) == 12


def test_ratings_without_anchors_say_they_are_relative(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "games.sqlite"
    run_arena(
        ["greedy:noise=500", "greedy:noise=900"], 2, MatchSettings(seed=1), progress=False, db=db
    )
    assert ratings_main([str(db)]) == 0
    assert "relative (greedy:noise=500 = 0)" in capsys.readouterr().out


@pytest.mark.slow
def test_the_trainers_evaluation_keeps_its_games_and_refuses_a_foreign_file(
    tmp_path: Path,
) -> None:
    db = tmp_path / "train.sqlite"
    run_dir = tiny_training_run(tmp_path, "iterations=1", "eval.every=1", f"eval.db={db}")
    stored = rows(db)
    history = read_file(latest_checkpoint(run_dir))["history"]
    assert history["evaluated"] == [0, 1] and stored
    assert len(stored) == sum(p["games"] for p in history["pairings"])  # every match's games
    assert {r["event"] for r in stored} == {f"yinsh-train eval {run_dir}"}
    assert {r["white"] for r in stored} | {r["black"] for r in stored} >= {"random"}
    assert all(read_record(r["record"]).replay().actions for r in stored)
    foreign = tmp_path / "foreign.db"
    foreign.write_text("not a database\n")
    (tmp_path / "second").mkdir()
    with pytest.raises(ConfigError, match=r"eval\.db"):
        tiny_training_run(tmp_path / "second", "iterations=1", f"eval.db={foreign}")
    assert foreign.read_text() == "not a database\n"
    assert not (tmp_path / "second" / "run").exists()  # refused before any work
