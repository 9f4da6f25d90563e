"""Tests of the arena: colours, openings, counting, forfeits, records, JSON, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents import AgentSpecError, register_agent
from agents.base import Agent, AgentFailure
from agents.evaluation.arena import (
    GameResult,
    GameTask,
    MatchSettings,
    make_openings,
    make_tasks,
    plot_elo,
    run_arena,
    summarise,
)
from agents.evaluation.eval_cli import main as eval_main
from yinsh_env import PASS_ACTION, State
from yinsh_env.records.formats import load_record


class FailingAgent(Agent):
    """Gives up at its first decision, as a crashed external engine would."""

    def act(self, state: State) -> int:
        raise AgentFailure("engine exited with status 1")


class IllegalAgent(Agent):
    """Answers with an action that is never legal in a fresh game (a pass)."""

    def act(self, state: State) -> int:
        return PASS_ACTION if state.phase == 0 else state.legal_actions()[0]


class BuggyAgent(Agent):
    """Crashes with an ordinary exception after a few decisions."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.calls = 0

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.calls = 0

    def act(self, state: State) -> int:
        self.calls += 1
        if self.calls > 3:
            raise KeyError("bug")
        return state.legal_actions()[0]


class FirstMoveAgent(Agent):
    """Deterministic: always the first legal action."""

    def act(self, state: State) -> int:
        return state.legal_actions()[0]


register_agent("test-failing", FailingAgent)
register_agent("test-illegal", IllegalAgent)
register_agent("test-buggy", BuggyAgent)
register_agent("test-first", FirstMoveAgent)


def test_colours_alternate_and_openings_repeat_with_swapped_colours() -> None:
    openings = make_openings(3, plies=4, seed=7)
    assert len(set(openings)) == 3 and all(len(o) == 4 for o in openings)
    tasks = make_tasks(3, 6, openings, seed=7)
    assert len(tasks) == 3 * 6
    for pairing, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        games = [t for t in tasks if t.pairing == pairing]
        assert [(t.white, t.black) for t in games] == [(a, b), (b, a)] * 3
        assert [t.opening for t in games] == [o for o in openings for _ in range(2)]
    assert len({t.seed for t in tasks}) == len(tasks)


def test_openings_are_seeded() -> None:
    assert make_openings(4, 6, seed=1) == make_openings(4, 6, seed=1)
    assert make_openings(4, 6, seed=1) != make_openings(4, 6, seed=2)
    with pytest.raises(ValueError):
        make_openings(1, 11, seed=0)


def test_match_counts_results_and_replays_records(tmp_path: Path) -> None:
    result = run_arena(
        ["greedy", "random"], 4, MatchSettings(seed=3), records_dir=tmp_path, progress=False
    )
    (pairing,) = result.pairings
    assert pairing.games == 4
    assert pairing.wins + pairing.draws + pairing.losses == 4
    assert pairing.score == (pairing.wins + 0.5 * pairing.draws) / 4
    # Count again from the game list, by colour.
    wins = sum(g.score_of(0) for g in result.games)
    assert wins == pairing.wins + 0.5 * pairing.draws
    assert [g.task.white for g in result.games] == [0, 1, 0, 1]
    records = sorted(tmp_path.glob("*.yinsh"))
    assert len(records) == 4
    for game, path in zip(result.games, records):
        record = load_record(path)
        assert record.white == result.agents[game.task.white]
        assert record.result == game.result and record.termination == game.termination
        replayed = record.replay()
        assert replayed.result == game.result and replayed.ply == len(game.actions)
    times = {t.agent: t for t in result.times}
    assert times["greedy"].decisions > 0 and times["greedy"].per_move > 0


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("test-failing", "agent failure: engine exited with status 1"),
        ("test-illegal", "illegal action pass"),
        ("test-buggy", "crashed: KeyError"),
    ],
)
def test_misbehaving_agents_forfeit(bad: str, reason: str, tmp_path: Path) -> None:
    result = run_arena(["test-first", bad], games=2, records_dir=tmp_path, progress=False)
    (pairing,) = result.pairings
    assert (pairing.wins, pairing.draws, pairing.losses) == (2, 0, 0)
    assert pairing.b_forfeits == 2 and pairing.a_forfeits == 0
    for game in result.games:
        assert game.termination == "forfeit" and game.forfeiter == 1
        assert game.reason.startswith(reason)
    forfeits = result.to_json()["forfeits"]
    assert len(forfeits) == 2 and forfeits[0]["agent"] == bad
    for path in sorted(tmp_path.glob("*.yinsh")):
        record = load_record(path)
        assert record.termination == "forfeit"
        assert record.tags["reason"].startswith(reason)
        record.replay()  # the moves before the forfeit are legal


def test_move_time_limit_forfeits_a_slow_agent() -> None:
    # The slow agent has White, so it decides first after the opening's placements:
    # the limit can stop only it, however long a busy machine takes over anything.
    result = run_arena(
        ["mcts:sims=1000000", "random"], 1, MatchSettings(move_time_limit=0.2), progress=False
    )
    (game,) = result.games
    assert (game.task.white, game.task.black) == (0, 1)
    assert game.termination == "timeout" and game.forfeiter == 0
    assert result.pairings[0].losses == 1


