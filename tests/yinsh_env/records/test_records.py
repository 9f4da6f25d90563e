"""Game records: our text format, boardspace .sgf export/import, BGA json, files."""

from __future__ import annotations

import json
from pathlib import Path

import helpers
import pytest

from yinsh_env import (
    GameRecord,
    Player,
    RecordError,
    Result,
    State,
    load_record,
    read_bga_json,
    read_record,
    read_sgf,
    save_record,
    write_record,
    write_sgf,
)


def random_game(seed: int, rings_to_win: int = 3, max_plies: int = 400) -> State:
    """A seeded random playout, stopped after ``max_plies`` if still running."""
    return helpers.random_game(seed, rings_to_win, stop=max_plies)


def resigned(state: State) -> GameRecord:
    """The record of ``state`` (unfinished) with the side to act resigning."""
    winner = Result.win_for(state.to_act.other)
    return GameRecord.from_state(state, "alice", "bob", result=winner, termination="resign")


# A short legal opening: ten placements, then White moves G2-G4.
PLACEMENTS = ["G2", "C6", "F2", "D4", "E1", "E4", "H3", "A4", "D1", "F6"]


def small_record_text() -> str:
    moves = "\n".join(f"{i}. {'WB'[(i - 1) % 2]} {a}" for i, a in enumerate(PLACEMENTS, 1))
    return (
        '[Variant "standard"]\n[White "alice"]\n[Black "bob"]\n[Result "*"]\n'
        f'[Termination "unfinished"]\n[date "2026-04-01"]\n\n{moves}\n11. W G2-G4\n'
    )


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


# --- our format -------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_round_trip_of_random_games(seed: int) -> None:
    rings = (3, 1, 2)[seed % 3]
    state = random_game(seed, rings, max_plies=(400, 60)[seed % 2])
    record = GameRecord.from_state(
        state, "alphabeta:depth=3", "random", event="test", seed=str(seed)
    )
    assert record.actions == [str(a) for a in record.actions]
    assert len(record.actions) == state.ply
    assert record.result == state.result
    assert record.termination == (state.end_reason or "unfinished")
    text = write_record(record)
    again = read_record(text)
    assert again == record
    assert again.replay().key() == state.key()
    assert write_record(again) == text


def test_round_trip_keeps_odd_names_tags_and_resignations() -> None:
    state = random_game(3, max_plies=40)
    record = resigned(state)
    record.white = 'Ann "the \\ hammer"\nsecond line'
    record.tags = {"reason": "lost on [purpose]; {really}", "opening_id": "7", "x.y-z": ""}
    text = write_record(record)
    assert read_record(text) == record
    assert not record.replay().is_terminal


def test_written_record_is_readable_and_lists_each_side() -> None:
    text = write_record(read_record(small_record_text()))
    assert '[Variant "standard"]' in text
    assert "1. W G2" in text and "10. B F6" in text and "11. W G2-G4" in text


def test_reading_accepts_comments_several_plies_a_line_and_any_case() -> None:
    text = (
        "; a game typed by hand\n"
        '[White "alice"]\n'
        + " ".join(f"{i}. {a.lower()}" for i, a in enumerate(PLACEMENTS, 1))
        + "  {all rings down}\n"
        "g2-G4 ; White moves first\n"
    )
    record = read_record(text)
    assert record.actions == [*PLACEMENTS, "G2-G4"]
    assert (record.white, record.black, record.result, record.termination) == (
        "alice", "?", "*", "unfinished",
    )  # fmt: skip
    assert record.rings_to_win == 3


def test_missing_result_and_termination_come_from_the_replay() -> None:
    state = random_game(5)
    assert state.is_terminal
    moves = "\n".join(write_record(GameRecord.from_state(state)).split("\n\n", 1)[1:])
    record = read_record(moves)
    assert (record.result, record.termination) == (state.result, state.end_reason)


def test_blitz_and_numeric_variants() -> None:
    for rings, name in ((1, "blitz"), (2, "rings=2"), (3, "standard")):
        record = GameRecord.from_state(random_game(rings, rings))
        assert record.variant == name
        assert f'[Variant "{name}"]' in write_record(record)
        assert read_record(write_record(record)).rings_to_win == rings


