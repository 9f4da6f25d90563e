"""Tests of the baseline agents: tactics they must find, and their contracts."""

from __future__ import annotations

import random

import pytest
from helpers import position_text

from agents import AgentSpecError, make_agent
from agents.base import Agent
from agents.baselines.alphabeta import AlphaBetaAgent
from agents.baselines.greedy import GreedyAgent, best_turn_value
from agents.baselines.heuristics import WIN_SCORE, evaluate, mobility, threat_counts
from agents.baselines.mcts import MCTSAgent
from yinsh_env import Phase, Player, State, action_to_str
from yinsh_env.engine.geometry import SEGMENT_MASK
from yinsh_env.engine.state import PASS_ACTION


def position(
    pieces: dict[str, str],
    to_act: str = "w",
    phase: str = "move",
    mover: str = "-",
    removed: str = "0-0",
    pool: int | None = None,
) -> State:
    """A State from a map of point names to pieces (R r M m), via State.from_text."""
    markers = sum(1 for p in pieces.values() if p in "Mm")
    pool = 51 - markers if pool is None else pool
    return State.from_text(position_text(pieces, f"{to_act} {phase} {mover} {removed} {pool} 0 3"))


def play_turn(agent: Agent, state: State) -> list[str]:
    """Let ``agent`` make every decision of the player to act, until the turn passes."""
    player = state.to_act
    played = []
    while not state.is_terminal and state.to_act == player:
        action = agent.act(state)
        played.append(action_to_str(action))
        state.apply(action)
    return played


# White has removed two rings; moving its ring off E7 (anywhere but down the
# column, which would flip E3-E6) completes the row E3-E7, then a ring removal wins.
WIN_IN_ONE = {
    "E3": "M", "E4": "M", "E5": "M", "E6": "M",
    "E7": "R", "A2": "R", "K10": "R",
    "B1": "r", "C1": "r", "D1": "r", "G2": "r", "H3": "r",
}  # fmt: skip

# White resolves its own six-marker run E2-E7 (rows xE2-E6 or xE3-E7), then a
# ring.  Black, one ring short of winning, holds B7 C7 D7 F7: if White keeps
# E7, Black's ring E8 jumps it (E8-E6), flips it and wins.  Only xE3-E7 is safe.
ROW_CHOICE = {
    "E2": "M", "E3": "M", "E4": "M", "E5": "M", "E6": "M", "E7": "M",
    "B7": "m", "C7": "m", "D7": "m", "F7": "m",
    "A2": "R", "A5": "R", "K7": "R", "K10": "R",
    "E8": "r", "G11": "r", "H11": "r",
}  # fmt: skip


# White, one ring up on nothing, can make the row C8-G8 by moving its ring off E8.
# Moving it down the column (E8-E6) also flips E7 and so completes Black's row
# B7-F7: White takes its ring, then Black, one ring short, takes the game.
OPPONENT_ROW = {
    "C8": "M", "D8": "M", "F8": "M", "G8": "M", "E7": "M",
    "B7": "m", "C7": "m", "D7": "m", "F7": "m",
    "E8": "R", "A2": "R", "K7": "R", "K10": "R",
    "G11": "r", "H11": "r", "J11": "r",
}  # fmt: skip


def search_agents() -> list[Agent]:
    return [
        GreedyAgent(seed=1),
        AlphaBetaAgent(seed=1, depth=2),
        AlphaBetaAgent(seed=1, depth=1, time=60.0),  # a cap depth 1 never meets
        MCTSAgent(seed=1, sims=300),
        MCTSAgent(seed=1, sims=300, rollout_limit=0, eval_weight=0.0),  # plain UCT
    ]


@pytest.mark.parametrize("agent", search_agents(), ids=lambda a: type(a).__name__)
def test_every_search_agent_finds_a_win_in_one(agent: Agent) -> None:
    state = position(WIN_IN_ONE, removed="2-0")
    played = play_turn(agent, state)
    assert state.winner == Player.WHITE, played
    assert played[0].startswith("E7-") and played[0] != "E7-E2"
    assert played[1] == "xE3-E7"


def test_win_in_one_position_is_not_trivial() -> None:
    # The losing ring move exists, and most moves do not win at once.
    state = position(WIN_IN_ONE, removed="2-0")
    legal = state.legal_action_names()
    assert "E7-E2" in legal
    winning = [a for a in legal if a.startswith("E7-") and a != "E7-E2"]
    assert 0 < len(winning) < len(legal) / 2


def test_row_choice_position_punishes_the_wrong_row() -> None:
    state = position(ROW_CHOICE, phase="row", mover="w", removed="1-2")
    assert set(state.legal_action_names()) == {"xE2-E6", "xE3-E7"}
    state.apply_all(["xE2-E6", "xA2", "E8-E6"])
    assert state.to_act == Player.BLACK and state.legal_action_names() == ["xB7-F7"]
    state.apply_all(["xB7-F7", "xG11"])
    assert state.winner == Player.BLACK


@pytest.mark.slow
@pytest.mark.parametrize(
    "agent",
    [AlphaBetaAgent(seed=3, depth=1), AlphaBetaAgent(seed=3), MCTSAgent(seed=3, sims=1500)],
    ids=["alphabeta-d1", "alphabeta-default", "mcts"],
)
def test_consecutive_decisions_row_then_ring(agent: Agent) -> None:
    state = position(ROW_CHOICE, phase="row", mover="w", removed="1-2")
    played = play_turn(agent, state)
    assert played[0] == "xE3-E7", played
    assert len(played) == 2 and played[1].startswith("x")
    assert state.to_act == Player.BLACK and state.phase == Phase.MOVE
    assert "E8-E6" in state.legal_action_names()


