"""The network agent ``net:path=...``: loading checkpoints, legal play, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agents import AgentSpecError, make_agent
from agents.evaluation.arena import MatchSettings, run_arena
from agents.evaluation.match import VariantMismatchError
from train.run_checkpoint import checkpoint_path
from yinsh_env import State


@pytest.fixture(scope="module")
def run_dir(tiny_run_dir: Path) -> Path:
    return tiny_run_dir


def play_out(spec: str, seed: int = 0) -> State:
    """A whole game of ``spec`` (White) against random; State.apply checks every move."""
    net = make_agent(spec, seed=seed)
    other = make_agent("random", seed=seed)
    state = State()
    while not state.is_terminal:
        agent = net if state.to_act == 0 else other
        before = state.to_text()
        action = agent.act(state)
        assert state.to_text() == before  # the agent leaves the position alone
        state.apply(action)
    return state


@pytest.mark.parametrize("sims", [0, 3])
def test_net_agent_plays_legal_games_from_a_run_directory(run_dir: Path, sims: int) -> None:
    final = play_out(f"net:path={run_dir},sims={sims}")
    assert final.is_terminal and final.result in ("W", "B", "draw")
    agent = make_agent(f"net:path={run_dir},sims={sims}")
    assert agent.checkpoint == checkpoint_path(run_dir, 1)  # type: ignore[attr-defined]


def test_net_agent_loads_a_checkpoint_file(run_dir: Path) -> None:
    agent = make_agent(f"net:path={checkpoint_path(run_dir, 0)}", seed=3)
    state = State()
    policy = agent.policy(state)  # type: ignore[attr-defined]
    assert set(policy) == set(state.legal_actions())
    assert sum(policy.values()) == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= agent.value(state) <= 1.0  # type: ignore[attr-defined]
    assert agent.act(state) == max(policy, key=policy.__getitem__)


def test_net_agent_in_the_arena(run_dir: Path) -> None:
    result = run_arena([f"net:path={run_dir},sims=0", "random"], games=2, progress=False)
    assert result.pairings[0].games == 2


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("net", "needs path="),
        ("net:path=/no/such/run", "does not exist"),
        ("net:path=RUN,sims=-1", "sims must be >= 0"),
        ("net:path=RUN,simz=2", "unknown parameter 'simz'"),
    ],
)
def test_bad_net_specs_fail_when_built(run_dir: Path, spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec.replace("RUN", str(run_dir)))


def test_an_empty_run_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentSpecError, match="holds no checkpoint"):
        make_agent(f"net:path={tmp_path}")
    with pytest.raises(ValueError, match="holds no checkpoint"):
        run_arena([f"net:path={tmp_path}", "random"], games=2, progress=False)


def test_net_agent_takes_the_protocol_budget(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents.network.agent

    agent = make_agent(f"net:path={run_dir},sims=3", seed=1)
    state = State()
    policy = agent.policy(state)  # type: ignore[attr-defined]
    assert agent.act_with_budget(state, sims=0) == max(policy, key=policy.__getitem__)
    budgets: list[int] = []
    real = agents.network.agent.run_searches

    def spy(searches, evaluator):  # type: ignore[no-untyped-def]
        budgets.extend(s.simulations for s in searches)
        return real(searches, evaluator)

    monkeypatch.setattr(agents.network.agent, "run_searches", spy)
    assert agent.act_with_budget(state, sims=5) in state.legal_actions()
    assert agent.act(state) in state.legal_actions()
    assert budgets == [5, 3]


def test_a_network_knows_its_variant_and_the_arena_refuses_the_other(
    run_dir: Path, tmp_path: Path
) -> None:
    standard = make_agent(f"net:path={run_dir}")
    assert standard.rings_to_win == 3
    data = torch.load(checkpoint_path(run_dir, 1), weights_only=True)
    data["config"]["selfplay"]["rings_to_win"] = 1  # as a Blitz run writes it
    torch.save(data, tmp_path / "blitz.pt")
    spec = f"net:path={tmp_path / 'blitz.pt'}"
    assert make_agent(spec).rings_to_win == 1
    with pytest.raises(VariantMismatchError, match=r"trained for Blitz \(rings_to_win=1\)"):
        run_arena([spec, "random"], games=2, progress=False)
    blitz = run_arena([spec, "random"], 2, MatchSettings(rings_to_win=1), progress=False)
    assert blitz.pairings[0].games == 2
