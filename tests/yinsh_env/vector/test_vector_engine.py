"""The batched engine against the scalar one, ply by ply (yinsh_env.vector).

Games are played by the scalar :class:`~yinsh_env.engine.state.State` with random
legal actions, and the same actions are applied to a :class:`BatchState` of
all the games at once; at every ply the legal masks, the observation planes
(from both sides), the game ends, winners, end reasons and rewards must be
identical.  A short run (standard, Blitz and hand-made corner positions:
passes, the opponent's several rows, the winning ring) always runs; the long
one plays 10,000 games from the start.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from yinsh_env.engine.actions import PASS_ACTION
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode as scalar_encode
from yinsh_env.vector import BatchState, apply, from_states, new_batch, outcome, to_state
from yinsh_env.vector.batch_agents import random_legal
from yinsh_env.vector.legal import random_draws, refresh_mask
from yinsh_env.vector.observe import encode, masks_for
from yinsh_env.vector.step import play_random_turns
from yinsh_env.vector.tables import MOVE, N_PHASES, PLACE, RING, ROW

#: Hand-made positions (from tests of the rules' corners): a double pass after a row
#: (standard), a walled-in player freed by the opponent (Blitz), the opponent's three
#: rows, and the opponent's two rows with a ring already removed.
CORNERS = (
    "RrMM/mmRmMmm/1MMmm3/1mM1mm3/1Mm2mm3/mm3MM2/mM4Mm2/m5mM1/MMMMR1Mm/6m/4 w move - 0-0 13 0 3",
    "RrMM/mmRmMmm/1MMmm3/1mM1mm3/1Mm2mm3/rm3MM2/1M4Mm2/m5mM1/6Mm/6m/4 w move - 0-0 19 0 1",
    "4/4R2/mmmmM3/mmmmM4/mmmmM5/9/10/9/7r/6r/R2r w move - 0-0 36 0 3",
    "4/4R2/mmmmM3/mmmmM4/4M5/9/10/9/7r/6r/R2r w move - 0-1 40 0 3",
)

_ENDS = ("rings", "pool", "passes")


def same(expected: np.ndarray, actual: np.ndarray) -> None:
    """Assert equal arrays (a cheap check first; numpy's report when they differ)."""
    if not np.array_equal(expected, actual):
        np.testing.assert_array_equal(expected, actual)


def compare(games: list[State], batch: BatchState, live: np.ndarray, both: bool = True) -> None:
    """Assert that the batch's games ``live`` are the scalar ``games``: masks and planes
    from the side of the player to act and (``both``) of the other player."""
    same(np.stack([games[i].legal_mask() for i in live]), batch.mask[live].astype(np.int8))
    same(np.stack([scalar_encode(games[i]) for i in live]), encode(batch, live))
    if both:
        other = 1 - batch.to_act[live]
        planes = np.stack([scalar_encode(games[i], int(v)) for i, v in zip(live, other)])
        same(planes, encode(batch, live, other))


def compare_ends(games: list[State], batch: BatchState, done: np.ndarray) -> None:
    """Assert that the finished games ``done`` end as the scalar ones: winner, reason, returns."""
    winner, ending = outcome(batch, done)
    for i, w, e in zip(done, winner.tolist(), ending.tolist()):
        game = games[i]
        assert game.is_terminal
        assert (None if w < 0 else w) == game.winner
        assert _ENDS[e] == game.end_reason
        returns = (0.0, 0.0) if w < 0 else ((1.0, -1.0) if w == 0 else (-1.0, 1.0))
        assert returns == game.returns()
    np.testing.assert_array_equal(masks_for(batch, done, batch.to_act[done]), 0)


def play_both(games: list[State], seed: int, both: bool = True) -> int:
    """Play ``games`` to the end with random actions in both engines; returns the plies."""
    rng = np.random.default_rng(seed)
    batch = from_states(games)
    live = np.arange(len(games))
    plies = 0
    while live.size:
        compare(games, batch, live, both)
        # A set-up position can leave a side owing a ring it does not have: no action
        # at all (the masks agreed on that above); such games stop there.
        live = live[batch.mask[live].any(axis=1)]
        actions = random_legal(batch.mask[live], rng)
        for i, action in zip(live.tolist(), actions.tolist()):
            games[i].apply_unchecked(action)
        apply(batch, live, actions)
        plies += live.size
        over = np.array([games[i].is_terminal for i in live], dtype=np.bool_)
        same(over, batch.phase[live] == 4)
        compare_ends(games, batch, live[over])
        live = live[~over]
    return plies


def test_new_batch_is_the_start_position() -> None:
    batch = new_batch(3, rings_to_win=1)
    for i in range(3):
        assert to_state(batch, i).to_text() == State(rings_to_win=1).to_text()
    compare([State(rings_to_win=1)] * 3, batch, np.arange(3))


def test_states_round_trip_through_a_batch() -> None:
    states = [State.from_text(text) for text in CORNERS if text.endswith(" 3")]
    batch = from_states(states)
    assert [to_state(batch, i).to_text() for i in range(len(states))] == [
        s.to_text() for s in states
    ]


def test_a_wrong_batch_is_caught() -> None:
    """The comparison can fail: one marker changed in one game is seen."""
    games = [State.from_text(CORNERS[2]) for _ in range(2)]
    batch = from_states(games)
    batch.cells[1, int(np.flatnonzero(batch.cells[1] == 4)[0])] = 3
    with pytest.raises(AssertionError):
        compare(games, batch, np.arange(2))


@pytest.mark.parametrize("rings_to_win", [3, 1], ids=["standard", "blitz"])
def test_random_games_match_the_scalar_engine(rings_to_win: int) -> None:
    assert play_both([State(rings_to_win=rings_to_win) for _ in range(150)], seed=rings_to_win) > 0


def test_corner_positions_match_the_scalar_engine() -> None:
    """Passes, the opponent's rows and the winning ring, each continued 40 ways at random."""
    for k, text in enumerate(CORNERS):
        assert play_both([State.from_text(text) for _ in range(40)], seed=k) >= 40


@pytest.mark.slow
def test_ten_thousand_random_games_match_the_scalar_engine() -> None:
    """10,000 games from the start, in one batch, the planes of the player to act compared."""
    start = time.process_time()
    plies = play_both([State() for _ in range(10_000)], seed=2026, both=False)
    print(f"10,000 games, {plies:,} plies, {time.process_time() - start:.1f} CPU-s")
    assert plies > 10_000 * 50


@pytest.mark.parametrize(
    ("text", "script"),
    [
        (CORNERS[0], ["I8-J8", "xI4-I8", "xJ8", "pass", "pass"]),
        (CORNERS[1], ["pass", "F2-F4", "A2-G2"]),
        (CORNERS[2], ["B5-F5", "xE1-E5", "xI11", "xC1-C5", "xK10", "xD1-D5", "xJ11"]),
    ],
    ids=["double-pass", "freed-after-a-pass", "opponent-wins-on-its-rows"],
)
def test_scripted_corners_match_the_scalar_engine(text: str, script: list[str]) -> None:
    game = State.from_text(text)
    batch = from_states([game])
    one = np.arange(1)
    for action in script:
        compare([game], batch, one)
        game.push(action)
        apply(batch, one, np.array([game.actions[-1]]))
    compare([game], batch, one)
    assert game.is_terminal == (batch.phase[0] == 4) and to_state(batch, 0) == game
    if game.is_terminal:
        compare_ends([game], batch, one)


def random_actions(state: BatchState, games: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n,) a uniformly random legal action in each of ``games``, drawn from the positions
    by :func:`random_draws`, phase by phase (what play_random_turns draws from)."""
    actions = np.full(games.size, PASS_ACTION, dtype=np.int64)
    phase = state.phase[games]
    me = state.to_act[games]
    draw = rng.random(games.size)
    present = np.bincount(phase, minlength=N_PHASES).tolist()
    for which in (PLACE, MOVE, ROW, RING):
        if present[which]:
            chosen = np.flatnonzero(phase == which)
            actions[chosen] = random_draws(state, which, games[chosen], me[chosen], draw[chosen])
    return actions


@pytest.mark.slow
def test_random_actions_draw_every_legal_action_and_nothing_else() -> None:
    """The random opponent's draw from the positions has the masks' support, in every
    phase (the corner positions give passes and several rows)."""
    rng = np.random.default_rng(5)
    corners = [State.from_text(text) for text in CORNERS]
    batch = from_states([s for s in corners if s.rings_to_win == 3] + [State()] * 12)
    for ply in range(120):
        live = np.flatnonzero(batch.mask.any(axis=1))
        if ply % 15 == 0:
            expected = {(int(live[r]), int(a)) for r, a in zip(*np.nonzero(batch.mask[live]))}
            draws = [random_actions(batch, live, rng) for _ in range(2000)]
            assert {(int(g), int(a)) for d in draws for g, a in zip(live, d)} == expected
        actions = random_actions(batch, live, rng)
        assert batch.mask[live, actions].all()
        apply(batch, live, actions)


def test_play_random_turns_replays_as_the_scalar_engine() -> None:
    """A move, the row it made and that row's ring in one call: every decision returned
    was legal for the player to act at the call, and replayed in the scalar engine it
    reaches the same positions (masks and planes from both sides)."""
    corners = [State.from_text(text) for text in CORNERS]
    games = [s for s in corners if s.rings_to_win == 3] + [State() for _ in range(30)]
    batch = from_states(games)
    rng = np.random.default_rng(3)
    several = 0
    for _ in range(200):
        live = np.flatnonzero(batch.mask.any(axis=1))
        if not live.size:
            break
        actor = dict(zip(live.tolist(), batch.to_act[live].tolist()))
        decided: Counter[int] = Counter()
        for g, actions in play_random_turns(batch, live, rng):
            for game, action in zip(g.tolist(), actions.tolist()):
                assert games[game].to_act == actor[game] and games[game].legal_mask()[action]
                games[game].apply(action)
                decided[game] += 1
        assert set(decided) == set(actor)
        several += sum(count > 1 for count in decided.values())
        refresh_mask(batch, live)
        compare(games, batch, live)
        ended = live[batch.phase[live] == 4]
        compare_ends(games, batch, ended)
    assert several > 0  # some calls made a move, its row and its ring
