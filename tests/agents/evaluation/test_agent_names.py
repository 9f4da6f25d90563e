"""Agents shown by name (``NAME=SPEC``), stored with their spec; ``py:`` agents known by code."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import textwrap
from pathlib import Path

import pytest

from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.names import AgentNameError, agent_labels, split_name
from agents.evaluation.rate import rate_agent
from agents.evaluation.ratings_cli import main as ratings_main
from agents.evaluation.results_db import (
    APPLICATION_ID,
    SCHEMA,
    SCHEMA_VERSION,
    connect,
    read_games,
)
from agents.evaluation.scale import default_scale, spec_identities
from yinsh_env.util.file_hash import file_sha256


@pytest.mark.parametrize(
    "entry",
    [
        "greedy",
        "mcts:sims=800",
        "net:path=a=b.pt",
        "net:path=runs/x=1/iter_000001.pt,sims=8",
        "py:./my_agents.py:make,path=a=b.pt",
        "py:my_agents:make_agent",
        "  alphabeta:depth=2  ",
    ],
)
def test_a_spec_alone_is_unnamed_and_unchanged(entry: str) -> None:
    assert split_name(entry) == (None, entry.strip())


@pytest.mark.parametrize(
    ("entry", "name", "spec"),
    [
        ("mine=net:path=a=b.pt", "mine", "net:path=a=b.pt"),
        (
            "mine=net:path=runs/x/iter_000472.pt,sims=64",
            "mine",
            "net:path=runs/x/iter_000472.pt,sims=64",
        ),
        ("v1.2_b-3=greedy", "v1.2_b-3", "greedy"),
        (" me = py:./my_agents.py:make ", "me", "py:./my_agents.py:make"),
    ],
)
def test_name_equals_spec_splits_at_the_first_equals_before_any_colon(
    entry: str, name: str, spec: str
) -> None:
    assert split_name(entry) == (name, spec)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("=greedy", "no name before '='"),
        ("mine=", "no spec after mine="),
        ("1st=greedy", "bad agent name '1st'"),
        ("my agent=greedy", "bad agent name 'my agent'"),
        ("a/b=greedy", "bad agent name 'a/b'"),
        ("a=b=greedy", "one name per agent"),
    ],
)
def test_a_bad_name_is_refused_naming_the_entry(entry: str, message: str) -> None:
    with pytest.raises(AgentNameError, match=message):
        split_name(entry)


def test_labels_are_names_else_specs_with_repeats_numbered() -> None:
    assert agent_labels(["a", None, None], ["x", "random", "random"]) == [
        "a",
        "random",
        "random#2",
    ]
    with pytest.raises(AgentNameError, match="'a' is given to 2 agents"):
        agent_labels(["a", "a"], ["greedy", "random"])
    with pytest.raises(AgentNameError, match="'random' is also another agent's spec"):
        agent_labels(["random", None], ["greedy", "random"])


def test_a_named_agent_is_shown_by_name_and_stored_with_its_spec(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite"
    long = "greedy:noise=0.0"
    result = run_arena([f"mine={long}", "random"], 2, MatchSettings(seed=1), progress=False, db=db)
    assert result.agents == ["mine", "random"]
    assert result.pairings[0].a == "mine"
    report = result.report()
    assert "mine vs random" in report and f"mine: {long}" in report
    assert long not in report.replace(f"mine: {long}", "")  # the table itself is narrow
    assert result.to_json()["specs"] == {"mine": long, "random": "random"}
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT white, black, white_name, black_name FROM games").fetchall()
    conn.close()
    assert {(w, wn) for w, _, wn, _ in rows} | {(b, bn) for _, b, _, bn in rows} == {
        (long, "mine"),
        ("random", "random"),
    }


def test_repeated_specs_keep_their_spec_in_the_database(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite"
    result = run_arena(["random", "random"], 2, progress=False, db=db)
    assert result.agents == ["random", "random#2"]
    games = list(read_games(db))
    assert {(g.white, g.white_name) for g in games} == {
        ("random", "random"),
        ("random", "random#2"),
    }


def test_cli_names_agents_and_refuses_bad_names_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    assert (
        eval_main(["me=greedy", "random", "--games", "2", "--no-progress", "--json", str(out)]) == 0
    )
    assert json.loads(out.read_text())["agents"] == ["me", "random"]
    capsys.readouterr()
    for args, message in [
        (["=greedy", "random"], "no name before '='"),
        (["a=greedy", "a=random"], "'a' is given to 2 agents"),
        (["greedy=random", "greedy"], "also another agent's spec"),
        (["--rate", "9=greedy"], "bad agent name '9'"),
    ]:
        db = tmp_path / "never.sqlite"
        assert eval_main([*args, "--games", "2", "--no-progress", "--db", str(db)]) == 2
        assert message in capsys.readouterr().err
        assert not db.exists()


def test_rate_shows_the_name_and_keeps_the_spec() -> None:
    cheap = dataclasses.replace(default_scale(), anchors=default_scale().anchors[:3])
    result = rate_agent(
        "me=greedy:noise=500", cheap, MatchSettings(seed=1), ci_width=2000, max_games=4
    )
    assert result.agent == "me" and result.spec == "greedy:noise=500"
    assert result.to_json()["rating"]["spec"] == "greedy:noise=500"
    assert "me: greedy:noise=500" in result.report()


def _version_1_file(db: Path) -> None:
    """A results database as version 1 wrote it, with one game of greedy against random."""
    old_schema = SCHEMA.replace(
        ",\n    white_name TEXT NOT NULL DEFAULT '',\n    black_name TEXT NOT NULL DEFAULT ''", ""
    )
    assert "white_name" not in old_schema
    conn = sqlite3.connect(db)
    conn.executescript(old_schema)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    columns = [(row[1], row[2]) for row in conn.execute("PRAGMA table_info(games)")][1:]
    given = {"white": "greedy", "black": "random", "white_identity": "greedy:noise=0.0"}
    given |= {"black_identity": "random", "result": "W", "rings_to_win": 3}
    row = [given.get(name, 0 if kind in ("INTEGER", "REAL") else "") for name, kind in columns]
    conn.execute(f"INSERT INTO games VALUES (NULL, {', '.join('?' * len(row))})", row)
    conn.commit()
    conn.close()


def test_a_version_1_database_is_read_and_gains_the_name_columns(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    _version_1_file(db)
    (old,) = read_games(db)  # read as it is: no names
    assert (old.white, old.white_name, old.black_name) == ("greedy", "", "")
    run_arena(["g=greedy", "random"], 2, progress=False, db=db)
    games = list(read_games(db))
    assert games[0] == old and len(games) == 3
    assert {g.white_name for g in games[1:]} | {g.black_name for g in games[1:]} == {"g", "random"}
    check = connect(db)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    check.close()
    assert ratings_main([str(db)]) == 0


MODULE = """
from agents.base import Agent


class First(Agent):
    def act(self, state):
        return state.legal_actions()[{index}]


def make():
    return First()
"""


def test_editing_a_py_agents_file_makes_it_another_player(tmp_path: Path) -> None:
    source = tmp_path / "edited_agent.py"
    source.write_text(textwrap.dedent(MODULE.format(index=0)))
    spec = f"py:{source}:make"
    before, again = spec_identities([spec, spec])
    assert before == again and before.startswith(f"py:{source}:make")
    assert f"source_sha256={file_sha256(source)[:16]}" in before
    source.write_text(textwrap.dedent(MODULE.format(index=-1)))
    after = spec_identities([spec])[0]
    assert after != before and f"source_sha256={file_sha256(source)[:16]}" in after
    assert spec_identities(["greedy"]) == ["greedy:noise=0.0"]  # a built-in: its spec alone

    db = tmp_path / "games.sqlite"
    run_arena([spec, "random"], 2, progress=False, db=db)
    conn = sqlite3.connect(db)
    files, identity = conn.execute(
        "SELECT white_files, white_identity FROM games WHERE white = ?", (spec,)
    ).fetchone()
    conn.close()
    assert json.loads(files) == {str(source.resolve()): file_sha256(source)}
    assert identity == after