BAD_RECORDS = [
    # (what is wrong, the line to break, its replacement, words in the message)
    ("bad header line", '[Black "bob"]', '[Black "bob]', "malformed header"),
    ("header key", '[Black "bob"]', '[Bl ack "bob"]', "malformed header"),
    ("unknown result", '[Result "*"]', '[Result "1-0"]', "unknown result"),
    ("unknown termination", '[Termination "unfinished"]', '[Termination "bored"]', "unknown"),
    ("unknown variant", '[Variant "standard"]', '[Variant "huge"]', "unknown variant"),
    ("duplicate header", '[date "2026-04-01"]', '[White "carol"]', "duplicate"),
    ("bad escape", '[date "2026-04-01"]', '[date "a\\qb"]', "escape"),
    ("unknown action", "11. W G2-G4", "11. W G2-H7", "not on a common line"),
    ("not an action", "11. W G2-G4", "11. W castle", "unknown action"),
    ("illegal action", "11. W G2-G4", "11. W C6-C7", "illegal action"),
    ("occupied point", "4. B D4", "4. B C6", "illegal action"),
    ("wrong side", "11. W G2-G4", "11. B G2-G4", "W is to act"),
    ("ply number", "11. W G2-G4", "12. W G2-G4", "out of place"),
    ("side without action", "11. W G2-G4", "11. W G2-G4 B", "without an action"),
    ("unclosed comment", "11. W G2-G4", "11. W G2-G4 {oops", "unclosed"),
    ("claims a rules ending", '[Termination "unfinished"]', '[Termination "rings"]', "not over"),
    ("result without end", '[Result "*"]', '[Result "W"]', "does not fit"),
]


@pytest.mark.parametrize(
    ("what", "old", "new", "words"), BAD_RECORDS, ids=[b[0] for b in BAD_RECORDS]
)
def test_malformed_records_name_the_line(what: str, old: str, new: str, words: str) -> None:
    good = small_record_text()
    assert old in good
    bad = good.replace(old, new, 1)
    number = line_of(bad, new)
    with pytest.raises(RecordError) as info:
        read_record(bad)
    message = str(info.value)
    assert f"line {number}:" in message
    assert repr(new.strip()) in message
    assert words in message


def test_header_after_the_moves_is_an_error() -> None:
    bad = small_record_text() + '[event "late"]\n'
    number = line_of(bad, "[event")
    with pytest.raises(RecordError, match=rf"line {number}: header line after the moves"):
        read_record(bad)


def test_wrong_result_for_a_finished_game_names_the_result_line() -> None:
    state = random_game(5)
    text = write_record(GameRecord.from_state(state))
    other = {"W": "B", "B": "W", "draw": "W"}[state.result]
    bad = text.replace(f'[Result "{state.result}"]', f'[Result "{other}"]')
    with pytest.raises(RecordError, match=r"line 4: the game ended by the rules"):
        read_record(bad)
    bad = text.replace(f'[Termination "{state.end_reason}"]', '[Termination "resign"]')
    with pytest.raises(RecordError, match=r"line 5: the game ended by the rules"):
        read_record(bad)


def test_record_fields_are_checked_and_actions_normalised() -> None:
    assert GameRecord(actions=["g2", " b1 ", "PASS", "xe9-e5"]).actions == [
        "G2",
        "B1",
        "pass",
        "xE5-E9",
    ]
    with pytest.raises(RecordError, match=r"ply 2: unknown action 'Z9'"):
        GameRecord(actions=["G2", "Z9"])
    with pytest.raises(RecordError, match="unknown result"):
        GameRecord(result="white")
    with pytest.raises(RecordError, match="unknown termination"):
        GameRecord(termination="boredom")
    with pytest.raises(RecordError, match="reserved"):
        GameRecord(tags={"Result": "W"})
    with pytest.raises(RecordError, match="bad tag name"):
        GameRecord(tags={"two words": "x"})
    with pytest.raises(RecordError, match="rings_to_win"):
        GameRecord(rings_to_win=6)


def test_replay_names_the_ply_and_action_of_an_illegal_action() -> None:
    record = GameRecord(actions=[*PLACEMENTS, "C6-C7"])
    with pytest.raises(RecordError, match=r"ply 11 \(C6-C7\): illegal action"):
        record.replay()
    with pytest.raises(RecordError, match=r"ply 2 \(G2\)"):
        GameRecord(actions=["G2", "G2"]).replay()


def test_replay_checks_the_result_against_the_position() -> None:
    state = random_game(7)
    assert state.is_terminal
    record = GameRecord.from_state(state)
    record.result = "draw" if state.result != "draw" else "W"
    with pytest.raises(RecordError, match="ended by the rules"):
        record.replay()
    with pytest.raises(RecordError, match="not over"):
        GameRecord(actions=PLACEMENTS, result="W", termination="rings").replay()
    with pytest.raises(RecordError, match="does not fit"):
        GameRecord(actions=PLACEMENTS, result="draw", termination="resign").replay()
    assert GameRecord(actions=PLACEMENTS, result="draw", termination="agreement").replay()


