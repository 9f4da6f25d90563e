"""``YinshVectorEnv``: many learner-versus-opponent games as one Gymnasium ``VectorEnv``.

The scalar ``Yinsh-v0`` (:class:`yinsh_env.envs.gym_env.YinshGymEnv`) for N games
at once, on the batched engine: the same observations (planes and int8
mask, from the learner's side), actions, rewards (+1 / -1 / 0 at the end,
``illegal_reward`` for an illegal action) and game ends.  One ``step`` is
one decision of the learner in every game; the opponent then makes all its
decisions (for all games at once: :mod:`yinsh_env.vector.batch_agents`) until the learner is
to act again.  ``self_play=True`` makes both seats the learner: every step
is a decision of the player to act, seen from their side, and the reward
goes to the player who made it.

Autoreset is Gymnasium's ``SAME_STEP`` (``autoreset_mode``, an attribute
and in ``metadata`` as Gymnasium's vector environments carry it, where
TorchRL reads it): a game that ends is reset inside
the step, the returned observation is the new game's (its mask valid), and
``info["final_obs"]`` / ``info["final_info"]`` (with ``_final_obs`` /
``_final_info`` flags) hold the finished game's last observation (mask all
zeros, as the scalar env shows it) and its ``result``, ``end_reason``,
``learner`` and ``opponent`` (whatever the opponent: a sampler's name for
it, else the agent's ``name``, ``"random"`` for None, ``"self"`` in self-play).
``learner="alternate"`` gives game i's k-th episode the side
``(i + k) % 2`` (White is player_0), so half the games start as Black.

``autoreset_mode=AutoresetMode.DISABLED`` (Gymnasium's other mode for vector
environments, and TorchRL's preferred one) leaves a finished game as it
ended: its observation is the last one, ``info`` holds ``result``,
``end_reason`` and ``learner`` (with ``_key`` flags, as Gymnasium's own
vector environments give a sub-environment's info), and ``step`` raises
``ResetNeeded`` until ``reset(options={"reset_mask": mask})`` has started
it anew (in any mode, a ``reset_mask`` resets only the games it marks).
``NEXT_STEP`` (Gymnasium's default, and RLlib's) ends a game as ``DISABLED``
does; the next ``step`` ignores that game's action and starts it anew
(reward 0, not done, the new game's observation).

Everything ``reset``, ``step``, ``action_masks`` and ``learner_seats``
return is made for that call (observations, masks, rewards, flags, infos,
final observations): the caller's to edit or keep, as TorchRL does.

Limits, checked before anything is allocated or played: ``num_envs`` is at
most :data:`MAX_NUM_ENVS`; ``self_play`` is a bool; ``dense_reward``,
``threat_reward``, ``gamma`` and ``opening_plies`` as
:mod:`~yinsh_env.envs.env_base` checks them.
``step`` before the first ``reset`` (or after a ``reset`` or ``step`` that
raised part-way, e.g. from an opponent) raises Gymnasium's ``ResetNeeded``,
as ``Yinsh-v0`` does; any call after ``close()`` raises its
``ClosedEnvironmentError``.
"""

from __future__ import annotations

from typing import Any, Final

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from yinsh_env.engine.actions import N_ACTIONS
from yinsh_env.engine.errors import IllegalActionError, NotAnActionError, bounded_repr
from yinsh_env.engine.state import DEFAULT_RINGS_TO_WIN
from yinsh_env.engine.vocabulary import Result, Termination
from yinsh_env.envs.env_base import (
    AGENTS,
    ILLEGAL_REWARD,
    check_flag,
    check_opening_plies,
    check_options,
    check_reward,
    check_seed,
    check_shaping,
    check_weight,
    make_observation_space,
    parse_learner,
    ring_potential,
    threat_potential,
)
from yinsh_env.envs.matchmaking import Entry, is_sampler
from yinsh_env.vector.batch_agents import (
    BatchOpponent,
    RandomOpponent,
    batch_opponent,
    random_legal,
)
from yinsh_env.vector.batch_state import new_batch, reset_games
from yinsh_env.vector.legal import refresh_mask
from yinsh_env.vector.observe import encode, masks_for
from yinsh_env.vector.step import apply, outcome, play_opening, play_random_turns
from yinsh_env.vector.tables import OVER

__all__ = ["AUTORESET_MODES", "MAX_NUM_ENVS", "YinshVectorEnv", "check_num_envs", "opponent_name"]

