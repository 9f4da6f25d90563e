"""How a game ends: the queries on a finished (or unfinished) position.

Mixed into :class:`~yinsh_env.engine.state.State`, beside the legal-move queries
of :mod:`yinsh_env.engine.movegen`: who won, why the game ended, its result in
record notation and each player's return.  They read the state's phase, removed
rings, passes and mover, and change nothing.
"""

from __future__ import annotations

from typing import Final

from yinsh_env.engine.vocabulary import Outcome, Phase, Player, Result, Termination

_WHITE: Final = Player.WHITE
_BLACK: Final = Player.BLACK
_OVER: Final = Phase.OVER


class GameEnd:
    """The end-of-game queries of a position; mixed into ``State``."""

    __slots__ = ()

    phase: Phase
    removed: list[int]
    rings_to_win: int
    mover: int
    passes: int

    @property
    def is_terminal(self) -> bool:
        """True once the game is over (:attr:`phase` is ``Phase.OVER``)."""
        return self.phase == _OVER

    @property
    def winner(self) -> Player | None:
        """The winning :class:`Player` once the game is won; None while playing or on a draw."""
        if self.phase != _OVER:
            return None
        return self._winner()

    def _winner(self) -> Player | None:
        white, black = self.removed
        target = self.rings_to_win
        if white >= target and black < target:
            return _WHITE
        if black >= target and white < target:
            return _BLACK
        if white >= target:  # both at target: only a set-up position can say so
            return Player(self.mover) if self.mover >= 0 else None
        if white != black:
            return _WHITE if white > black else _BLACK
        return None

    def outcome(self) -> Outcome | None:
        """How the game ended (termination and winner), or None while it goes on.

        A Blitz game (one ring wins) that White ends by making a row:

        >>> from yinsh_env import State
        >>> state = State.from_text("r2r/6r/5m2/5m3/MMMMRM4/4m4/4m5/9/8/6R/3R w move - 0-0 42 0 1")
        >>> state.outcome() is None
        True
        >>> state.apply_all(["E5-E7", "xE1-E5", "xK10"]).outcome()
        Outcome(termination=<Termination.RINGS: 'rings'>, winner=<Player.WHITE: 0>)
        >>> state.result, state.returns()
        (<Result.WHITE_WINS: 'W'>, (1.0, -1.0))
        """
        if self.phase != _OVER:
            return None
        return Outcome(self._termination(), self._winner())

    def returns(self) -> tuple[float, float]:
        """(White's, Black's) final reward: +1 win, -1 loss, 0 draw or unfinished."""
        winner = self.winner
        if winner is None:
            return (0.0, 0.0)
        return (1.0, -1.0) if winner == _WHITE else (-1.0, 1.0)

    @property
    def end_reason(self) -> Termination | None:
        """``Termination.RINGS``, ``POOL`` or ``PASSES`` once over (equal to
        ``'rings'``, ``'pool'``, ``'passes'``); None while playing."""
        if self.phase != _OVER:
            return None
        return self._termination()

    def _termination(self) -> Termination:
        if max(self.removed) >= self.rings_to_win:
            return Termination.RINGS
        if self.passes >= 2:
            return Termination.PASSES
        return Termination.POOL

    @property
    def result(self) -> Result:
        """The result in record notation: a :class:`Result`, equal to ``'W'``,
        ``'B'``, ``'draw'`` or ``'*'`` (unfinished)."""
        if self.phase != _OVER:
            return Result.UNFINISHED
        return Result.win_for(self._winner())