def test_from_state_needs_the_history_or_an_action_list() -> None:
    state = random_game(2, max_plies=30)
    copied = state.copy()
    with pytest.raises(RecordError, match=r"actions=\[\.\.\.\]"):
        GameRecord.from_state(copied)
    record = GameRecord.from_state(copied, actions=state.actions)
    assert record.actions == GameRecord.from_state(state).actions
    with pytest.raises(RecordError, match="not to the given state"):
        GameRecord.from_state(copied, actions=state.actions[:-1])
    with pytest.raises(RecordError, match="ended by the rules"):
        GameRecord.from_state(random_game(5), result="W", termination="resign")


# --- files ----------------------------------------------------------------


def test_save_and_load_each_format(tmp_path: Path) -> None:
    record = GameRecord.from_state(random_game(11), "greedy", "random", date="2026-04-01")
    for name in ("game.yinsh", "game.sgf", "game.txt"):
        save_record(record, tmp_path / name)
        assert load_record(tmp_path / name) == record
    with pytest.raises(RecordError, match="not supported"):
        save_record(record, tmp_path / "game.json")
    assert not (tmp_path / "game.json").exists()


def test_a_failed_save_leaves_the_file_intact(tmp_path: Path) -> None:
    path = tmp_path / "game.yinsh"
    save_record(GameRecord(actions=PLACEMENTS), path)
    before = path.read_text()
    for bad in (GameRecord(actions=["G2", "G2"]), GameRecord(actions=PLACEMENTS, result="W")):
        with pytest.raises(RecordError):
            save_record(bad, path)
        with pytest.raises(RecordError):
            save_record(bad, path.with_suffix(".sgf"))
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.yinsh"]


def test_load_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yinsh"
    path.write_text(small_record_text().replace("4. B D4", "4. B Q4"))
    number = line_of(path.read_text(), "4. B Q4")
    with pytest.raises(
        RecordError, match=rf"bad\.yinsh: line {number}: ply 4: unknown action 'Q4'"
    ):
        load_record(path)


# --- boardspace .sgf export and import -------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_sgf_round_trip_of_random_games(seed: int) -> None:
    rings = (3, 1)[seed % 2]
    state = random_game(100 + seed, rings, max_plies=(400, 400, 50, 400)[seed % 4])
    tags = {"date": "Fri Mar 13 19:56:26 GMT+01:00 2026", "game": f"Y-test-{seed}"}
    record = resigned(state) if seed % 4 == 2 else GameRecord.from_state(state, "Ann", "Bob]")
    record.tags = tags
    if seed == 1:
        record.tags |= {"white_time": "0:01:43", "black_time": "0:00:02"}
    text = write_sgf(record)
    assert text.startswith(" (;\nGM[24]")
    assert ("SU[Yinsh-blitz]" if rings == 1 else "SU[Yinsh]") in text
    assert read_sgf(text) == record


@pytest.mark.parametrize(
    ("result", "termination", "white", "black"),
    [("W", "forfeit", "ann", "bob"), ("B", "timeout", "x", "x"), ("draw", "agreement", "a", "b"),
     ("B", "adjudication", "?", "?"), ("*", "unfinished", "white", "black")],
)  # fmt: skip
def test_sgf_round_trip_of_other_endings(
    result: str, termination: str, white: str, black: str
) -> None:
    record = GameRecord(
        white=white, black=black, result=result, termination=termination, actions=PLACEMENTS
    )
    assert read_sgf(write_sgf(record)) == record


def test_sgf_cannot_hold_some_records() -> None:
    with pytest.raises(RecordError, match="no Yinsh variant"):
        write_sgf(GameRecord(rings_to_win=2))
    # PLACEMENTS end with White to act: Black cannot resign there in boardspace.
    with pytest.raises(RecordError, match="Black resigned while White was to act"):
        write_sgf(GameRecord(actions=PLACEMENTS, result="W", termination="resign"))
    with pytest.raises(RecordError, match="illegal action"):
        write_sgf(GameRecord(actions=["G2", "G2"]))


SGF_HEAD = 'GM[24]VV[2]\nSU[Yinsh]\nP0[id "ann"]\nP1[id "bob"]\n; P0[0 Start White]\n'