#: The autoreset modes the vector env offers (the first is the default).
AUTORESET_MODES: Final = (AutoresetMode.SAME_STEP, AutoresetMode.DISABLED, AutoresetMode.NEXT_STEP)

#: The most games one vector environment holds: about 1.6 GB at construction (its
#: batched spaces and states) and 0.7 GB of observations a step; checked first, as
#: a million games would run out of memory only after gigabytes.
MAX_NUM_ENVS: Final = 65536

Observation = dict[str, np.ndarray]
_RESULTS: Final = (Result.WHITE_WINS, Result.BLACK_WINS, Result.DRAW)
_ENDS: Final = (Termination.RINGS, Termination.POOL, Termination.PASSES)


class YinshVectorEnv(gymnasium.vector.VectorEnv[Observation, np.ndarray, np.ndarray]):
    """N YINSH games against ``opponent`` (or in self-play), stepped together.

    Args:
        num_envs: the number of games.
        opponent: as ``Yinsh-v0`` takes it (None random, an agent, a callable,
            a sampler of :mod:`yinsh_env.envs.matchmaking` choosing per game and
            episode) or a batch opponent (``act_batch``).
        learner: ``"alternate"`` (module docstring), ``"random"``, or a side
            (``"player_0"``/``"white"``/0, ``"player_1"``/``"black"``/1).
        rings_to_win: 3 standard, 1 Blitz.
        illegal_reward: an illegal action ends that game with this reward;
            None raises :class:`IllegalActionError` with nothing changed.
        self_play: both seats are the learner (no opponent).
        dense_reward: the weight of potential-based shaping from rings
            removed (:mod:`~yinsh_env.envs.env_base`); 0, the default, is off.
        threat_reward: the weight of the same shaping from rows threatened
            (:func:`~yinsh_env.envs.env_base.threat_potential`); 0 is off.
        gamma: the discount the shaping is consistent with.
        opening_plies: each game opens with this many uniformly random ring
            placements, drawn from the env's seeded generator, as the arena
            opens its games (``ARENA_OPENING_PLIES``); 0, the default, is the
            empty board.
        autoreset_mode: ``SAME_STEP`` (the default), ``DISABLED`` or
            ``NEXT_STEP`` (the module docstring), an
            :class:`~gymnasium.vector.AutoresetMode` or its value (``"SameStep"``).

    >>> from yinsh_env.vector import YinshVectorEnv
    >>> envs = YinshVectorEnv(num_envs=4, opponent=None)
    >>> obs, info = envs.reset(seed=0)
    >>> obs["observation"].shape, obs["action_mask"].shape
    ((4, 11, 11, 17), (4, 2142))
    >>> envs.learner_seats.tolist()  # "alternate": half the games start as Black
    [0, 1, 0, 1]
    >>> actions = envs.action_masks().argmax(axis=1)  # each game's first legal action
    >>> obs, reward, terminated, truncated, info = envs.step(actions)
    >>> reward.tolist(), terminated.tolist()
    ([0.0, 0.0, 0.0, 0.0], [False, False, False, False])
    """

    #: Gymnasium's vector environments carry it as an attribute (TorchRL reads it there).
    autoreset_mode: AutoresetMode = AutoresetMode.SAME_STEP
    metadata: dict[str, Any] = {  # noqa: RUF012 (Gymnasium's class attribute)
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 8,
        opponent: Any = None,
        learner: str | int = "alternate",
        rings_to_win: int = DEFAULT_RINGS_TO_WIN,
        illegal_reward: float | None = ILLEGAL_REWARD,
        self_play: bool = False,
        dense_reward: float = 0.0,
        gamma: float = 0.99,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        threat_reward: float = 0.0,
        opening_plies: int = 0,
    ) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r}: the vector env does not render")
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.self_play = check_flag("self_play", self_play)
        if self.self_play and opponent is not None:
            raise ValueError("self_play has both seats the learner: pass no opponent")
        self.dense_reward, self.gamma = check_shaping(dense_reward, gamma)
        self.threat_reward = check_weight("threat_reward", threat_reward)
        if self.self_play and (self.dense_reward or self.threat_reward):
            raise ValueError("dense rewards are for a learner against an opponent, not self_play")
        self.opening_plies = check_opening_plies(opening_plies)
        self._side_choice = parse_learner(learner)
        self.illegal_reward = check_reward(illegal_reward)
        self._batch = new_batch(check_num_envs(num_envs), rings_to_win)
        self.num_envs = self._batch.num_games
        #: Why step() must wait for reset(): none yet, or a reset or step raised part-way.
        self._needs_reset: str | None = "step() before reset()"
        self.opponent = opponent
        self._opponent_name = "self" if self_play else opponent_name(opponent)
        self._sampler = opponent if is_sampler(opponent) else None
        self._players: list[BatchOpponent] = (
            [] if self._sampler is not None or self_play else [batch_opponent(opponent)]
        )
        #: id(a sampled opponent) -> (that opponent, its index in _players)
        self._player_of: dict[int, tuple[Any, int]] = {}
        self._slot = np.zeros(self.num_envs, dtype=np.int64)
        self._entries: list[Entry | None] = [None] * self.num_envs
        self._learner = np.zeros(self.num_envs, dtype=np.int64)
        self._episodes = np.zeros(self.num_envs, dtype=np.int64)
        self._phi = np.zeros(self.num_envs, dtype=np.float64)
        self._all = np.arange(self.num_envs)
        #: DISABLED, NEXT_STEP: the games that ended and wait for a reset, and the seat
        #: that saw it.
        self._over = np.zeros(self.num_envs, dtype=np.bool_)
        self._over_seat = np.zeros(self.num_envs, dtype=np.int64)
        #: The one opponent plays uniformly at random: its actions are drawn from the
        #: positions (play_random_turns) and its masks never built (see _apply).
        self._random_only = len(self._players) == 1 and type(self._players[0]) is RandomOpponent
        self.single_observation_space = make_observation_space()
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(None)

    # --- episodes ------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start every game afresh, or those ``options["reset_mask"]`` marks.

        ``options`` as ``Yinsh-v0`` checks them (a dict of known string keys,
        else an error naming the key); known here: ``"learner"``, the side (as
        the constructor takes it) in the games started now, and
        ``"reset_mask"``, (num_envs,) bools: the games to start anew (Gymnasium's
        option; the others keep their positions).  The observations returned
        are every game's."""
        seed = check_seed(seed)
        options = check_options(options, ("learner", "reset_mask"))
        side = parse_learner(options["learner"]) if "learner" in options else None
        if side is not None and self.self_play:
            raise ValueError("reset option 'learner': self_play has both seats the learner")
        self._require_open("reset")
        games = self._all if "reset_mask" not in options else self._masked(options["reset_mask"])
        self._needs_reset = "the last reset() raised part-way"
        super().reset(seed=seed)
        if seed is not None:
            self._episodes[games] = 0
            for player in self._players:
                reseed = getattr(player, "reset", None)
                if callable(reseed):
                    reseed(seed=int(self.np_random.integers(2**31)))
        reset_games(self._batch, games)
        self._over[games] = False
        self._start(games, side)
        self._needs_reset = None
        return self._observe(), {}

    def _masked(self, mask: Any) -> np.ndarray:
        """The games a ``reset_mask`` marks; ValueError unless it is num_envs bools, and
        ResetNeeded where some games were never started (or a call raised part-way)."""
        marks = np.asarray(mask)
        if marks.dtype != np.bool_ or marks.shape != (self.num_envs,):
            raise ValueError(
                f"reset option 'reset_mask' must be {self.num_envs} bools, "
                f"got {marks.dtype} of shape {marks.shape}"
            )
        if self._needs_reset is not None and not marks.all():
            raise gymnasium.error.ResetNeeded(
                f"{self._needs_reset}: reset every game before a reset_mask"
            )
        return np.flatnonzero(marks)

    def _start(
        self, games: np.ndarray, side: str | int | None = None, refresh: bool = True
    ) -> None:
        """Games ``games`` were just reset: choose sides (``side``, else the constructor's
        choice) and opponents, let them open (``refresh``: see :meth:`_apply`)."""
        side = self._side_choice if side is None else side
        if self.self_play:
            side = 0
        if side == "alternate":
            self._learner[games] = (games + self._episodes[games]) % 2
        elif side == "random":
            self._learner[games] = self.np_random.integers(2, size=games.size)
        else:
            self._learner[games] = int(side)
        self._episodes[games] += 1
        self._phi[games] = 0.0
        play_opening(self._batch, games, self.opening_plies, self.np_random)
        if self._sampler is not None:
            for game in games:
                self._entries[game] = entry = self._sampler.sample(self.np_random)
                self._slot[game] = self._player_for(entry.opponent)
        if not self.self_play:
            self._play_opponents(games, refresh)

    def _player_for(self, opponent: Any) -> int:
        known = self._player_of.get(id(opponent))
        if known is not None and known[0] is opponent:
            return int(known[1])
        self._players.append(batch_opponent(opponent))
        self._player_of[id(opponent)] = (opponent, len(self._players) - 1)
        return len(self._players) - 1

    def _play_opponents(self, games: np.ndarray, refresh: bool = True) -> None:
        """Let the opponents act in ``games`` until the learner must act (or the game ends);
        ``refresh=False``: see :meth:`_apply`.

        Each round asks every opponent for its games' decisions, then applies
        them all at once: one observation encoding and one engine call a round,
        however many opponents share the games (a snapshot pool has several).
        The games are independent, so this is the same play as one opponent at a time.
        """
        batch = self._batch
        while games.size:
            games = games[
                (batch.phase[games] != OVER) & (batch.to_act[games] != self._learner[games])
            ]
            if not games.size:
                break
            if self._random_only:
                play_random_turns(batch, games, self.np_random)
                if refresh:
                    self._refresh_shown(games)
                continue
            apply(batch, games, self._decide(games))

    def _decide(self, games: np.ndarray) -> np.ndarray:
        """Each game's opponent's action in ``games`` (where an opponent is to act).

        Opponents that share a ``joint`` object are asked through it, once for
        all of them (:class:`~yinsh_env.vector.batch_agents.JointOpponents`).
        """
        batch = self._batch
        groups: list[tuple[Any, Any]]  # (opponent, its games: a mask over games, or all)
        if len(self._players) > 1:
            slots = self._slot[games]
            groups = [(self._players[slot], slots == slot) for slot in np.unique(slots)]
        else:
            groups = [(self._players[0], slice(None))]
        observed = any(getattr(player, "observes", True) for player, _ in groups)
        planes = encode(batch, games) if observed else None  # once for every opponent
        actions = np.empty(games.size, dtype=np.int64)
        together: dict[int, tuple[Any, list[tuple[Any, Any, Any, np.ndarray]]]] = {}
        for player, chosen in groups:
            mine = games[chosen]
            if type(player) is RandomOpponent:  # draws from the masks: legal by construction
                actions[chosen] = random_legal(batch.mask, self.np_random, mine)
                continue
            observes = getattr(player, "observes", True)
            seen = planes[chosen] if planes is not None and observes else None
            masks = batch.mask[mine].view(np.int8)  # a copy already (fancy indexing)
            joint = getattr(player, "joint", None)
            if joint is None:
                decided = player.act_batch(seen, masks, self.np_random)
                actions[chosen] = self._checked(player, mine, decided)
            else:
                together.setdefault(id(joint), (joint, []))[1].append((player, chosen, seen, masks))
        for joint, asked in together.values():
            answers = list(joint.act_joint([(p, s, m) for p, _, s, m in asked], self.np_random))
            if len(answers) != len(asked):
                raise IllegalActionError(
                    f"{joint!r} answered {len(answers)} of {len(asked)} opponents: call reset()"
                )
            for (player, chosen, _, _), answer in zip(asked, answers):
                actions[chosen] = self._checked(player, games[chosen], answer)
        return actions

    def _checked(self, player: Any, games: np.ndarray, chosen: Any) -> np.ndarray:
        """``chosen`` as int64 actions, one legal action for each of ``games``, else
        IllegalActionError naming ``player``."""
        decided = np.asarray(chosen, np.int64)
        if (
            decided.shape != games.shape
            or not ((decided >= 0) & (decided < N_ACTIONS)).all()
            or not self._batch.mask[games, decided].all()
        ):
            raise IllegalActionError(
                f"opponent {player!r} chose illegal actions {decided}: call reset()"
            )
        return decided

    def _apply(self, games: np.ndarray, actions: np.ndarray, refresh: bool = True) -> None:
        """Apply ``actions`` in ``games``; against the random opponent, refresh only the
        masks someone reads: the learner's, and those of finished games (all zeros), and
        with ``refresh=False`` none (the step refreshes every game's mask once, at its end)."""
        batch = self._batch
        if not self._random_only:
            apply(batch, games, actions)
            return
        apply(batch, games, actions, refresh=False)
        if refresh:
            self._refresh_shown(games)

    def _refresh_shown(self, games: np.ndarray) -> None:
        """Refresh the masks of ``games`` that someone reads: finished games' and those
        where the learner is to act."""
        batch = self._batch
        shown = (batch.phase[games] == OVER) | (batch.to_act[games] == self._learner[games])
        refresh_mask(batch, games if shown.all() else games[shown])

    # --- steps ---------------------------------------------------------------------

    def step(
        self, actions: Any
    ) -> tuple[Observation, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._require_open("step")
        if self._needs_reset is not None:
            raise gymnasium.error.ResetNeeded(f"{self._needs_reset}: call reset() first")
        restart = np.flatnonzero(self._over)
        if restart.size and self.autoreset_mode is AutoresetMode.DISABLED:
            raise gymnasium.error.ResetNeeded(
                f"games {bounded_repr(restart.tolist())} are over "
                "(autoreset_mode DISABLED): reset them with reset(options={'reset_mask': ...})"
            )
        acts = self._check_actions(actions)
        batch = self._batch
        legal = batch.mask[self._all, acts]
        legal[restart] = True  # NEXT_STEP: their actions are not read
        if self.illegal_reward is None and not legal.all():
            game = int(np.argmin(legal))
            raise IllegalActionError(f"action {int(acts[game])} is illegal in game {game}")
        self._needs_reset = "the last step() raised part-way"  # until it completes
        if restart.size:  # NEXT_STEP: the games that ended last step start anew
            reset_games(batch, restart)
            self._over[restart] = False
            self._start(restart, refresh=not self._random_only)
        seat = batch.to_act.copy() if self.self_play else self._learner.copy()
        played = self._all[legal]
        if restart.size:
            played = np.setdiff1d(played, restart, assume_unique=True)
        self._apply(played, acts[played], refresh=False)
        if not self.self_play:
            self._play_opponents(played, refresh=False)
        over = batch.phase == OVER
        done = over | ~legal
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        finished = np.flatnonzero(over)
        winner, ending = outcome(batch, finished)
        rewards[finished] = np.where(winner < 0, 0.0, np.where(winner == seat[finished], 1.0, -1.0))
        rewards[~legal] = self.illegal_reward if self.illegal_reward is not None else 0.0
        if self.dense_reward or self.threat_reward:
            phi = np.where(done, 0.0, self._potential(seat, np.flatnonzero(~done)))
            rewards += self.gamma * phi - self._phi
            self._phi = phi
            rewards[restart] = self._phi[restart] = 0.0  # a new game's start, as SAME_STEP's
        infos: dict[str, Any] = {}
        ended = np.flatnonzero(done)
        if ended.size:
            self._finish(ended, seat, finished, winner, ending, acts, rewards, infos)
        if self._random_only:  # the masks left stale by this step's actions and new games
            refresh_mask(batch, self._all)
        self._needs_reset = None
        return self._observe(), rewards, done, np.zeros(self.num_envs, dtype=np.bool_), infos

    def _finish(
        self,
        ended: np.ndarray,
        seat: np.ndarray,
        finished: np.ndarray,
        winner: np.ndarray,
        ending: np.ndarray,
        acts: np.ndarray,
        rewards: np.ndarray,
        infos: dict[str, Any],
    ) -> None:
        """Report the games ``ended`` in ``infos`` (the arrays and ``_key`` flags that
        Gymnasium's ``_add_info`` makes), tell a sampler, and start new games (against
        the random opponent their masks are left for the step to refresh), or with
        autoreset DISABLED leave them over until a reset."""
        batch = self._batch
        n = self.num_envs
        info: dict[str, Any] = {}

        def column(key: str, games: np.ndarray, values: Any, dtype: Any = object) -> None:
            array = np.zeros(n, dtype=dtype) if dtype is not object else np.full(n, None, object)
            flags = np.zeros(n, dtype=np.bool_)
            array[games], flags[games] = values, True
            info[key], info[f"_{key}"] = array, flags

        column("learner", ended, [AGENTS[s] for s in seat[ended].tolist()])
        if finished.size:
            column("result", finished, [_RESULTS[w] for w in winner.tolist()])
            column("end_reason", finished, [_ENDS[e] for e in ending.tolist()])
        illegal = ended[batch.phase[ended] != OVER]  # ended on an illegal action
        if illegal.size:
            column("illegal_action", illegal, acts[illegal], np.int64)
        if self._sampler is None:
            column("opponent", ended, [self._opponent_name] * ended.size)
        else:
            entries = [self._entries[game] for game in ended.tolist()]
            column("opponent", ended, [entry.name if entry else None for entry in entries])
            for game, entry in zip(ended.tolist(), entries):
                if entry is not None:
                    self._sampler.record(entry, float(rewards[game]))
        if self.autoreset_mode is not AutoresetMode.SAME_STEP:
            infos.update(info)
            self._over[ended] = True
            self._over_seat[ended] = seat[ended]
            return
        planes, masks = self._last_observations(ended, seat[ended])
        final_obs = np.full(n, None, dtype=object)
        for i, game in enumerate(ended.tolist()):
            final_obs[game] = {"observation": planes[i], "action_mask": masks[i]}
        flags = np.zeros(n, dtype=np.bool_)
        flags[ended] = True
        infos.update(final_obs=final_obs, _final_obs=flags, final_info=info, _final_info=flags)
        reset_games(batch, ended)
        self._start(ended, refresh=not self._random_only)

    def _potential(self, seat: np.ndarray, live: np.ndarray) -> np.ndarray:
        """The shaping potential of every game from ``seat``'s side (rows threatened
        counted in the ``live`` games only: the others' potential is 0)."""
        removed = self._batch.removed
        own, opp = removed[self._all, seat], removed[self._all, 1 - seat]
        phi = ring_potential(own, opp, self._batch.rings_to_win, self.dense_reward)
        if self.threat_reward and live.size:
            planes = encode(self._batch, live, seat[live])
            phi[live] += threat_potential(planes, self.threat_reward)
        return phi

    def _check_actions(self, actions: Any) -> np.ndarray:
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise NotAnActionError(
                f"actions must be {self.num_envs} integers, got {acts.dtype} of shape {acts.shape}"
            )
        if acts.min() < 0 or acts.max() >= N_ACTIONS:
            raise NotAnActionError(f"actions must be in 0..{N_ACTIONS - 1}, got {acts}")
        return acts.astype(np.int64, copy=False)  # read, never written

    def _observe(self) -> Observation:
        batch = self._batch
        observation = {
            "observation": encode(batch),
            "action_mask": batch.mask.view(np.int8).copy(),
        }
        if self._over.any():  # a game over shows its last observation until it restarts
            over = np.flatnonzero(self._over)
            planes, masks = self._last_observations(over, self._over_seat[over])
            observation["observation"][over] = planes
            observation["action_mask"][over] = masks
        return observation

    def _last_observations(self, games: np.ndarray, seats: np.ndarray) -> tuple[Any, Any]:
        """The planes and masks that ``games``, just ended, show ``seats``: the scalar
        env's last observation (its mask all zeros once the game is over)."""
        return encode(self._batch, games, seats), masks_for(self._batch, games, seats)

    # --- queries -------------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """(num_envs, 2142) int8: the legal actions of the player to act in each game."""
        self._require_open("action_masks")
        return self._batch.mask.view(np.int8).copy()

    @property
    def learner_seats(self) -> np.ndarray:
        """(num_envs,) the side the learner plays in each game now (0 White, 1 Black)."""
        self._require_open("learner_seats")
        return self._batch.to_act.copy() if self.self_play else self._learner.copy()

    def _require_open(self, call: str) -> None:
        if self.closed:
            raise gymnasium.error.ClosedEnvironmentError(
                f"{call}() after close(): this vector env is closed; make a new one"
            )

    def close_extras(self, **kwargs: Any) -> None:
        close = getattr(self.opponent, "close", None)
        if callable(close):
            close()


def opponent_name(opponent: Any) -> str:
    """What ``final_info["opponent"]`` calls a fixed opponent: ``"random"`` for None, else
    its ``name`` (an agent's spec), a function's name, or its class name."""
    if opponent is None:
        return "random"
    for attribute in ("name", "__name__"):
        name = getattr(opponent, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(opponent).__name__


def check_num_envs(num_envs: object) -> int:
    """``num_envs`` as an int if it is an integer ``1..MAX_NUM_ENVS`` (a bool is not),
    else ValueError naming it: before anything is allocated."""
    if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)):
        raise ValueError(f"num_envs must be an integer, got {bounded_repr(num_envs)}")
    if not 1 <= num_envs <= MAX_NUM_ENVS:
        raise ValueError(
            f"num_envs must be an integer 1..{MAX_NUM_ENVS}, got {bounded_repr(num_envs)}"
        )
    return int(num_envs)


def _autoreset_mode(mode: object) -> AutoresetMode:
    """``mode`` as one of :data:`AUTORESET_MODES` (the enum or its value), else ValueError."""
    try:
        chosen = AutoresetMode(mode)
    except (ValueError, TypeError):
        chosen = None
    if chosen not in AUTORESET_MODES:
        offered = ", ".join(f"AutoresetMode.{m.name}" for m in AUTORESET_MODES)
        raise ValueError(f"autoreset_mode must be one of {offered}, got {bounded_repr(mode)}")
    return chosen