def test_bad_specs_fail_before_any_game() -> None:
    played: list[GameResult] = []
    with pytest.raises(AgentSpecError, match="unknown agent"):
        run_arena(["random", "nope"], games=2, progress=False, on_game=played.append)
    with pytest.raises(AgentSpecError, match="depth"):
        run_arena(["random", "alphabeta:depth=x"], games=2, progress=False)
    with pytest.raises(ValueError):
        run_arena(["random"], games=2, progress=False)
    assert played == []


def test_json_schema_and_round_robin(tmp_path: Path) -> None:
    result = run_arena(["random", "test-first", "random"], games=2, progress=False)
    data = json.loads(json.dumps(result.to_json()))
    assert data["agents"] == ["random", "test-first", "random#2"]
    assert len(data["pairings"]) == 3
    for p in data["pairings"]:
        assert set(p) >= {"a", "b", "games", "a_wins", "draws", "b_wins", "a_score"}
        assert p["games"] == 2 == p["a_wins"] + p["draws"] + p["b_wins"]
        lo, hi = p["a_score_ci95"]
        assert 0 <= lo <= p["a_score"] <= hi <= 1
    assert [e["agent"] for e in data["elo"]] == data["agents"]
    assert data["elo"][0]["elo"] == 0 and data["elo"][0]["ci95"] == [0, 0]
    for e in data["elo"]:
        assert e["ci95"][0] <= e["elo"] <= e["ci95"][1]
    assert {t["agent"] for t in data["time_per_move"]} == set(data["agents"])


@pytest.mark.slow
def test_parallel_workers_match_the_serial_run() -> None:
    serial = run_arena(["greedy", "random"], 4, MatchSettings(seed=5), progress=False)
    parallel = run_arena(["greedy", "random"], 4, MatchSettings(seed=5, workers=2), progress=False)
    assert [g.actions for g in serial.games] == [g.actions for g in parallel.games]
    assert serial.pairings[0].to_json() == parallel.pairings[0].to_json()


def test_summarise_counts_by_pairing_and_colour() -> None:
    def game(index: int, pairing: int, white: int, black: int, result: str) -> GameResult:
        task = GameTask(index, pairing, white, black, (), index)
        return GameResult(task, result, "rings", [], ((1.0, 2), (3.0, 4)))

    games = [
        game(0, 0, 0, 1, "W"),  # a wins as White
        game(1, 0, 1, 0, "W"),  # b wins as White
        game(2, 0, 0, 1, "draw"),
        game(3, 0, 1, 0, "B"),  # a wins as Black
    ]
    result = summarise(["a", "b"], games)
    p = result.pairings[0]
    assert (p.wins, p.draws, p.losses, p.games) == (2, 1, 1, 4)
    assert p.score == 2.5 / 4
    assert result.times[0].seconds == 1.0 + 3.0 + 1.0 + 3.0
    assert result.times[0].decisions == 2 + 4 + 2 + 4


def test_a_side_with_no_point_is_shown_by_a_one_sided_bound() -> None:
    games = [
        GameResult(
            GameTask(i, 0, i % 2, 1 - i % 2, (), i),
            "W" if i % 2 == 0 else "B",
            "rings",
            [],
            ((0.0, 1), (0.0, 1)),
        )
        for i in range(20)
    ]  # "a" wins all 20, with either colour
    result = summarise(["a", "b"], games)
    b = result.elo[1]
    assert b.bound is not None and b.bound[0] == "<"
    row = next(line for line in result.report().splitlines() if line.startswith("b "))
    assert f"< {b.bound[1]:.0f}" in row and "one-sided 95%" in row
    assert f"{b.elo:.0f} " not in row and "[" not in row
    assert result.to_json()["elo"][1]["bound"] == ["<", round(b.bound[1], 1)]


def test_cli_writes_json_and_reports_bad_specs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    code = eval_main(["random", "test-first", "--games", "2", "--json", str(out), "--no-progress"])
    assert code == 0
    assert json.loads(out.read_text())["pairings"][0]["games"] == 2
    assert "Elo" in capsys.readouterr().out
    assert eval_main(["random", "nope", "--games", "2", "--no-progress"]) == 2
    assert "unknown agent 'nope'" in capsys.readouterr().err


def test_plot_is_written_or_skipped_without_matplotlib(tmp_path: Path) -> None:
    result = run_arena(["random", "test-first"], games=2, progress=False)
    path = tmp_path / "elo.png"
    try:
        import matplotlib  # noqa: F401

        available = True
    except ImportError:
        available = False
    assert plot_elo(result, path) is available
    assert path.exists() is available


def test_a_link_planted_in_the_records_folder_is_never_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n")
    games = tmp_path / "games"
    games.mkdir()
    (games / "game-00000.yinsh").symlink_to(elsewhere)
    argv = ["random", "test-first", "--games", "2", "--records", str(games), "--no-progress"]
    assert eval_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds 1 game record(s)" in err
    assert elsewhere.read_text() == "keep me\n"
    assert (games / "game-00000.yinsh").is_symlink()


def test_a_second_run_into_the_records_folder_is_refused_keeping_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games = tmp_path / "games"
    argv = ["random", "test-first", "--games", "2", "--records", str(games), "--no-progress"]
    assert eval_main(argv) == 0
    first = {path.name: path.read_bytes() for path in games.iterdir()}
    assert sorted(first) == ["game-00000.yinsh", "game-00001.yinsh"]
    capsys.readouterr()
    assert eval_main([*argv[:-1], "--seed", "9", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"yinsh-eval: records folder {games} already holds 2 game record(s)")
    assert err.count("\n") == 1
    assert {path.name: path.read_bytes() for path in games.iterdir()} == first
