"""The ``torchrl:`` agent: plays the TorchRL recipe's files without TorchRL, refuses others.

Its files are made here with :func:`save_policy` (no training, no TorchRL);
tests/train/libraries/test_torchrl_ppo.py plays one the recipe trained.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agents import AgentSpecError, make_agent  # noqa: E402
from agents.learned.ppo_policy import PPO_FILES, PPOPolicy, save_policy  # noqa: E402
from agents.learned.torchrl_agent import TORCHRL_FILES  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_bad_files_are_refused_in_one_line_naming_the_file(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(b"PK\x03\x04 cut short")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    ppo_file = tmp_path / "ppo.pt"
    save_policy(ppo_file, PPOPolicy(8, 1), 3, PPO_FILES)
    text = tmp_path / "text.pt"
    text.write_text("not a policy")
    cases = [
        (tmp_path / "nowhere.pt", "not found"),
        (damaged, "TorchRL policy"),
        (foreign, r"not a policy saved by train\.libraries\.torchrl_ppo"),
        (ppo_file, r"not a policy saved by train\.libraries\.torchrl_ppo"),
        (text, "not a PyTorch file"),
    ]
    for path, problem in cases:
        with pytest.raises(AgentSpecError, match=problem) as refused:
            make_agent(f"torchrl:path={path}")
        message = str(refused.value)
        assert str(path) in message and "\n" not in message, message


@pytest.mark.slow
def test_a_saved_policy_plays_legal_moves_without_torchrl(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.pt"
    save_policy(policy_file, PPOPolicy(8, 1), 3, TORCHRL_FILES)
    script = (
        "import sys\n"
        "from agents import make_agent\n"
        "from yinsh_env.engine.state import State\n"
        f"agent = make_agent('torchrl:path={policy_file}', seed=0)\n"
        "state = State()\n"
        "for _ in range(12):\n"
        "    action = agent.act(state)\n"
        "    assert state.legal_mask()[action], action\n"
        "    state.apply(action)\n"
        "assert agent.rings_to_win == 3\n"
        "assert 'torchrl' not in sys.modules and 'tensordict' not in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
