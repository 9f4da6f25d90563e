"""The one match loop: a game is PettingZoo's agent_iter loop; variants are checked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents import make_agent, register_agent
from agents.base import Agent, RandomAgent
from agents.evaluation.arena import GameTask, MatchSettings, make_openings, play_game, run_arena
from agents.evaluation.match import VariantMismatchError, check_variant, play_match
from agents.play.play_cli import main as play_main
from agents.spec import unregister_agent
from yinsh_env import Result, State, Termination, env
from yinsh_env.envs.env_base import AGENT_INDEX
from yinsh_env.envs.observation import decode


class BlitzOnly(RandomAgent):
    """An agent that was made for Blitz (as a network trained on Blitz is)."""

    rings_to_win = 1


class Watching(Agent):
    """Plays like ``inner`` and keeps every position it was asked about."""

    def __init__(self, inner: Agent) -> None:
        super().__init__()
        self.inner = inner
        self.seen: list[State] = []

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, state: State) -> int:
        self.seen.append(state.copy())
        return self.inner.act(state)


def env_user_game(agents: tuple[Agent, Agent], opening: tuple[int, ...], seed: int) -> list[int]:
    """The loop an RL user writes: agents decide on the observation alone."""
    agents[0].reset(seed=seed)
    agents[1].reset(seed=seed ^ 0x5EED)
    e = env()
    e.reset(options={"actions": list(opening)})
    for name in e.agent_iter():
        observation, _, termination, truncation, _ = e.last()
        action = None
        if not (termination or truncation):
            assert observation is not None
            action = agents[AGENT_INDEX[name]].act_observation(observation)
        e.step(action)
    return list(e.unwrapped.game.actions)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("white", "black"), [("greedy", "mcts:sims=20"), ("random", "greedy")])
def test_an_arena_game_is_the_loop_any_env_user_runs(white: str, black: str) -> None:
    opening = make_openings(1, 4, seed=5)[0]
    task = GameTask(0, 0, 0, 1, opening, seed=77)
    arena = play_game(make_agent(white), make_agent(black), task)
    user = env_user_game((make_agent(white), make_agent(black)), opening, seed=77)
    assert arena.actions == user and len(user) > len(opening)
    final = State().apply_all(user)
    assert final.is_terminal and arena.result == final.result


def test_agents_see_the_exact_position_the_env_observes() -> None:
    watchers = (Watching(make_agent("greedy")), Watching(make_agent("random")))
    match = play_match(watchers)
    replay = State()
    positions = iter(watchers[0].seen + watchers[1].seen)
    assert len(watchers[0].seen) + len(watchers[1].seen) == len(match.state.actions)
    by_ply = {s.ply: s for s in positions}
    for ply, action in enumerate(match.state.actions):
        assert by_ply[ply] == replay == decode(_observe(replay))
        replay.apply(action)
    assert match.returns == replay.returns() and match.result == replay.result
    assert match.termination == replay.end_reason and match.termination.by_rules


def _observe(state: State) -> object:
    e = env()
    e.reset(options={"state": state})
    return e.observe(e.agent_selection)["observation"]


def test_a_forfeit_scores_the_opponent_and_stops_the_env_loop() -> None:
    class Crashing(RandomAgent):
        def act(self, state: State) -> int:
            if state.ply >= 6:
                raise RuntimeError("boom")
            return super().act(state)

    match = play_match((RandomAgent(seed=0), Crashing(seed=0)))
    assert match.termination is Termination.FORFEIT and match.forfeiter == 1
    assert match.result is Result.WHITE_WINS and match.returns == (1.0, -1.0)
    assert "crashed: RuntimeError: boom" in match.reason and match.state.ply == 7


def test_variant_mismatch_is_refused_with_a_clear_error() -> None:
    blitz = BlitzOnly()
    check_variant(blitz, 1)  # its own variant plays
    with pytest.raises(VariantMismatchError, match=r"trained for Blitz \(rings_to_win=1\)"):
        check_variant(blitz, 3)
    with pytest.raises(VariantMismatchError, match="cannot play standard"):
        play_match((RandomAgent(), blitz))
    assert play_match((RandomAgent(seed=1), blitz), rings_to_win=1).state.rings_to_win == 1


@pytest.fixture
def blitz_only_registered() -> Iterator[None]:
    register_agent("blitzonly", BlitzOnly)
    yield
    unregister_agent("blitzonly")


@pytest.mark.usefixtures("blitz_only_registered")
def test_arena_and_play_refuse_a_mismatch_before_any_game(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(VariantMismatchError, match="blitzonly"):
        run_arena(["blitzonly", "random"], games=2, progress=False)
    result = run_arena(["blitzonly", "random"], 2, MatchSettings(rings_to_win=1), progress=False)
    assert result.pairings[0].games == 2
    with pytest.raises(SystemExit) as exit_info:
        play_main(["blitzonly", "random", "--seed", "1", "--quiet"])
    assert exit_info.value.code == 2
    assert "trained for Blitz" in capsys.readouterr().err
