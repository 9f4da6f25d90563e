"""Hardening, round 2, re-probed: what a careless or hostile user hands the project.

Cases found by probing past the issue's list: record errors that echoed a
megabyte line, a BGA integer past Python's digit limit, a device or pipe given
as a record or a database, a finished AEC game whose ``last()`` raised
``KeyError``, negative seeds refused with Gymnasium's own error class, command
lines that wrote over their own inputs or loaded what they had not checked.
Each must be a ``ValueError``/``TypeError`` (or exit 2 with one line naming
the argument) that touches nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.evaluation.eval_cli import main as eval_main
from agents.evaluation.ratings_cli import main as ratings_main
from agents.infra.cli_args import PathError, input_file
from agents.review.review_cli import main as review_main
from yinsh_env import IllegalActionError, RecordError, env, load_record, raw_env
from yinsh_env.envs.gym_env import YinshGymEnv
from yinsh_env.records import formats as records
from yinsh_env.records.bga import read_bga_json
from yinsh_env.records.record_text import read_record
from yinsh_env.records.sgf import read_sgf

HUGE = "x" * 1_000_000

# --- records --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "text"),
    [
        (read_record, HUGE),
        (read_record, "[Variant " + HUGE),
        (read_sgf, "(" * 500_000 + ";" + ")" * 500_000),
        (read_sgf, "(;FF[4]\n" + HUGE),
        (read_bga_json, HUGE),
        (read_bga_json, '{"actions": ["' + HUGE + '"], "result": "Draw"}'),
    ],
    ids=["yinsh-move", "yinsh-header", "sgf-nested", "sgf-line", "bga-line", "bga-action"],
)
def test_a_record_error_quotes_a_bounded_slice_of_a_huge_line(read: Any, text: str) -> None:
    with pytest.raises(RecordError, match=r"line \d") as info:
        read(text)
    assert len(str(info.value)) < 400  # was the whole line: megabytes in one message


def test_a_bga_integer_past_the_digit_limit_is_a_record_error() -> None:
    with pytest.raises(RecordError, match="line 1: bad JSON number"):
        read_bga_json('{"rings_to_win": ' + "9" * 5000 + ', "actions": [], "result": "Draw"}')


def test_what_is_no_record_file_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if Path("/dev/null").exists():  # read before: an empty, "valid" record
        with pytest.raises(RecordError, match="not a regular file"):
            load_record("/dev/null")
    with pytest.raises(RecordError, match="not a regular file"):
        load_record(tmp_path)
    monkeypatch.setattr(records, "MAX_RECORD_BYTES", 100)
    big = tmp_path / "big.yinsh"
    big.write_text("; a comment\n" * 20)
    with pytest.raises(RecordError, match="over 100 bytes"):
        load_record(big)


def test_a_device_is_no_input_file() -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    with pytest.raises(PathError, match="not a regular file"):
        input_file("/dev/null")


# --- environments ---------------------------------------------------------------------


def _finished(e: Any) -> None:
    """Play ``e`` (an AEC environment) to the end and let every agent leave."""
    e.reset(seed=0)
    for _ in range(2000):
        if not e.agents:
            return
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    raise AssertionError("the game did not end in 2000 steps")


@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
def test_a_game_every_agent_left_refuses_step_and_last_clearly(make: Any) -> None:
    e = make()
    _finished(e)
    for action in (None, 0):  # env() only warned and dropped the action
        with pytest.raises(IllegalActionError, match=r"reset\(\) before step"):
            e.step(action)
    with pytest.raises(IllegalActionError, match=r"reset\(\) before last"):  # was KeyError
        e.last()
    e.reset(seed=1)
    assert e.agents and e.last()[0] is not None


@pytest.mark.parametrize("kind", ["env", "raw_env", "gym"])
def test_a_seed_is_a_non_negative_integer_or_a_clear_error(kind: str) -> None:
    e: Any = YinshGymEnv() if kind == "gym" else (env() if kind == "env" else raw_env())
    for seed, error in ((-1, ValueError), (1.5, TypeError), ("3", TypeError), (True, TypeError)):
        with pytest.raises(error, match="seed must be None or an integer >= 0"):
            e.reset(seed=seed)  # -1 raised gymnasium.error.Error, no ValueError
    e.reset(seed=np.int64(3))  # numpy integers are seeds


@pytest.mark.parametrize("kind", ["raw_env", "gym"])
@pytest.mark.parametrize(
    ("option", "error"),
    [
        ({"render_size": 100_000}, ValueError),  # a 100,000-pixel raster: about 30 GB
        ({"render_size": -1}, ValueError),
        ({"render_size": 480.0}, ValueError),
        ({"legal_moves_in_info": "no"}, TypeError),  # "no" is truthy
    ],
)
def test_environment_options_are_checked_when_built(
    kind: str, option: dict[str, Any], error: type[Exception]
) -> None:
    name = next(iter(option))
    with pytest.raises(error, match="picture size" if name == "render_size" else name):
        YinshGymEnv(**option) if kind == "gym" else raw_env(**option)


@pytest.mark.parametrize(("value", "error"), [(float("nan"), ValueError), ("-1", TypeError)])
def test_an_illegal_reward_is_a_finite_number_or_none(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="illegal_reward"):
        YinshGymEnv(illegal_reward=value)


# --- command lines --------------------------------------------------------------------


def _last_line(err: str) -> str:
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_eval_time_limit_and_outputs_over_the_database_are_refused_before_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("games were started")

    monkeypatch.setattr("agents.evaluation.eval_cli.run_arena", refuse)
    with pytest.raises(SystemExit):
        eval_main(["random", "greedy", "-n", "2", "--move-time-limit", "nan"])
    assert "--move-time-limit: must be a finite number" in _last_line(capsys.readouterr().err)
    db = tmp_path / "games.sqlite"
    for option in ("--json", "--plot"):
        name = "games.sqlite" if option == "--json" else "games.png"
        target = db if option == "--json" else db.with_name(name)
        args = ["random", "greedy", "-n", "2", "--db", str(target), option, str(target)]
        assert eval_main(args) == 2
        assert f"{option} {target} is the --db file itself" in _last_line(capsys.readouterr().err)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["{dir}"], "argument FILE: "),
        (["{missing}"], "argument FILE: "),
        (["{db}", "--rings-to-win", "0"], "argument --rings-to-win: "),
        (["{db}", "--json", "{missing}/x.json"], "argument --json: "),
        (["{db}", "--json", "{db}"], "argument --json: "),
        (["{db}", "--scale", "{dir}"], "argument --scale: "),
    ],
)
def test_ratings_checks_its_arguments_before_reading(
    args: list[str], argument: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "games.sqlite"
    db.write_bytes(b"")  # an empty file: a new database
    (tmp_path / "dir").mkdir()
    names = {"dir": tmp_path / "dir", "missing": tmp_path / "missing", "db": db}
    with pytest.raises(SystemExit) as info:
        ratings_main([a.format(**names) for a in args])
    assert info.value.code == 2
    assert argument in _last_line(capsys.readouterr().err)
    assert db.read_bytes() == b""


def test_ratings_names_a_foreign_file_without_an_option_it_does_not_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    foreign = tmp_path / "notes.txt"
    foreign.write_text("hello")
    assert ratings_main([str(foreign)]) == 2
    line = _last_line(capsys.readouterr().err)
    assert line.startswith(f"yinsh-ratings: {foreign}: not an SQLite") and "--db" not in line


def test_review_never_writes_over_a_record_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "game.yinsh"
    game.write_text("1. W E5\n")
    reviewed = tmp_path / "other.review.yinsh"  # what reviewing other.sgf writes in tmp_path
    reviewed.write_text("2. W E5\n")
    other = tmp_path / "other.sgf"
    other.write_text("(;FF[4]GM[YINSH])")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    args = [str(other), str(reviewed), "--agent", "mcts:sims=2", "--out", str(tmp_path)]
    assert review_main([*args, "--no-progress"]) == 2
    assert "would overwrite the record" in _last_line(capsys.readouterr().err)
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_ray_refuses_an_address_it_cannot_reach_in_one_line() -> None:
    pytest.importorskip("ray")
    from agents.evaluation.ray_runner import connect

    with pytest.raises(ValueError, match=r"--address 'nowhere://x': cannot connect to Ray"):
        connect("nowhere://x")


# --- training configs -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("workers=100000", r"workers must be in \[1, 1024\]"),  # 100,000 processes
        ("eval.workers=5000", r"eval.workers must be in \[1, 1024\]"),
        ("threads=100000", r"threads must be in \[1, 1024\]"),
        ("seed=99999999999999999999999", r"seed must be in \[0, 9223372036854775807\]"),
        ("network.channels=100000", r"network.channels must be in \[1, 4096\]"),
        ("search.simulations=100000000", r"search.simulations must be in \[1, 10000000\]"),
    ],
)
def test_config_counts_and_sizes_have_a_ceiling(override: str, message: str) -> None:
    """Each was accepted, then crashed the run (torch's seed overflow) or the machine."""
    from train.config import ConfigError, load_config
    from train.config_files import resolve_config

    with pytest.raises(ConfigError, match=message):
        load_config(resolve_config("quick"), [override])


def test_an_eval_db_that_cannot_be_created_is_refused_before_a_run() -> None:
    """SQLite's "unable to open database file" came after iteration 0 was written."""
    from train.config import ConfigError, load_config
    from train.config_files import resolve_config
    from train.preflight import check_runnable

    folder = Path("/proc")  # a folder no one, root included, creates files in
    if not folder.is_dir():
        pytest.skip("no /proc")
    config = load_config(resolve_config("quick"), [f"eval.db={folder / 'games.sqlite'}"])
    with pytest.raises(ConfigError, match=r"eval.db: .*cannot be written"):
        check_runnable(config)
