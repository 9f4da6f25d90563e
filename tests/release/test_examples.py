"""The copyable examples under docs/examples/ run as documented: a tiny budget, end to end."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def load(name: str) -> ModuleType:
    """Import an example by path, as a researcher's copy would be run."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_ppo_vector_trains_with_legal_actions_and_finite_losses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # illegal_reward=None in the example: an illegal action would raise, not be scored.
    argv = ["--num-envs", "4", "--num-steps", "16", "--total-steps", "128", "--epochs", "1"]
    summary = load("ppo_vector").main(argv)
    assert summary["updates"] == 2 and summary["steps"] == 4 * 16 * 2
    assert summary["illegal"] == 0
    assert set(summary["losses"]) == {"policy", "value", "entropy"}
    assert all(math.isfinite(value) for value in summary["losses"].values())
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines] == ["1/2", "2/2"]


def test_the_defaults_train_as_the_arena_judges() -> None:
    from yinsh_env.envs.env_base import ARENA_OPENING_PLIES

    args = load("ppo_vector").Args()
    assert args.opening_plies == ARENA_OPENING_PLIES
    assert args.total_steps == 200_000  # the command docs/guide/environments.md shows
