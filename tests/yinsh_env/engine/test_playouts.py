"""Seeded random playouts with the engine's invariants checked at every ply.

Plain seeded ``random`` is enough here: the games themselves are the random
inputs, each failure names its seed and ply, and shrinking (hypothesis) would
not make a failing game much smaller.  Two policies play: uniform over the
legal actions, and a "jumpy" one that prefers moves jumping many markers, which
makes rows, long runs and several rows at once far more frequent.

The move generator and the effect of each move are checked against a
reference written from RULES.md in a different way (per destination, rather
than walking rays), and the legal actions against the 12 board symmetries.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest

from yinsh_env import (
    ACTION_SYMMETRIES,
    MOVE_OFFSET,
    PASS_ACTION,
    RING_OFFSET,
    ROW_OFFSET,
    SYMMETRIES,
    Phase,
    Player,
    State,
    action_kind,
    str_to_action,
)
from yinsh_env.engine.geometry import MOVE_BETWEEN, MOVE_PAIRS, N_POINTS, POINT_BIT, SEGMENTS

TOTAL_MARKERS = 51
RINGS_PER_PLAYER = 5
# Every move takes a marker from the pool; each row gives five back and costs a
# ring, so there are at most 51 + 5 * 9 moves, each followed by at most one pass,
# plus 10 placements and two decisions per row.
MAX_PLIES = 10 + 2 * (TOTAL_MARKERS + 5 * 9) + 2 * 9

Policy = Callable[[State, random.Random], int]

# --- references written from the rules ---------------------------------------------

_PAIRS_FROM: list[list[tuple[int, int, tuple[int, ...]]]] = [[] for _ in range(N_POINTS)]
for _i, ((_a, _b), _between) in enumerate(zip(MOVE_PAIRS, MOVE_BETWEEN)):
    _PAIRS_FROM[_a].append((MOVE_OFFSET + _i, _b, _between))


def board_of(state: State) -> list[str | None]:
    """The piece on every point, as :meth:`State.piece_at` names it."""
    white_rings, black_rings = state.rings
    white_markers, black_markers = state.markers
    return [
        "R" if white_rings & bit
        else "r" if black_rings & bit
        else "M" if white_markers & bit
        else "m" if black_markers & bit
        else None
        for bit in POINT_BIT
    ]  # fmt: skip


def reference_moves(state: State, board: list[str | None]) -> list[int]:
    """Ring moves by the rules, one destination at a time: the destination is
    empty, nothing between is a ring, and no empty point follows a marker."""
    out = []
    for origin in state.ring_points(state.to_act):
        for action, dest, between in _PAIRS_FROM[origin]:
            if board[dest] is not None:
                continue
            seen_marker = False
            for p in between:
                piece = board[p]
                if piece == "R" or piece == "r" or (piece is None and seen_marker):
                    break
                seen_marker = piece is not None
            else:
                out.append(action)
    return sorted(out)


def reference_rows(board: list[str | None], player: int) -> list[int]:
    """Row actions of every five-point segment fully in ``player``'s colour."""
    five = ("Mm"[player],) * 5
    return [
        ROW_OFFSET + i
        for i, (a, b, c, d, e) in enumerate(SEGMENTS)
        if (board[a], board[b], board[c], board[d], board[e]) == five
    ]


def check_move_effect(before: State, after: State, action: int) -> None:
    """The origin gets the mover's marker, jumped markers flip, nothing else changes."""
    origin, dest = MOVE_PAIRS[action - MOVE_OFFSET]
    between = set(MOVE_BETWEEN[action - MOVE_OFFSET])
    mover = before.to_act
    flip = {"M": "m", "m": "M"}
    for p, (was, now) in enumerate(zip(board_of(before), board_of(after))):
        if p == origin:
            assert (was, now) == ("Rr"[mover], "Mm"[mover])
        elif p == dest:
            assert (was, now) == (None, "Rr"[mover])
        elif p in between and was is not None:
            assert now == flip[was]
        else:
            assert now == was, p
    assert after.pool == before.pool - 1


# --- symmetries ---------------------------------------------------------------------


def map_bits(bitboard: int, sym: tuple[int, ...]) -> int:
    out = 0
    for p in range(N_POINTS):
        if bitboard & POINT_BIT[p]:
            out |= POINT_BIT[sym[p]]
    return out


def transformed(state: State, k: int) -> State:
    """``state`` with board symmetry ``k`` applied to every piece."""
    sym = SYMMETRIES[k]
    new = State(rings_to_win=state.rings_to_win)
    new.rings = [map_bits(b, sym) for b in state.rings]
    new.markers = [map_bits(b, sym) for b in state.markers]
    new.removed = state.removed[:]
    new.pool, new.to_act, new.phase = state.pool, state.to_act, state.phase
    new.mover, new.passes = state.mover, state.passes
    return new


