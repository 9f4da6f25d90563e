"""Searching on a clock: ``time=SECONDS`` for the network agent, planned from the measured rate.

A fake clock (advanced by a fixed step at every reading) makes these tests
independent of the machine's speed; one real-clock test has a generous bound.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import random_game

from agents import AgentSpecError, make_agent
from agents.network.agent import NetAgent
from agents.protocol.line_protocol import EngineSession
from agents.search.budget import MAX_PLANNED, SimulationRate
from yinsh_env import Phase, State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


class FakeClock:
    """Seconds that advance by ``step`` at every reading."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 100.0
        self.readings = 0

    def __call__(self) -> float:
        self.now += self.step
        self.readings += 1
        return self.now


def ring_move_position(seed: int = 5) -> State:
    for offset in range(50):
        state = random_game(seed + offset, stop=30)
        if state.phase == Phase.MOVE and len(state.legal_actions()) > 4:
            return state
    raise AssertionError("no ring-move position")


def timed_agent(run_dir: Path, seconds: float, clock: FakeClock) -> NetAgent:
    agent = make_agent(f"net:path={run_dir},time={seconds}", seed=0)
    assert isinstance(agent, NetAgent) and agent.time_budget == seconds
    agent.clock = clock
    return agent


def test_a_timed_search_stops_at_its_deadline_and_plans_from_the_measured_rate(
    tiny_run_dir: Path,
) -> None:
    state = ring_move_position()
    clock = FakeClock(step=0.005)  # every reading costs 5 ms: a slow machine
    agent = timed_agent(tiny_run_dir, 0.1, clock)
    first_plan = agent.rate.plan(0.1 * 0.95)
    action = agent.act(state.copy())
    assert action in state.legal_actions()
    # The deadline (95 ms) ended the search after about 19 readings, long before
    # the plan from the first guess of the rate.
    assert 1 <= agent.last_sims < first_plan
    assert agent.rate.measured == 1 and agent.rate.rate < 1000.0
    planned = agent.rate.plan(0.1 * 0.95)
    assert planned < first_plan
    # Measured and planned agree from then on: the next search ends by its plan
    # or its deadline, within a few simulations of either.
    agent.act(state.copy())
    assert abs(agent.last_sims - planned) <= 3


def test_a_timed_search_that_finishes_its_plan_stops_there(tiny_run_dir: Path) -> None:
    clock = FakeClock(step=1e-6)  # a fast machine: the plan ends before the deadline
    agent = timed_agent(tiny_run_dir, 0.01, clock)
    agent.rate = SimulationRate(guess=500.0)
    state = ring_move_position()
    assert agent.act(state.copy()) in state.legal_actions()
    assert agent.last_sims == 4  # 500/s x 9.5 ms
    assert agent.rate.rate > 500.0  # faster than guessed: the next plan is larger


def test_the_protocols_go_time_searches_on_the_clock(tiny_run_dir: Path) -> None:
    agent = make_agent(f"net:path={tiny_run_dir},sims=200", seed=0)
    assert isinstance(agent, NetAgent)
    clock = FakeClock(step=0.01)
    agent.clock = clock
    state = ring_move_position()
    assert agent.act_with_budget(state.copy(), time=0.05) in state.legal_actions()
    assert 1 <= agent.last_sims <= 5  # 50 ms at 10 ms a reading, not 200 simulations
    agent.act_with_budget(state.copy(), sims=7)
    assert agent.last_sims == 7  # simulations stay what they were
    session = EngineSession(agent)
    assert session.handle("new").startswith("ok")
    readings = clock.readings
    assert session.handle("go time=0.05").startswith("action ")
    assert clock.readings > readings  # the search read its clock


def test_a_real_clock_bounds_a_decision_generously(tiny_run_dir: Path) -> None:
    agent = make_agent(f"net:path={tiny_run_dir},time=0.05", seed=0)
    state = ring_move_position()
    start = time.perf_counter()
    action = agent.act(state.copy())
    assert action in state.legal_actions()
    assert time.perf_counter() - start < 10.0  # 0.05 s asked; any machine, however loaded


@pytest.mark.slow
def test_pretrained_takes_a_time_and_refuses_a_bad_one() -> None:
    agent = make_agent("pretrained:time=0.1")
    assert isinstance(agent, NetAgent) and agent.time_budget == 0.1
    for bad in ("-1", "inf", "nan"):
        with pytest.raises(AgentSpecError, match="time"):
            make_agent(f"pretrained:time={bad}")


def test_the_simulation_rate_averages_and_bounds_its_plans() -> None:
    rate = SimulationRate(guess=100.0, weight=0.5)
    assert rate.plan(0.5) == 50 and rate.plan(0.0) == 1
    rate.record(300, 1.0)
    assert rate.rate == 300.0  # the first measurement replaces the guess
    rate.record(100, 1.0)
    assert rate.rate == 200.0
    rate.record(0, 1.0)
    rate.record(5, 0.0)
    assert rate.rate == 200.0 and rate.measured == 2  # nothing measured: nothing changes
    assert rate.plan(1e9) == MAX_PLANNED
    for guess, weight in ((0.0, 0.5), (10.0, 0.0), (10.0, 1.5)):
        with pytest.raises(ValueError, match="rate"):
            SimulationRate(guess, weight)
