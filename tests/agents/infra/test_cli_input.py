"""Command lines given bad paths and numbers: a one-line error naming the argument, before any work.

The probes of the hardening issue (``yinsh-eval ... --json missing_dir/x.json``
played every game and then lost the results; ``yinsh-train --config`` on a
binary file gave a traceback), the same classes of failure in every other
command line, and the files they read: an unusable checkpoint or config is
one line naming the file, and a network with NaN weights is refused.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import Agent, AgentSpecError, make_agent, register_agent
from agents.evaluation.eval_cli import main as eval_main
from agents.infra.cli_args import (
    PathError,
    any_path,
    input_dir,
    input_file,
    int_in,
    number_in,
    output_dir,
    output_file,
)
from agents.play.play_cli import main as play_main
from train.config import ConfigError, load_config
from train.run_checkpoint import CheckpointError, read_file
from train.tools.curve import main as curve_main
from train.tools.plot import main as plot_main
from train.tools.ship_network import main as pretrained_main
from train.train_cli import main as train_main
from yinsh_env import State


def _unwritable_dir(tmp_path: Path) -> Path:
    """A folder this process cannot create files in (root ignores permissions: /sys)."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    if Path("/sys/kernel").is_dir():
        return Path("/sys/kernel")
    pytest.skip("no folder this user cannot write in")


def _one_error_line(err: str, argument: str) -> None:
    """argparse's usage, then one error line naming ``argument``; no traceback."""
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert "error:" in last and argument in last, err