def check_symmetries(state: State) -> None:
    legal = state.legal_actions()
    for k in range(1, len(SYMMETRIES)):
        image = transformed(state, k)
        mapped = sorted(ACTION_SYMMETRIES[k][a] for a in legal)
        assert image.legal_actions() == mapped, f"symmetry {k}"


# --- policies -------------------------------------------------------------------------


def uniform(state: State, rng: random.Random) -> int:
    return rng.choice(state.legal_actions())


def jumpy(state: State, rng: random.Random) -> int:
    """Half the time, the move that jumps the most markers."""
    legal = state.legal_actions()
    if state.phase != Phase.MOVE or rng.random() < 0.5:
        return rng.choice(legal)
    occupied = state.markers[Player.WHITE] | state.markers[Player.BLACK]

    def jumped(action: int) -> int:
        if action >= ROW_OFFSET:
            return -1
        between = MOVE_BETWEEN[action - MOVE_OFFSET]
        return sum(1 for p in between if occupied & POINT_BIT[p])

    return max(legal, key=lambda a: (jumped(a), rng.random()))


# --- the invariants ---------------------------------------------------------------------


def check_invariants(state: State, rings: tuple[int, int] = (5, 5)) -> None:
    """The engine's invariants; ``rings``: each side's rings on the board plus removed."""
    markers = state.markers[Player.WHITE] | state.markers[Player.BLACK]
    assert not state.markers[Player.WHITE] & state.markers[Player.BLACK]
    assert not markers & (state.rings[Player.WHITE] | state.rings[Player.BLACK])
    assert not state.rings[Player.WHITE] & state.rings[Player.BLACK]
    assert markers.bit_count() + state.pool == TOTAL_MARKERS
    if state.phase != Phase.PLACE:
        for player in (Player.WHITE, Player.BLACK):
            assert state.rings[player].bit_count() + state.removed[player] == rings[player]
    legal = state.legal_actions()
    assert state.legal_mask().nonzero()[0].tolist() == legal
    if state.phase in (Phase.PLACE, Phase.MOVE):
        assert state.rows_of(Player.WHITE) == [] and state.rows_of(Player.BLACK) == []
        assert state.mover == -1
    board = board_of(state)
    if state.phase == Phase.MOVE:
        assert legal == (reference_moves(state, board) or [PASS_ACTION])
    elif state.phase == Phase.ROW:
        assert legal == reference_rows(board, state.to_act) != []
    elif state.phase == Phase.RING:
        assert legal == [RING_OFFSET + p for p in state.ring_points(state.to_act)]
    elif state.phase == Phase.OVER:
        assert legal == []
    for player in (Player.WHITE, Player.BLACK):
        assert state.rows_of(player) == reference_rows(board, player)


def check_copy_undo_text(state: State, action: int) -> None:
    text, key = state.to_text(), state.key()
    assert State.from_text(text).key() == key
    clone = state.copy()
    clone.apply(action)
    assert (state.to_text(), state.key()) == (text, key)
    state.apply(action)
    state.pop()
    assert (state.to_text(), state.key()) == (text, key)


def play(
    seed: int,
    policy: Policy,
    *,
    rings_to_win: int = 3,
    heavy: bool = False,
    stats: Counter[str] | None = None,
    start: State | None = None,
) -> State:
    """One checked game, from the empty board or from ``start``.

    ``heavy`` adds copy/undo/text and symmetry checks.
    """
    rng = random.Random(seed)
    state = State(rings_to_win=rings_to_win) if start is None else start.copy()
    rings = (RINGS_PER_PLAYER, RINGS_PER_PLAYER)
    if start is not None:
        rings = (start.rings[Player.WHITE].bit_count() + start.removed[Player.WHITE],
                 start.rings[Player.BLACK].bit_count() + start.removed[Player.BLACK])  # fmt: skip
    while not state.is_terminal:
        assert state.ply < MAX_PLIES, f"seed {seed}: no end after {state.ply} plies"
        check_invariants(state, rings)
        action = policy(state, rng)
        if heavy:
            check_copy_undo_text(state, action)
            check_symmetries(state)
        before = state.copy()
        state.apply(action)
        if action_kind(action) == "move":
            check_move_effect(before, state, action)
        if stats is not None:
            count_events(before, state, action, stats)
    check_invariants(state, rings)
    check_end(state)
    return state


