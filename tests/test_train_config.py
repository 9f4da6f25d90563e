"""Training configs: YAML files, dotted overrides, type checks and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.cli import main
from train.config import Config, ConfigError, load_config, save_config

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


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
    assert Config() == load_config(_write(tmp_path, ""))


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
        ("", ["search.simulatons=3"], "unknown key 'search.simulatons'"),
        ("", ["optim.lr=fast"], "optim.lr must be a number"),
        ("", ["seed"], "not of the form key.sub=value"),
        ("", ["seed.x=1"], "'seed' is not a section"),
        ("search: [\n", [], "is not valid YAML"),
        ("- 1\n- 2\n", [], "expected a mapping"),
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