def test_opponent_row_position_is_a_trap() -> None:
    state = position(OPPONENT_ROW, removed="1-2")
    state.apply_all(["E8-E6", "xC8-G8", "xA2"])
    assert state.to_act == Player.BLACK and state.legal_action_names() == ["xB7-F7"]
    state.apply_all(["xB7-F7", "xG11"])
    assert state.winner == Player.BLACK


@pytest.mark.slow
@pytest.mark.parametrize(
    "agent",
    [
        AlphaBetaAgent(seed=5, depth=1),
        AlphaBetaAgent(seed=5, depth=2),
        MCTSAgent(seed=5, sims=1500),
    ],
    ids=["alphabeta-d1", "alphabeta-d2", "mcts"],
)
def test_search_sees_the_opponents_row_removal(agent: Agent) -> None:
    state = position(OPPONENT_ROW, removed="1-2")
    played = play_turn(agent, state)
    assert played[0] != "E8-E6", played
    assert state.phase != Phase.OVER and state.to_act == Player.BLACK
    if isinstance(agent, AlphaBetaAgent):
        assert state.removed[Player.WHITE] == 2, played  # it also takes the safe row


def test_threat_counts_match_a_segment_scan() -> None:
    rng = random.Random(4)
    for _ in range(30):
        state = State()
        while not state.is_terminal and rng.random() > 0.01:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        for p in (Player.WHITE, Player.BLACK):
            markers, own, opp = state.markers[p], state.rings[p], state.rings[1 - p]
            expected = [0, 0, 0, 0]
            for seg in SEGMENT_MASK:
                count = (markers & seg).bit_count()
                if count == 5:
                    expected[0] += 1
                elif count == 4 and seg & ~markers & own:
                    expected[1] += 1
                elif count == 4 and not seg & opp:
                    expected[2] += 1
                elif count == 3 and not seg & opp:
                    expected[3] += 1
            assert threat_counts(markers, own, opp) == tuple(expected)
        if state.phase == Phase.MOVE:
            moves = [a for a in state.legal_actions() if a != PASS_ACTION]
            assert mobility(state, state.to_act) == len(moves)


def test_evaluation_is_antisymmetric_and_scores_wins() -> None:
    state = position(WIN_IN_ONE, removed="2-0")
    assert evaluate(state, Player.WHITE) == -evaluate(state, Player.BLACK) > 0
    state.apply_all(["E7-E9", "xE3-E7", "xA2"])
    assert evaluate(state, Player.WHITE) == WIN_SCORE == -evaluate(state, Player.BLACK)


def test_greedy_looks_through_its_own_follow_up_decisions() -> None:
    state = position(WIN_IN_ONE, removed="2-0")
    state.apply_all(["E7-E9"])  # White now owes a row and a ring removal
    assert best_turn_value(state, Player.WHITE) == WIN_SCORE
    assert state.legal_action_names() == ["xE3-E7"]  # restored


@pytest.mark.parametrize(
    "spec",
    [
        "greedy",
        "greedy:noise=5",
        "alphabeta:depth=1",
        "alphabeta:time=0.05",
        "mcts:sims=20",
        "mcts:sims=20,rollout_limit=0,eval_weight=0",
    ],
)
def test_specs_build_seeded_agents_that_play_legal_games(spec: str) -> None:
    moves = []
    for _ in range(2):
        agent = make_agent(spec, seed=9)
        state = State()
        for _ in range(14):  # placements and the first moves
            action = agent.act(state)
            assert action in state.legal_actions()
            state.apply(action)
        moves.append(state.actions)
    if "time" not in spec:
        assert moves[0] == moves[1]  # same seed, same game


def test_budgets_and_bad_parameters() -> None:
    state = position(WIN_IN_ONE, removed="2-0")
    mcts = MCTSAgent(seed=0, sims=5000)
    mcts.act_with_budget(state, sims=50)
    assert mcts.sims == 5000 and mcts.last_sims <= 50
    ab = AlphaBetaAgent(seed=0, depth=3)
    assert ab.act_with_budget(state.copy(), time=0.5) in state.legal_actions()
    for bad in (
        "alphabeta:depth=0",
        "mcts:sims=0",
        "greedy:noise=-1",
        "mcts:c=-1",
        "mcts:eval_weight=2",
    ):
        with pytest.raises(AgentSpecError):
            make_agent(bad)


def test_mcts_backs_up_each_players_own_result() -> None:
    # Every rollout is a White win: then each edge must hold its chooser's
    # result (+1 for White's decisions, -1 for Black's), also where White
    # decides several times in a row (move, row, ring) - an alternating
    # back-up would credit those with Black's result.
    agent = MCTSAgent(seed=0, sims=300, eval_weight=0.0)
    agent.evaluator.rollout = lambda state: 1.0  # type: ignore[method-assign]
    root = agent.search(position(WIN_IN_ONE)).root
    assert root is not None
    consecutive = black_nodes = 0
    stack = [root]
    while stack:
        node = stack.pop()
        for i, child in enumerate(node.children):
            if child is None:
                continue
            expected = 1.0 if node.player == Player.WHITE else -1.0
            assert node.value_sum[i] == expected * node.visits[i]
            consecutive += child.player == node.player == Player.WHITE and not child.terminal
            black_nodes += child.player == Player.BLACK
            stack.append(child)
    assert consecutive > 0 and black_nodes > 0
