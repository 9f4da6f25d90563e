"""Training configs: YAML files, dotted overrides, type checks and clear errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
import yaml

from train.config import (
    Config,
    ConfigError,
    SearchConfig,
    config_from_dict,
    load_config,
    save_config,
)
from train.preflight import check_runnable
from train.train_cli import main

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("name", ["quick.yaml", "default.yaml", "gpu.yaml"])
def test_shipped_configs_load(name: str) -> None:
    config = load_config(CONFIGS / name)
    assert config.iterations > 0 and config.network.blocks > 0


def test_overrides_are_typed_and_applied(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("iterations: 3\nsearch:\n  simulations: 8\n")
    config = load_config(
        path,
        [
            "search.simulations=32",
            "optim.lr=1e-3",
            "search.algorithm=puct",
            "replay.symmetries=false",
            "eval.opponents=[random]",
            "selfplay.temperature=[[0, 1.0], [10, 0.25]]",
        ],
    )
    assert config.iterations == 3
    assert config.search.simulations == 32 and config.search.algorithm == "puct"
    assert config.optim.lr == pytest.approx(1e-3) and isinstance(config.optim.lr, float)
    assert config.replay.symmetries is False
    assert config.eval.opponents == ["random"]
    assert config.selfplay.temperature == [(0, 1.0), (10, 0.25)]


def test_saved_config_reads_back_equal(tmp_path: Path) -> None:
    config = load_config(CONFIGS / "quick.yaml", ["seed=7"])
    save_config(config, tmp_path / "config.yaml")
    assert load_config(tmp_path / "config.yaml") == config
    assert Config() == load_config(_write(tmp_path, "{}\n"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ("iterationz: 3\n", [], "unknown key 'iterationz'"),
        ("search:\n  simulatons: 3\n", [], "unknown key 'search.simulatons'"),
        ("search:\n  simulations: many\n", [], "search.simulations must be an integer"),
        ("search:\n  algorithm: alphabeta\n", [], "search.algorithm must be one of"),
        ("search: 5\n", [], "search must be a section"),
        ("replay:\n  symmetries: 1\n", [], "replay.symmetries must be true or false"),
        ("optim:\n  lr: -1\n", [], "optim.lr must be positive"),
        ("selfplay:\n  full_search_prob: 2\n", [], "selfplay.full_search_prob must be in"),
        ("selfplay:\n  temperature: [[5, 1.0]]\n", [], "must start with a step at ply 0"),
        ("{}\n", ["search.simulatons=3"], "unknown key 'search.simulatons'"),
        ("{}\n", ["optim.lr=fast"], "optim.lr must be a number"),
        ("{}\n", ["seed"], "not of the form key.sub=value"),
        ("{}\n", ["seed.x=1"], "'seed' is not a section"),
        ("search: [\n", [], "is not valid YAML"),
        ("- 1\n- 2\n", [], "expected a mapping"),
        ("{}\n", ["seed=-1"], r"seed must be in \[0, 9223372036854775807\], got -1"),
        ("{}\n", ["optim.lr=nan"], "optim.lr must be a finite number"),
        ("optim:\n  grad_clip: .inf\n", [], "optim.grad_clip must be a finite number"),
        ("{}\n", ["threads=2.0"], "threads must be an integer"),
        ("{}\n", ["eval.opponents=['random:depth']"], r"eval.opponents\[0\] agent spec"),
        ("{}\n", ["eval.opponents=random"], "eval.opponents must be a list"),
        ("{}\n", ["device=tpu"], "device must be auto, cpu, cuda"),
        ("{}\n", ["amp=1"], "amp must be true, false or auto, got 1"),
        ("amp: Auto\n", [], "amp must be true, false or auto, got 'Auto'"),
        (
            "{}\n",
            ["replay.window=10"],
            r"replay.min_positions \(1000\) exceeds replay.window \(10\)",
        ),
        (
            "{}\n",
            ["selfplay.resign_threshold=-2"],
            r"selfplay.resign_threshold must be in \[-1, 1\]",
        ),
        ("{}\n", ["ray.address=nowhere"], "ray.address must be null"),
        ("{}\n", ["seed=1", "seed=2"], "override 'seed=2': 'seed' is already set by 'seed=1'"),
        ("{}\n", ["seed=1", " seed =1"], "'seed' is already set by 'seed=1'"),
        ("{}\n", ["search.simulations=3", "search={}"], "'search.simulations' is already set"),
        ("{}\n", ["search={}", "search.simulations=3"], "'search' is already set by 'search={}'"),
        ("", [], r"config file .*config.yaml holds no settings \(it is empty or only comments\)"),
        ("# only a comment\n", [], "holds no settings"),
        ("---\n...\n", ["seed=1"], "holds no settings"),
    ],
)
def test_broken_configs_name_the_problem(
    tmp_path: Path, text: str, overrides: list[str], message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=message):
        load_config(path, overrides)
    assert path.read_text() == text  # the file is left as it was


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.yaml")


def test_cli_reports_a_broken_config_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "network:\n  blockz: 2\n")
    run_dir = tmp_path / "run"
    assert main(["--config", str(path), "--run-dir", str(run_dir), "--no-progress"]) == 2
    assert "unknown key 'network.blockz'" in capsys.readouterr().err
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("text", "overrides", "line"),
    [
        (None, ["seed=1", "seed=2"], "override 'seed=2': 'seed' is already set by 'seed=1'"),
        ("", [], "config file {path} holds no settings"),
    ],
)
def test_cli_refuses_a_key_given_twice_and_an_empty_config_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str | None,
    overrides: list[str],
    line: str,
) -> None:
    def trains(*args: object, **kwargs: object) -> Path:  # the config was taken: no training
        return tmp_path / "trained.pt"

    monkeypatch.setattr("train.train_cli.run", trains)
    config = "quick" if text is None else str(_write(tmp_path, text))
    run_dir = tmp_path / "run"
    argv = ["--config", config, "--run-dir", str(run_dir), "--no-progress", *overrides]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("yinsh-train: error: " + line.format(path=config))
    assert err.count("\n") == 1
    assert not run_dir.exists()


def test_configs_saved_before_the_schema_still_load() -> None:
    saved = Path(__file__).resolve().parent.parent / "data" / "configs" / "long_run_saved.yaml"
    data = yaml.safe_load(saved.read_text())
    config = config_from_dict(data, source=str(saved))
    # Nothing lost, same types; keys added since take their defaults.
    added = {
        "inference": "auto",
        "inference_precision": "fp32",
        "cpu_minutes": 0,
        "init": {"weights": None, "cpu_s": None, "grow": False},
        "network": {**data["network"], "opponent_policy": False},
        "search": {**data["search"], "forced_playouts": 0.0},
        "optim": {**data["optim"], "search_value_weight": 0.0, "opponent_policy_weight": 0.0},
        "eval": {**data["eval"], "db": None},
    }
    assert config.to_dict() == {**data, **added}
    assert config.network.blocks == 3 and config.iterations == 250  # the first long run's


def test_sections_validate_on_construction_and_replace() -> None:
    search = SearchConfig(simulations=8)
    assert dataclasses.replace(search, algorithm="puct").algorithm == "puct"
    with pytest.raises(ValueError, match="simulations"):
        dataclasses.replace(search, simulations=0)
    with pytest.raises(ValueError, match="algorithm"):
        SearchConfig(algorithm="alphabeta")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("eval.opponents=[bogus]", r"eval.opponents\[0\]: unknown agent 'bogus'"),
        ("eval.opponents=[random, 'greedy:depht=2']", "unknown parameter 'depht'"),
        # Built, not only parsed: these failed mid-run, after iteration 0 was written.
        ("eval.opponents=['engine:cmd=no-such-program-x']", r"opponents\[0\].*program"),
        ("eval.opponents=[random, 'pretrained:weights=nosuch']", r"opponents\[1\].*no network"),
        ("eval.opponents=['net:path=/no/such.pt']", r"opponents\[0\].*does not exist"),
        ("device=cuda:7", "device: 'cuda:7' asked for"),
        ("inference=torch|inference_precision=int8", "inference_precision: int8 runs in ONNX"),
    ],
)
def test_what_only_the_machine_can_tell_is_checked_before_a_run(
    tmp_path: Path, override: str, message: str
) -> None:
    if override.startswith("device") and torch.cuda.device_count() > 7:
        pytest.skip("this machine has that CUDA device")
    config = load_config(_write(tmp_path, "{}\n"), override.split("|"))  # valid on its own
    with pytest.raises(ConfigError, match=message):
        check_runnable(config)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("seed=-1", "seed"),
        ("optim.lr=nan", "optim.lr"),
        ("eval.opponents=[bogus]", "eval.opponents[0]"),
        ("device=cuda", "device"),
    ],
)
def test_cli_rejects_bad_values_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, key: str
) -> None:
    if override == "device=cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run_dir = tmp_path / "run"
    argv = ["--config", str(_write(tmp_path, "{}\n")), "--run-dir", str(run_dir), "--no-progress"]
    assert main([*argv, override]) == 2
    err = capsys.readouterr().err
    assert err.startswith("yinsh-train: error: ") and key in err
    assert "Traceback" not in err
    assert not run_dir.exists()