def sgf_game(commands: list[tuple[int, str]], head: str = SGF_HEAD) -> str:
    body = "".join(f"; P{p}[{n} {c}]TM[{1000 + n}]\n" for n, (p, c) in enumerate(commands, 1))
    return f" (;\n{head}{body})\n"


def placement_commands() -> list[tuple[int, str]]:
    out = []
    for i, point in enumerate(PLACEMENTS):
        colour = Player(i % 2).letter.lower()
        out += [(i % 2, f"place {colour}r  {point[0]} {point[1:]}"), (i % 2, "Done ")]
    return out


def test_sgf_pick_and_drop_forms_and_take_backs() -> None:
    commands = [
        (0, "pick wr"), (0, "drop wr"),  # a ring taken from the supply and put back
        (0, "place wr  G 3"), (0, "pick board G 3"), (0, "drop board G 2"),  # moved before Done
        (0, "Done "),
        *placement_commands()[2:],
        (0, "pick w"), (0, "drop board G 2"), (0, "drop board G 2"),  # ring lifted, put back
        (0, "pick w"), (0, "drop w"),  # a marker taken and returned to the pool
        (0, "pick w"), (0, "dropb G2"), (0, "drop board G 5"),  # G2-G5 ...
        (0, "pick board G 5"), (0, "dropb G 4"), (0, "Done "),  # ... changed to G2-G4
        (1, "place b  F 6"), (1, "drop board  F 8"), (1, "Done "),
        (0, "Resign "), (0, "Resign "),  # resigned and took it back
        (0, "move E 1 E 3"), (0, "Done "),
    ]  # fmt: skip
    record = read_sgf(sgf_game(commands))
    assert record.actions == [*PLACEMENTS, "G2-G4", "F6-F8", "E1-E3"]
    assert (record.white, record.black, record.result, record.termination) == (
        "ann", "bob", "*", "unfinished",
    )  # fmt: skip


def test_sgf_commands_without_done_are_confirmed_by_the_next_one() -> None:
    commands = [c for c in placement_commands() if "Done" not in c[1]]
    record = read_sgf(sgf_game([*commands, (0, "move G 2 G 4"), (1, "Resign ")]))
    assert record.actions == [*PLACEMENTS, "G2-G4"]
    assert (record.result, record.termination) == ("W", "resign")


def bad_sgf_cases() -> list[tuple[str, str, str, str]]:
    """(what, command line to break, its replacement, words in the message)."""
    return [
        ("truncated line", "; P0[21 move G 2 G 4]TM[1021]", "; P0[21 move G 2 G", "past its line"),
        ("missing point", "; P0[21 move G 2 G 4]TM[1021]", "; P0[21 move G 2]", "expected 2 point"),
        ("wrong player", "; P0[21 move G 2 G 4]TM[1021]", "; P1[21 move G 2 G 4]", "P1 gives"),
        ("wrong player done", "; P0[22 Done ]TM[1022]", "; P1[22 Done ]", "P1 gives"),
        (
            "unknown command",
            "; P0[21 move G 2 G 4]TM[1021]",
            "; P0[21 jump G 2 G 4]",
            "unknown command",
        ),
        (
            "illegal move",
            "; P0[21 move G 2 G 4]TM[1021]",
            "; P0[21 move C 6 C 8]",
            "illegal action",
        ),
        ("not a line", "; P0[21 move G 2 G 4]TM[1021]", "; P0[21 move G 2 H 7]", "common line"),
        ("no point", "; P0[21 move G 2 G 4]TM[1021]", "; P0[21 move G 2 Z 4]", "not a board point"),
        ("wrong colour", "; P0[1 place wr  G 2]TM[1001]", "; P0[1 place br  G 2]", "other colour"),
        ("wrong phase", "; P0[21 move G 2 G 4]TM[1021]", "; P0[21 remove wr G 2]", "move phase"),
        ("lift no ring", "; P0[21 move G 2 G 4]TM[1021]", "; P0[21 place w  C 6]", "no White ring"),
        (
            "done too soon",
            "; P0[21 move G 2 G 4]TM[1021]",
            "; P0[21 pick w]\n; P0[22 Done ]",
            "piece still in hand",
        ),
        ("bad variant", "SU[Yinsh]", "SU[Chess]", "not a Yinsh game"),
        ("stray text", "; P0[22 Done ]TM[1022]", "; P0[22 Done ] oops", "unexpected character"),
    ]


