"""Recipes as files: ``--recipe FILE`` sets a library script's defaults, flags override them,
and anything the command line would refuse is refused naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.config import ConfigError
from train.config_files import config_names, resolve_config
from train.libraries import ppo

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def recipe(tmp_path: Path, body: str, script: str = "train.libraries.ppo") -> str:
    path = tmp_path / "r.yaml"
    path.write_text(f"recipe: {script}\n{body}")
    return str(path)


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        ppo.parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    return err[-1]


def test_the_ppo_recipe_is_the_documented_command_and_flags_override_it() -> None:
    args = ppo.parse_args(["--recipe", str(CONFIGS / "ppo.yaml"), "--seed", "4"])
    command = (
        "--cpu-minutes 30 --minutes 170 --threads 1 --seed 4 --channels 16 --blocks 2 "
        "--opponents random greedy:noise=500 greedy:noise=100 greedy "
        "--opponent-weights 0.1 0.2 0.2 0.5 --adaptive false --self-share 0.2 "
        "--dense-reward 0.5 --threat-reward 0.05 --learning-rate 1e-3 --ent-coef 0.005 "
        "--update-epochs 3 --check-every 300 --check-games 40 --final-check-games 40 "
        "--opening-plies 4"
    )
    assert args == ppo.parse_args(command.split())
    override = ppo.parse_args(
        [str(a) for a in ("--recipe", CONFIGS / "ppo.yaml", "--learning-rate", "2e-3")]
        + ["--opponents", "random", "--opponent-weights", "1"]
    )
    assert override.learning_rate == 2e-3 and override.opponents == ("random",)
    assert override.ent_coef == 0.005  # the rest still the recipe's


def test_keys_may_be_written_with_dashes(tmp_path: Path) -> None:
    args = ppo.parse_args(["--recipe", recipe(tmp_path, "learning-rate: 0.002\n")])
    assert args.learning_rate == 0.002


@pytest.mark.parametrize(
    ("body", "key", "problem"),
    [
        ("learning_rat: 0.1\n", "learning_rat", "unknown key"),
        ("seed: 1\nseed: 2\n", "seed", "twice"),
        ("seed: 1\nseed_: 2\n", "seed_", "unknown key"),
        ("seed: 1\n'seed': 2\n", "seed", "twice"),
        ("learning_rate: 1\nlearning-rate: 2\n", "learning-rate", "twice"),
        ("learning_rate: 5\n", "learning_rate", "(0, 1]"),
        ("num_envs: [1, 2]\n", "num_envs", "one value"),
        ("adaptive: maybe\n", "adaptive", "true or false"),
        ("opponents: [nosuchagent]\n", "opponents", "nosuchagent"),
        ("seed: null\n", "seed", "null"),
    ],
)
def test_bad_recipes_are_refused_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, key: str, problem: str
) -> None:
    line = refused(["--recipe", recipe(tmp_path, body)], capsys)
    assert repr(key) in line and problem in line and "r.yaml" in line


def test_a_recipe_for_another_script_or_none_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(
        ["--recipe", recipe(tmp_path, "lr: 0.1\n", "train.libraries.rllib_example")], capsys
    )
    assert "train.libraries.rllib_example" in line and "not 'train.libraries.ppo'" in line
    bare = tmp_path / "bare.yaml"
    bare.write_text("seed: 1\n")
    assert "no 'recipe:' key" in refused(["--recipe", str(bare)], capsys)
    assert "not found" in refused(["--recipe", str(tmp_path / "missing.yaml")], capsys)
    (tmp_path / "list.yaml").write_text("- 1\n")
    assert "not a mapping" in refused(["--recipe", str(tmp_path / "list.yaml")], capsys)
    (tmp_path / "alias.yaml").write_text("recipe: train.libraries.ppo\na: &x 1\nb: *x\n")
    assert "aliases" in refused(["--recipe", str(tmp_path / "alias.yaml")], capsys)


def test_an_abbreviated_recipe_option_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "in full" in refused(["--recip", recipe(tmp_path, "seed: 3\n")], capsys)


def test_recipes_are_not_trainer_configs() -> None:
    assert not {"ppo", "sb3", "rllib", "torchrl"} & set(config_names())
    with pytest.raises(ConfigError, match=r"recipe of train\.libraries\.ppo"):
        resolve_config("ppo")


def test_the_sb3_recipe_sets_its_scripts_options() -> None:
    pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
    from train.libraries import sb3_maskable_ppo as sb3

    args = sb3.parse_args(["--recipe", str(CONFIGS / "sb3.yaml"), "--seed", "4"])
    assert args.opponent == ["random", "greedy:noise=500", "greedy:noise=100", "greedy"]
    assert (args.gamma, args.vf_coef, args.dense_reward, args.lr) == (0.99, 0.25, 0.5, 1e-3)
    assert args.opponent_weights == [0.1, 0.2, 0.2, 0.5] and args.pool_strategy == "weighted"
    assert (args.threat_reward, args.opening_plies, args.anneal_lr) == (0.05, 4, True)
    assert args.seed == 4 and args.self_play is True and args.self_share == 0.2


def test_the_torchrl_recipe_is_the_single_file_ppos() -> None:
    """One recipe, two implementations: every setting of configs/ppo.yaml but where
    the outputs go is configs/torchrl.yaml's."""
    pytest.importorskip("torchrl", reason="optional extra: pip install -e '.[torchrl]'")
    from train.libraries import torchrl_ppo

    ours = torchrl_ppo.parse_args(["--recipe", str(CONFIGS / "torchrl.yaml"), "--seed", "4"])
    theirs = ppo.parse_args(["--recipe", str(CONFIGS / "ppo.yaml"), "--seed", "4"])
    mine, other = vars(ours), vars(theirs)
    assert {k: v for k, v in mine.items() if k not in ("save", "logdir")} == {
        k: v for k, v in other.items() if k not in ("save", "logdir")
    }


def test_the_rllib_recipe_sets_its_scripts_options() -> None:
    pytest.importorskip("ray.rllib", reason="optional extra: pip install -e '.[rllib]'")
    from train.libraries import rllib_example as rllib

    parser = rllib.build_parser()
    args = rllib.parse_args(parser, ["--recipe", str(CONFIGS / "rllib.yaml"), "--lr", "2e-3"])
    assert args.league_opponents == ["random", "greedy:noise=500", "greedy:noise=100", "greedy"]
    assert (args.lr, args.entropy, args.epochs) == (2e-3, 0.005, 3)
    assert (args.gamma, args.opening_plies) == (0.99, 4)
    assert (args.anneal_lr, args.env, args.envs, args.snapshots) == (True, "vector", 64, 8)
    args = rllib.parse_args(parser, ["--recipe", str(CONFIGS / "rllib.yaml"), "--anneal-lr", "no"])
    assert args.anneal_lr is False


def test_a_shipped_recipe_is_found_by_name_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    by_name = ppo.parse_args(["--recipe", "ppo", "--seed", "4"])
    by_path = ppo.parse_args(["--recipe", str(CONFIGS / "ppo.yaml"), "--seed", "4"])
    assert vars(by_name) == vars(by_path) and by_name.opening_plies == 4
    (tmp_path / "ppo.yaml").write_text("recipe: train.libraries.ppo\nseed: 9\n")
    assert ppo.parse_args(["--recipe", "ppo.yaml"]).seed == 9  # a file here comes first
    assert "not found" in refused(["--recipe", "nosuchrecipe"], capsys)
    assert "is for 'train.libraries.sb3_maskable_ppo'" in refused(["--recipe", "sb3"], capsys)
