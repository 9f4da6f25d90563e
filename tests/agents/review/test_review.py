"""Game review (agents.review, yinsh-review): every decision valued, losses marked, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import THROWN_AWAY

from agents import register_agent
from agents.baselines.mcts import MCTSAgent
from agents.review import MARKS, Review, check_values, mark_of, review_game, review_record
from agents.review.output import json_text
from agents.review.review_cli import main as review_main
from agents.review.reviewer import move_accuracy
from agents.search import Analysis
from agents.spec import make_agent
from yinsh_env import GameRecord, State, load_record, read_record, write_record


class FlakyAgent(MCTSAgent):
    """A small MCTS that raises after ``survive`` analyses of a review (counted from reset)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, sims=8)
        self.calls = 0

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.calls = 0

    def analyse(self, state: State) -> Analysis:
        self.calls += 1
        if self.calls > 5:
            raise RuntimeError("engine went away")
        return super().analyse(state)


class SmallSearch(MCTSAgent):
    """An agent registered at run time (it must reach worker processes too)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, sims=10)


register_agent("test-flaky", FlakyAgent)
register_agent("test-small-search", SmallSearch)


def wins_by_itself(state: State, me: int) -> bool:
    """Whether ``me``, to act, can end the game won with its own decisions in a row."""
    if state.is_terminal:
        return state.winner == me
    if state.to_act != me:
        return False
    for action in state.legal_actions():
        child = state.copy()
        child.apply(action)
        if wins_by_itself(child, me):
            return True
    return False


def check_review(review: Review, record: GameRecord) -> None:
    """One entry per decision, in order, consistent values, losses, marks and summary."""
    assert review.complete and review.total == len(record.actions)
    assert [d.ply for d in review.decisions] == list(range(1, len(record.actions) + 1))
    assert [d.action for d in review.decisions] == record.actions
    state = State(rings_to_win=record.rings_to_win)
    for d, nxt in zip(review.decisions, [*review.decisions[1:], None]):
        assert d.side == state.to_act.letter
        assert d.best in state.legal_action_names()
        assert d.value is not None and d.value_played is not None
        assert -1.0 <= d.value <= 1.0 and -1.0 <= d.value_played <= 1.0
        if nxt is not None:
            assert d.value_played == nxt.value
        assert d.loss is not None and d.loss >= 0
        assert d.forced == (len(state.legal_actions()) == 1)
        if d.forced or d.best == d.action:
            assert d.loss == 0
        assert d.mark == mark_of(d.loss)
        state.push(d.action)
    summary = review.summary()
    for side, name in (("W", "white"), ("B", "black")):
        mine = [d for d in review.decisions if d.side == side]
        assert summary[name]["decisions"] == len(mine)
        for mark, _ in MARKS:
            assert summary[name][mark] == sum(d.mark == mark for d in mine)
        accuracy = summary[name]["accuracy"]
        assert accuracy is None or 0 <= accuracy <= 100


def test_marks_follow_the_documented_thresholds() -> None:
    assert [mark_of(x) for x in (None, 0.0, 0.099, 0.1, 0.2, 0.299, 0.3, 2.0)] == [
        None,
        None,
        None,
        "inaccuracy",
        "mistake",
        "mistake",
        "blunder",
        "blunder",
    ]
    assert move_accuracy(0.0) == pytest.approx(100.0, abs=0.01)
    assert move_accuracy(0.1) > move_accuracy(0.3) > move_accuracy(2.0) >= 0.0


def test_every_decision_of_the_real_games_is_reviewed(games_dir: Path) -> None:
    paths = sorted(p for p in games_dir.rglob("*") if p.suffix in (".sgf", ".json"))
    assert len(paths) >= 3
    agent = make_agent("pretrained:sims=0")
    for path in paths:
        record = load_record(path)
        review = review_record(record, agent)
        check_review(review, record)
        assert (review.white, review.black) == (record.white, record.black)
        final = record.replay()
        if final.is_terminal:  # the last value is the result itself
            assert review.decisions[-1].value_played == (1.0 if final.result == "W" else -1.0)


@pytest.mark.slow
def test_the_move_that_throws_a_won_game_away_is_a_blunder() -> None:
    record = read_record(THROWN_AWAY)
    before = State(rings_to_win=1).apply_all(record.actions[:-1])
    mover = before.to_act
    assert wins_by_itself(before, mover), "the constructed position is not won"
    after = before.copy()
    after.push(record.actions[-1])
    assert after.to_act != mover and wins_by_itself(after, after.to_act)
    review = review_record(record, make_agent("mcts:sims=100"), seed=1)
    check_review(review, record)
    last = review.decisions[-1]
    assert last.mark == "blunder" and last.loss is not None and last.loss >= 1.0
    winning = before.copy()
    winning.push(last.best)
    assert wins_by_itself(winning, mover) or winning.winner == mover


@pytest.mark.slow
def test_the_cli_writes_json_annotated_record_and_png(tmp_path: Path) -> None:
    game = tmp_path / "thrown.yinsh"
    game.write_text(THROWN_AWAY, encoding="utf-8")
    out = tmp_path / "out" / "deep"
    assert (
        review_main([str(game), "--agent", "mcts:sims=60", "--out", str(out), "--no-progress"]) == 0
    )
    data = json.loads((out / "thrown.review.json").read_text(encoding="utf-8"))
    record = read_record(THROWN_AWAY)
    assert len(data["decisions"]) == len(record.actions) and data["complete"]
    assert {"ply", "action", "best", "value", "value_played", "loss", "mark"} <= set(
        data["decisions"][0]
    )
    assert set(data["summary"]) == {"white", "black"}
    assert data["decisions"][-1]["mark"] == "blunder"
    annotated = (out / "thrown.review.yinsh").read_text(encoding="utf-8")
    assert "A4-A2 {blunder, best " in annotated
    again = read_record(annotated)  # the notes are comments: the game reads back the same
    assert again.actions == record.actions and again.tags["Annotator"] == "mcts:sims=60"
    png = (out / "thrown.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 2000


def test_a_seeded_agent_gives_the_same_review_twice() -> None:
    record = read_record(THROWN_AWAY)
    agent = make_agent("mcts:sims=20")
    first = json_text(review_record(record, agent, seed=5))
    second = json_text(review_record(record, make_agent("mcts:sims=20"), seed=5))
    assert first == second


@pytest.mark.slow
def test_workers_review_several_records_as_one_process_does(
    tmp_path: Path, games_dir: Path
) -> None:
    paths = sorted(str(p) for p in games_dir.rglob("*.sgf"))[:2]
    args = ["--agent", "test-small-search", "--no-progress", "--seed", "3"]
    assert review_main([*paths, *args, "--out", str(tmp_path / "one")]) == 0
    assert review_main([*paths, *args, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    for path in paths:
        name = f"{Path(path).stem}.review.json"
        one = (tmp_path / "one" / name).read_text(encoding="utf-8")
        assert one == (tmp_path / "two" / name).read_text(encoding="utf-8")


def test_a_malformed_record_is_named_with_its_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.yinsh"
    good.write_text(THROWN_AWAY, encoding="utf-8")
    bad = tmp_path / "bad.yinsh"
    bad.write_text('[Variant "standard"]\n\n1. W E5\n2. B Z99\n', encoding="utf-8")
    out = tmp_path / "out"
    status = review_main([str(good), str(bad), "--agent", "mcts:sims=5", "--out", str(out)])
    assert status == 2
    err = capsys.readouterr().err
    assert "bad.yinsh" in err and "line 4" in err and "Z99" in err
    assert not out.exists()


def test_an_agent_without_values_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "g.yinsh"
    game.write_text(THROWN_AWAY, encoding="utf-8")
    out = tmp_path / "out"
    assert review_main([str(game), "--agent", "random", "--out", str(out)]) == 2
    assert "gives no value" in capsys.readouterr().err and not out.exists()
    with pytest.raises(ValueError, match="3 rings to win, not 1"):
        check_values(make_agent("pretrained:sims=0"), rings_to_win=1)


def test_an_agent_failing_part_way_keeps_the_review_so_far(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "g.yinsh"
    game.write_text(THROWN_AWAY, encoding="utf-8")
    status = review_main(
        [str(game), "--agent", "test-flaky", "--out", str(tmp_path), "--no-progress"]
    )
    assert status == 1
    err = capsys.readouterr().err
    data = json.loads((tmp_path / "g.review.json").read_text(encoding="utf-8"))
    stopped = data["stopped"]
    assert not data["complete"] and "engine went away" in stopped["reason"]
    assert f"stopped at ply {stopped['ply']}" in err and "engine went away" in err
    decisions = data["decisions"]
    assert len(decisions) == stopped["ply"] - 1 >= 5
    assert [d["ply"] for d in decisions] == list(range(1, stopped["ply"]))
    assert decisions[-1]["value_played"] is None and decisions[-2]["value_played"] is not None
    assert (tmp_path / "g.png").is_file()
    assert "AnnotationStopped" in (tmp_path / "g.review.yinsh").read_text(encoding="utf-8")


def test_a_cancelled_review_stops_where_it_was_told() -> None:
    record = read_record(THROWN_AWAY)
    done: list[int] = []
    review = review_game(
        State(rings_to_win=1),
        record.actions,
        make_agent("mcts:sims=10"),
        progress=done.append,
        should_stop=lambda: len(done) >= 20,
    )
    assert not review.complete and review.reason == "cancelled"
    assert review.stopped_at == 21 and len(review.decisions) == 20
    assert all(d.value is not None for d in review.decisions)
    with pytest.raises(ValueError, match="ply 2"):
        review_game(State(), ["E5", "E5"], make_agent("mcts:sims=10"))


def test_record_notes_are_comments_that_read_back() -> None:
    record = read_record(THROWN_AWAY)
    text = write_record(record, {1: "a {brace}\nand a line; break", 48: "blunder"})
    assert "1. W G4 {a (brace) and a line; break}" in text
    assert read_record(text) == record