@pytest.mark.parametrize(
    ("what", "old", "new", "words"), bad_sgf_cases(), ids=[c[0] for c in bad_sgf_cases()]
)
def test_malformed_sgf_names_the_line(what: str, old: str, new: str, words: str) -> None:
    good = sgf_game([*placement_commands(), (0, "move G 2 G 4"), (0, "Done ")])
    assert read_sgf(good).actions == [*PLACEMENTS, "G2-G4"]
    assert old in good
    bad = good.replace(old, new, 1)
    number = line_of(bad, new.split("\n")[-1])
    with pytest.raises(RecordError) as info:
        read_sgf(bad)
    message = str(info.value)
    assert f"line {number}:" in message
    assert words in message


def test_sgf_result_text_must_agree_with_the_game() -> None:
    text = sgf_game([*placement_commands(), (0, "Resign "), (0, "Done ")])
    assert read_sgf(text.replace("SU[Yinsh]", "SU[Yinsh]\nRE[Game won by bob]")).result == "B"
    bad = text.replace("SU[Yinsh]", "SU[Yinsh]\nRE[Game won by ann]")
    number = line_of(bad, "RE[")
    with pytest.raises(
        RecordError, match=rf"line {number}: RE names White as winner but Black won"
    ):
        read_sgf(bad)


def test_sgf_rejects_commands_after_the_end() -> None:
    text = sgf_game([*placement_commands(), (0, "Resign "), (0, "Done "), (1, "move C 6 C 8")])
    number = line_of(text, "move C 6 C 8")
    with pytest.raises(RecordError, match=rf"line {number}: command after the game ended"):
        read_sgf(text)
    with pytest.raises(RecordError, match=r"line 1: not an SGF game"):
        read_sgf("GM[24]")
    with pytest.raises(RecordError, match=r"line 2: .*unterminated property value"):
        read_sgf(" (;\nGM[24\n")


# --- BGA json ----------------------------------------------------------------


def bga_text(actions: list[str], result: str) -> str:
    return json.dumps({"source": "test", "result": result, "actions": actions}, indent=1)


def test_bga_reads_players_tags_and_other_endings() -> None:
    data = {"white": "ann", "black": "bob", "table": "42", "result": "White wins by resignation",
            "actions": PLACEMENTS}  # fmt: skip
    record = read_bga_json(json.dumps(data))
    assert (record.white, record.black, record.result, record.termination) == (
        "ann", "bob", "W", "resign",
    )  # fmt: skip
    assert record.tags == {"table": "42"}


@pytest.mark.parametrize(
    ("what", "text", "line", "words"),
    [
        ("broken json", '{\n "result": "Draw",\n "actions": ["G2" "C6"]\n}', 3, "broken JSON"),
        ("not an object", "[1, 2]", 1, "JSON object"),
        ("actions", '{\n "result": "Draw",\n "actions": "G2"\n}', 3, "list of strings"),
        ("illegal", bga_text(["G2", "C6", "G2"], "Draw"), 7, "ply 3 (G2): illegal"),
        ("unknown", bga_text(["G2", "Q6"], "Draw"), 6, "ply 2: unknown action 'Q6'"),
        ("result", bga_text(PLACEMENTS, "Nobody wins"), 3, "result must read"),
        ("rules", bga_text(PLACEMENTS, "White wins 3-0"), 3, "the replayed game ends 0-0"),
    ],
)
def test_malformed_bga_names_the_line(what: str, text: str, line: int, words: str) -> None:
    with pytest.raises(RecordError) as info:
        read_bga_json(text)
    assert f"line {line}:" in str(info.value)
    assert words in str(info.value)


def test_formats_are_registered_by_suffix(tmp_path: Path) -> None:
    from yinsh_env.records.formats import FORMATS, RecordFormat, format_for, register_format

    assert {".yinsh", ".sgf", ".json"} <= set(FORMATS)
    assert format_for("a/GAME.SGF").name == "boardspace sgf"
    assert format_for("game.txt").suffix == ".yinsh"  # unknown suffixes read as our text
    record = GameRecord.from_state(random_game(3), "a", "b")
    banner = "; written by a registered format\n"
    fmt = RecordFormat("banner", ".banner", read_record, lambda r: banner + write_record(r))
    register_format(fmt)
    try:
        save_record(record, tmp_path / "g.banner")
        assert (tmp_path / "g.banner").read_text().startswith(banner)
        assert load_record(tmp_path / "g.banner") == record
    finally:
        del FORMATS[".banner"]
    assert format_for("g.banner") is not fmt
    with pytest.raises(ValueError, match="suffix"):
        register_format(RecordFormat("bad", "shout", read_record))