def _refused(main: Any, args: list[str], argument: str, capsys: Any) -> None:
    """``main(args)`` exits with status 2 and one error line naming ``argument``."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    _one_error_line(capsys.readouterr().err, argument)


# --- yinsh-eval ------------------------------------------------------------------------


@pytest.fixture
def no_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the arena starts (the checks must come first)."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("games were started")

    monkeypatch.setattr("agents.evaluation.eval_cli.run_arena", refuse)


EVAL_CASES = [
    (["--json", "{missing}/x.json"], "--json", "does not exist"),
    (["--json", "{dir}"], "--json", "is a folder"),
    (["--json", "{file}/x.json"], "--json", "is not a folder"),
    (["--json", "a\x00b.json"], "--json", "NUL"),
    (["--json", ""], "--json", "empty"),
    (["--plot", "{missing}/elo.png"], "--plot", "does not exist"),
    (["--plot", "{dir}/elo.xyz"], "--plot", "unknown extension '.xyz'"),
    (["--plot", "{dir}/elo"], "--plot", "no extension"),
    (["--plot", "{dir}"], "--plot", "extension"),
    (["--records", "{file}"], "--records", "is a file"),
    (["--records", "{file}/deeper"], "--records", "is a file"),
    (["--seed", "-1"], "--seed", "'-1'"),
    (["--seed", "1e3"], "--seed", "'1e3'"),
    (["--seed", "\u0663"], "--seed", "integer"),
    (["--seed", "9" * 40], "--seed", "integer"),
    (["--workers", "0"], "--workers", "1.."),
    (["--opening-plies", "11"], "--opening-plies", "0..10"),
    (["--rings-to-win", "0"], "--rings-to-win", "1..5"),
]


@pytest.mark.parametrize(("args", "argument", "problem"), EVAL_CASES)
def test_eval_refuses_a_bad_argument_before_any_game(
    args: list[str],
    argument: str,
    problem: str,
    tmp_path: Path,
    no_games: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    names = {"missing": tmp_path / "missing", "dir": tmp_path / "dir", "file": tmp_path / "file"}
    args = [a.format(**names) if "{" in a else a for a in args]
    with pytest.raises(SystemExit) as info:
        eval_main(["random", "greedy", "-n", "2", "--no-progress", *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    _one_error_line(err, argument)
    assert problem in err.strip().splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "file"]  # nothing made


@pytest.mark.parametrize("flag", ["--json", "--plot"])
def test_eval_refuses_an_output_it_could_not_write(
    flag: str, tmp_path: Path, no_games: None, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _unwritable_dir(tmp_path)
    with pytest.raises(SystemExit):
        eval_main(["random", "greedy", "-n", "2", flag, str(folder / "out.png")])
    _one_error_line(capsys.readouterr().err, flag)


def test_eval_records_folder_is_created_and_an_existing_json_kept_on_a_bad_plot(
    tmp_path: Path, no_games: None
) -> None:
    existing = tmp_path / "old.json"
    existing.write_text('{"kept": true}')
    with pytest.raises(SystemExit):
        eval_main(["random", "greedy", "-n", "2", "--json", str(existing), "--plot", "x.bad"])
    assert existing.read_text() == '{"kept": true}'
    with pytest.raises(SystemExit):
        eval_main(["random", "greedy", "-n", "2", "--json", str(tmp_path / "new.json"),
                   "--plot", "x.bad"])  # fmt: skip
    assert not (tmp_path / "new.json").exists()  # the check created nothing that stays


def test_eval_creates_a_missing_records_folder(tmp_path: Path) -> None:
    records = tmp_path / "a" / "b"
    assert (
        eval_main(["random", "random", "-n", "2", "--no-progress", "--records", str(records)]) == 0
    )
    assert len(list(records.glob("*.yinsh"))) == 2


class _Crashing(Agent):
    def act(self, state: State) -> int:
        raise ZeroDivisionError("agent bug")


register_agent("test-cli-crashing", _Crashing)


def test_eval_exits_1_when_games_fail_because_an_agent_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    code = eval_main(
        ["random", "test-cli-crashing", "-n", "2", "--no-progress", "--json", str(out)]
    )
    assert code == 1
    assert out.is_file()  # the results are still written
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "2 of 2 game(s) forfeited" in last and "ZeroDivisionError" in last


def test_eval_exits_0_when_every_game_is_played_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["random", "random", "-n", "2", "--no-progress"]) == 0


# --- yinsh-train and its files -----------------------------------------------------------


def test_train_refuses_a_binary_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bin.yaml"
    config.write_bytes(bytes(range(256)) * 8)
    assert train_main(["--config", str(config), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(config) in err and "UTF-8" in err
    assert not (tmp_path / "run").exists()


def test_train_resume_refuses_an_undecodable_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_bytes(b"iterations: 1\n\xff\xfe\x00garbage")
    assert train_main(["--resume", "--run-dir", str(run), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.yaml" in err and "UTF-8" in err


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["--config", "quick", "--run-dir", "{file}"], "--run-dir"),
        (["--config", "quick", "--run-dir", "{file}/sub"], "--run-dir"),
        (["--config", "a\x00b"], "--config"),
        (["--resume", "--run-dir", "{missing}"], "--resume"),
    ],
)
def test_train_names_the_argument_at_fault(
    args: list[str], argument: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    names = {"file": tmp_path / "file", "missing": tmp_path / "missing"}
    _refused(train_main, [a.format(**names) for a in args], argument, capsys)
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("override", ["iterations=abc", "search.simulations=0", "optim.lr=nan"])
def test_a_bad_override_is_blamed_on_the_override(override: str, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("iterations: 2\n")
    with pytest.raises(ConfigError) as info:
        load_config(config, [override])
    assert str(info.value).startswith(f"override {override!r}:")
    config.write_text("iterations: abc\n")  # the file's own mistake is still the file's
    with pytest.raises(ConfigError, match=r"^config file .*c\.yaml: iterations"):
        load_config(config, ["seed=1"])


def test_a_huge_override_value_is_quoted_in_part() -> None:
    from train.config_files import resolve_config

    with pytest.raises(ConfigError) as info:
        load_config(resolve_config("quick"), ["iterations=" + "x" * 100_000])
    assert len(str(info.value)) < 400


def test_a_config_too_large_or_a_folder_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * (2 << 20))
    with pytest.raises(ConfigError, match="larger than"):
        load_config(big)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path)


# --- checkpoints -----------------------------------------------------------------------


class _NotATensor:
    pass


def _write_bad_files(folder: Path, good: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}

    def put(name: str, data: bytes) -> None:
        files[name] = folder / f"{name}.pt"
        files[name].write_bytes(data)

    put("random-bytes", os.urandom(4096))
    put("empty", b"")
    put("truncated", good.read_bytes()[: good.stat().st_size // 2])
    put("plain-pickle", pickle.dumps({"format": "yinsh-train-checkpoint"}))
    with zipfile.ZipFile(folder / "zip.pt", "w") as archive:
        archive.writestr("notes.txt", "not a tensor archive")
    files["zip-not-torch"] = folder / "zip.pt"
    files["other-objects"] = folder / "objects.pt"
    torch.save({"format": "yinsh-train-checkpoint", "x": _NotATensor()}, files["other-objects"])
    files["wrong-model"] = folder / "model.pt"
    torch.save(
        {"format": "yinsh-train-checkpoint", "version": 1, "model": [1]}, files["wrong-model"]
    )
    return files


@pytest.fixture(scope="module")
def bad_checkpoints(
    tmp_path_factory: pytest.TempPathFactory, tiny_run_dir: Path
) -> dict[str, Path]:
    from train.run_checkpoint import latest_checkpoint

    good = latest_checkpoint(tiny_run_dir)
    assert good is not None
    return _write_bad_files(tmp_path_factory.mktemp("bad-checkpoints"), good)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind",
    [
        "random-bytes",
        "empty",
        "truncated",
        "plain-pickle",
        "zip-not-torch",
        "other-objects",
        "wrong-model",
    ],
)
def test_an_unusable_checkpoint_is_one_line_naming_it(
    kind: str, bad_checkpoints: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = bad_checkpoints[kind]
    with pytest.raises(CheckpointError) as info:
        read_file(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message and len(message) < 300
    assert "file an issue" not in message and "weights_only" not in message
    with pytest.raises(AgentSpecError, match=r"not|empty|damaged|holds"):
        make_agent(f"net:path={path}")
    assert "Warning" not in capsys.readouterr().err  # torch's pickle warnings silenced


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_checkpoint_with_non_finite_weights_is_refused_naming_the_tensor(
    value: float, tiny_run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.run_checkpoint import latest_checkpoint

    good = latest_checkpoint(tiny_run_dir)
    assert good is not None
    data = torch.load(good, weights_only=True)
    name = next(k for k, v in data["model"].items() if v.is_floating_point())
    data["model"][name].view(-1)[0] = value
    bad = tmp_path / "iter_000001.pt"
    torch.save(data, bad)
    with pytest.raises(CheckpointError, match=f"{name}.*NaN or infinite"):
        read_file(bad)
    with pytest.raises(AgentSpecError, match=f"{bad}.*{name}"):
        make_agent(f"net:path={bad}")
    assert pretrained_main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and name in err


# --- the other command lines -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["--record", "{dir}/game.json"], "--record"),  # BGA records are read, not written
        (["--record", "{missing}/game.yinsh"], "--record"),
        (["--svg", "{dir}"], "--svg"),
        (["--seed", "-1"], "--seed"),
        (["--port", "70000", "--web"], "--port"),
        (["--every", "-1"], "--every"),
    ],
)
def test_play_names_the_argument_at_fault(
    args: list[str], argument: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = {"dir": tmp_path, "missing": tmp_path / "missing"}
    _refused(play_main, [a.format(**names) for a in args], argument, capsys)


@pytest.mark.parametrize("main", [curve_main, plot_main], ids=["curve", "plot"])
def test_curve_and_plot_name_a_bad_run_dir_or_image(
    main: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, argument in [
        ([str(tmp_path / "missing")], "run_dir"),
        ([str(tmp_path), "--out", str(tmp_path / "x.docx")], "--out"),
        ([str(tmp_path), "--out", str(tmp_path / "no" / "x.png")], "--out"),
    ]:
        _refused(main, args, argument, capsys)


def test_curve_json_naming_a_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        curve_main([str(tmp_path), "--json", str(tmp_path)])
    _one_error_line(capsys.readouterr().err, "--json")


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["export", "x.pt", "--out", "{missing}/p.pt"], "--out"),
        (["export", "x.pt", "--cpu-hours", "nan"], "--cpu-hours"),
        (["export", "x.pt", "--results", "{missing}/r.json"], "--results"),
        (["info", "{missing}/p.pt"], "path"),
    ],
)
def test_pretrained_names_the_argument_at_fault(
    args: list[str], argument: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        pretrained_main([a.format(missing=tmp_path / "missing") for a in args])
    _one_error_line(capsys.readouterr().err, argument)


def test_pretrained_export_refuses_undecodable_results(
    tiny_run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "r.json"
    for data in (b"\xff\xfe\x00", b"{not json", b"[" * 100_000):
        results.write_bytes(data)
        out = tmp_path / "p.pt"
        code = pretrained_main(
            ["export", str(tiny_run_dir), "--out", str(out), "--results", str(results)]
        )
        assert code == 2 and not out.exists()
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--results" in err


def test_sb3_example_checks_save_and_opponent_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    from train.libraries.sb3_maskable_ppo import main

    (tmp_path / "file").write_text("x")
    for args, argument in [
        (["--save", str(tmp_path / "file" / "m")], "--save"),  # a missing folder is made
        (["--opponent", "greedy:noise=nan"], "--opponent"),
        (["--opponent", f"net:path={tmp_path / 'none.pt'}"], "none.pt"),
        (["--lr", "inf"], "--lr"),
    ]:
        _refused(main, args, argument, capsys)


def test_rllib_example_checks_save_and_opponents_before_ray_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")
    from train.libraries.rllib_example import main

    (tmp_path / "file").write_text("x")
    for args, argument in [
        (["--save", str(tmp_path / "file")], "--save"),
        (["--eval-opponent", "mcts:sims=1,sims=2"], "--eval-opponent"),
        (["--opponent", f"net:path={tmp_path / 'none.pt'}"], "none.pt"),
        (["--minutes", "-1"], "--minutes"),
    ]:
        _refused(main, args, argument, capsys)


def test_benchmarks_name_the_argument_at_fault(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.bench_engine import main as engine_bench
    from benchmarks.bench_env import main as env_bench

    for main, args, argument in [
        (engine_bench, ["--seconds", "nan"], "--seconds"),
        (engine_bench, ["--sample-games", "0"], "--sample-games"),
        (env_bench, ["--rounds", "-3"], "--rounds"),
    ]:
        _refused(main, args, argument, capsys)


# --- the argument types ----------------------------------------------------------------


@pytest.mark.parametrize("text", ["-1", "1e3", "1.0", "\u0663", " ", "", "0x1", "1" * 40, "six"])
def test_int_in_takes_ascii_integers_in_range_only(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match=r"integer 0\.\.100"):
        int_in(0, 100)(text)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "-0.1", "11", "x", "", "\u0663"])
def test_number_in_takes_finite_numbers_in_range_only(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="finite number"):
        number_in(0, 10)(text)
    assert number_in(0, 10)("-0") == 0.0 and number_in(0, 10)("1e1") == 10.0


def test_output_checks_change_nothing_on_disk(tmp_path: Path) -> None:
    existing = tmp_path / "keep.json"
    existing.write_text("data")
    before = existing.stat().st_mtime_ns
    assert output_file()(str(existing)) == existing
    assert existing.read_text() == "data" and existing.stat().st_mtime_ns == before
    assert output_file()(str(tmp_path / "new.json")) == tmp_path / "new.json"
    assert output_dir(str(tmp_path / "a" / "b")) == tmp_path / "a" / "b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]


def test_a_save_path_may_name_folders_still_to_make(tmp_path: Path) -> None:
    deep = tmp_path / "runs" / "ppo" / "policy.pt"
    with pytest.raises(PathError, match="does not exist"):
        output_file()(str(deep))  # a plain output's folder must exist
    assert output_file((".pt",), parents=True)(str(deep)) == deep
    assert list(tmp_path.iterdir()) == []  # made when the run writes, not now
    (tmp_path / "runs").write_text("a file")
    with pytest.raises(PathError, match="is a file, not a folder"):
        output_file(parents=True)(str(deep))
    with pytest.raises(PathError, match="unknown extension"):
        output_file((".pt",), parents=True)(str(tmp_path / "new" / "p.zip"))


def test_a_dangling_symlink_keeps_its_link_and_gets_no_target(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "target.json")
    assert output_file()(str(link)) == link
    assert link.is_symlink() and not (tmp_path / "target.json").exists()
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ValueError, match="loop"):
        output_file()(str(loop))


@settings(max_examples=150, deadline=timedelta(seconds=2), database=None)
@given(
    st.one_of(
        st.text(max_size=30),
        st.text(alphabet="a/.\x00~-", max_size=12),
        st.sampled_from(["/", ".", "..", "/dev/null", "/proc", "x" * 300, "a/" * 100 + "b"]),
    )
)
def test_any_path_text_is_accepted_or_refused_cleanly_and_leaves_nothing(text: str) -> None:
    """Whatever the text, the path types answer or raise PathError; nothing is left on disk."""
    with tempfile.TemporaryDirectory() as folder:
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            for parse in (output_file(), output_dir, input_file, input_dir, any_path):
                try:
                    parse(text)
                except PathError as exc:
                    assert "\n" not in str(exc) and len(str(exc)) < 400
            assert os.listdir(folder) == []
        finally:
            os.chdir(cwd)


@pytest.mark.parametrize(
    "manifest",
    [b"\xff\xfe\x00\x01", b"{not json", b"[1, 2]", b'{"files": {"a": 1}}', b"[" * 100_000],
    ids=["binary", "not-json", "a-list", "bad-files", "deep"],
)
def test_run_archive_refuses_an_unusable_manifest_in_one_line(
    manifest: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.tools.run_archive import main as archive_main

    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "archive.json").write_bytes(manifest)
    assert archive_main(["restore", str(archive), str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "archive.json" in err
    assert not (tmp_path / "run").exists()


def test_run_archive_names_the_argument_at_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.tools.run_archive import main as archive_main

    (tmp_path / "file").write_text("x")
    _refused(
        archive_main, ["save", str(tmp_path / "missing"), str(tmp_path / "a")], "run_dir", capsys
    )
    _refused(archive_main, ["save", str(tmp_path), str(tmp_path / "file")], "archive", capsys)
    _refused(archive_main, ["restore", str(tmp_path), str(tmp_path / "file")], "run_dir", capsys)