def count_events(before: State, after: State, action: int, stats: Counter[str]) -> None:
    kind = action_kind(action)
    stats[kind] += 1
    if kind == "pass" and before.ply > 0:
        stats["pass after moves"] += 1
    if kind == "move" and after.phase == Phase.ROW:
        stats[
            "move made rows for " + ("mover" if after.to_act == before.to_act else "opponent")
        ] += 1
        if after.rows_of(1 - before.to_act) and after.rows_of(before.to_act):
            stats["move made rows for both"] += 1
        if len(after.rows_of(after.to_act)) > 1:
            stats["a choice of rows"] += 1
    if kind == "ring" and after.phase == Phase.ROW and after.to_act == before.to_act:
        stats["second row in one turn"] += 1
    if kind == "move" and after.pool == 0:
        stats["last marker with a row" if after.phase == Phase.ROW else "last marker, no row"] += 1


def check_end(state: State) -> None:
    assert state.is_terminal
    reason = state.end_reason
    if reason == "rings":
        assert max(state.removed) == state.rings_to_win
    elif reason == "pool":
        assert state.pool == 0 and max(state.removed) < state.rings_to_win
    else:
        assert reason == "passes" and state.passes == 2
    white, black = state.returns()
    assert white == -black
    expected = None
    if state.removed[Player.WHITE] != state.removed[Player.BLACK]:
        expected = (
            Player.WHITE
            if state.removed[Player.WHITE] > state.removed[Player.BLACK]
            else Player.BLACK
        )
    assert state.winner == expected


# --- the tests ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("policy", [uniform, jumpy], ids=["uniform", "jumpy"])
def test_playouts_keep_every_invariant(policy: Policy) -> None:
    stats: Counter[str] = Counter()
    ends: Counter[str | None] = Counter()
    for seed in range(150):
        state = play(seed, policy, stats=stats)
        ends[state.end_reason] += 1
    # The games must reach the situations the invariants are about.
    assert stats["row"] > 100 and stats["ring"] == stats["row"]
    for event in (
        "move made rows for opponent",
        "move made rows for both",
        "a choice of rows",
        "second row in one turn",
        "last marker with a row",
        "last marker, no row",
    ):
        assert stats[event] > 0, event
    assert ends["rings"] > 0 and ends["pool"] > 0


def test_blitz_playouts_end_on_the_first_ring_or_the_pool() -> None:
    for seed in range(60):
        state = play(1000 + seed, jumpy, rings_to_win=1)
        assert state.end_reason in ("rings", "pool", "passes")
        assert max(state.removed) <= 1


@pytest.mark.slow
@pytest.mark.parametrize("policy", [uniform, jumpy], ids=["uniform", "jumpy"])
def test_playouts_copy_undo_text_and_symmetries(policy: Policy) -> None:
    for seed in range(10):
        play(2000 + seed, policy, heavy=True)


def cramped_start(rings_to_win: int) -> State:
    """Two rings a side, White's walled in: passes come and go as Black's F2 ring moves.

    (The blocked position of ``test_rules``, Black's ring F2 at the end of the run
    that walls in A2, G2 beyond it empty; 1-1 removed, so two rings each suffice.)
    """
    from test_rules_corners import _passed_player_can_be_freed

    state = _passed_player_can_be_freed(rings_to_win)
    if rings_to_win == 3:
        state = State.from_text(state.to_text().replace(" 0-0 ", " 1-1 "))
    return state


@pytest.mark.parametrize("rings_to_win", [3, 1], ids=["standard", "blitz"])
@pytest.mark.parametrize("policy", [uniform, jumpy], ids=["uniform", "jumpy"])
def test_playouts_from_a_cramped_position_pass_and_keep_every_invariant(
    policy: Policy, rings_to_win: int
) -> None:
    stats: Counter[str] = Counter()
    start = cramped_start(rings_to_win)
    for seed in range(20):
        play(3000 + seed, policy, rings_to_win=rings_to_win, stats=stats, start=start)
    assert stats["pass"] > 20  # every game starts with White's pass, and more follow
    assert stats["pass after moves"] > 10
    assert stats["move"] > stats["pass"] // 2


def test_playouts_are_reproducible() -> None:
    a = play(7, uniform)
    b = play(7, uniform)
    assert a.actions == b.actions and a == b
    assert play(8, uniform).actions != a.actions


def test_reference_helpers_agree_with_a_hand_made_position() -> None:
    # Guards the references: E2 passes E3, jumps E4-E5, lands on E6 only.
    state = State.from_text("4/7/8/9/1R1Mm5/9/10/9/8/7/3r w move - 0-0 49 0 3")
    moves = reference_moves(state, board_of(state))
    names = {state.legal_action_names()[state.legal_actions().index(a)] for a in moves}
    assert {n for n in names if n[3] == "E"} == {"E2-E1", "E2-E3", "E2-E6"}
    assert reference_rows(board_of(state), Player.WHITE) == []
    with_row = State.from_text("4/7/8/9/MMMMM5/9/10/9/8/7/R2r w row w 0-0 46 0 3")
    assert reference_rows(board_of(with_row), Player.WHITE) == [str_to_action("xE1-E5")]
