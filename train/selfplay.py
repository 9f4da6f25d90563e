"""Self-play: many games advance together and share one network batch per step.

:func:`play_games` keeps ``games_in_flight`` games open.  Every round, each
game runs its search up to the next leaf that needs the network; the leaves
of all games go through the network in one batch; then each search takes its
answer and goes on.  A game whose search is done plays its move, and a
finished game makes room for the next one.

Each game is played through the PettingZoo AEC environment
(:func:`yinsh_env.env`, with ``selfplay.rings_to_win``): every real decision
is an ``env.step``; a recorded position's network input and legal actions
are ``env.observe(agent)``'s planes and mask; the outcome is the env's
rewards.  The search walks a copy of the env's state
(:meth:`~yinsh_env.envs.aec_env.raw_env.copy_state`), so its simulations skip the
env's per-step work.

Cheap self-play (KataGo):

* playout-cap randomisation: a move gets a full search with probability
  ``full_search_prob`` (with root noise; its position becomes a training
  sample), otherwise a fast search that only plays the move;
* forced moves (a single legal action) are played without search; they are
  still recorded (``record_forced``): their policy target teaches nothing, but
  their value target does, and they are the positions a search meets right
  after a move that makes a row;
* resignation once the searched value stays below a threshold, except in a
  share of games that never resign and measure how often resigning would
  have been wrong.

Every random choice of a game comes from its own generator, seeded from the
game's seed, so the games do not depend on which others share their batches.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from agents.network.search_rules import search_rules
from agents.search import BatchEvaluator, Leaf, Node, Search, advance
from train.config import SearchConfig, SelfPlayConfig
from train.replay import GameSamples, pack_planes
from yinsh_env.envs.aec_env import env
from yinsh_env.envs.aec_env import raw_env as RawEnv
from yinsh_env.envs.env_base import AGENTS
from yinsh_env.envs.observation import bitboard_plane


def temperature_at(schedule: list[tuple[int, float]], ply: int) -> float:
    """The temperature of the last schedule step at or before ``ply``."""
    temperature = schedule[0][1]
    for start, value in schedule:
        if ply >= start:
            temperature = value
    return temperature


@dataclass
class GameStats:
    """What a finished self-play game reports besides its samples."""

    index: int
    plies: int
    result: str  # 'W', 'B' or 'draw'
    end_reason: str  # 'rings', 'pool', 'passes' or 'resign'
    full_searches: int
    fast_searches: int
    simulations: int
    resign_disabled: bool
    #: In a game that never resigns: whether a player would have resigned, and
    #: whether that player then avoided losing (a false resignation).
    would_resign: bool = False
    false_resign: bool = False
    actions: list[int] = field(default_factory=list)


@dataclass
class SelfPlayResult:
    """An iteration's self-play games, with what playing them cost (time, network calls)."""

    games: list[GameSamples]
    stats: list[GameStats]
    #: Wall time of the slowest worker, and all workers' time added up.
    seconds: float = 0.0
    worker_seconds: float = 0.0
    network_seconds: float = 0.0
    network_positions: int = 0
    network_batches: int = 0
    #: CPU seconds of the worker processes or actors that played these games
    #: (0 when they ran in the trainer's own process, which counts them itself).
    cpu_seconds: float = 0.0

    def merge(self, other: SelfPlayResult) -> None:
        self.games += other.games
        self.stats += other.stats
        self.seconds = max(self.seconds, other.seconds)
        self.worker_seconds += other.worker_seconds
        self.network_seconds += other.network_seconds
        self.network_positions += other.network_positions
        self.network_batches += other.network_batches
        self.cpu_seconds += other.cpu_seconds


class SelfPlayGame:
    """One game in progress: its position, current search and recorded samples."""

    def __init__(
        self, index: int, seed: int, search: SearchConfig, selfplay: SelfPlayConfig
    ) -> None:
        self.index = index
        self.rng = np.random.default_rng(seed)
        self.search_config = search
        self.rules = search_rules(search)
        self.config = selfplay
        #: The game itself: every real decision is a step of the AEC env.
        self.env = env(rings_to_win=selfplay.rings_to_win)
        self.env.reset()
        self._base: RawEnv = self.env.unwrapped
        #: A copy of the env's position for the search to walk (refreshed after each step).
        self.state = self._base.copy_state()
        self.search: Search | None = None
        self.tree: Node | None = None
        self.full = False
        self.resign_disabled = bool(self.rng.random() < selfplay.resign_disabled_fraction)
        self.low_value_streak = [0, 0]
        self.resigned: int | None = None
        self.would_resign: int | None = None
        #: (observation, player to act, legal actions, policy target, searched value).
        self.samples: list[tuple[np.ndarray, int, np.ndarray, np.ndarray, float]] = []
        #: Every decision of the game as (player, action), and the decision each
        #: sample was recorded at (for the opponent's-next-action target).
        self.moves: list[tuple[int, int]] = []
        self.sample_plies: list[int] = []
        self.full_searches = self.fast_searches = self.simulations = 0

    @property
    def over(self) -> bool:
        base = self._base
        return self.resigned is not None or base.terminations[base.agent_selection]

    def next_leaf(self) -> Leaf | None:
        """Advance to the next position needing the network; None when the game is over."""
        while not self.over:
            if self.search is None:
                legal = self.state.legal_actions()
                if len(legal) == 1:
                    if self.config.record_forced:
                        self._record(np.asarray(legal), np.ones(1, dtype=np.float32), np.nan)
                    self._play(legal[0])
                    continue
                self._start_search()
            assert self.search is not None
            leaf = self.search.next_leaf()
            if leaf is not None:
                return leaf
            self._finish_move()
        return None

    def expand(self, logits: np.ndarray, value: float) -> None:
        assert self.search is not None
        self.search.expand(logits, value)

    def _start_search(self) -> None:
        self.full = bool(self.rng.random() < self.config.full_search_prob)
        sims = self.search_config.simulations if self.full else self.config.fast_simulations
        temperature = temperature_at(self.config.temperature, self.state.ply)
        noise = self.full or (self.rules.samples_with_noise and temperature > 0)
        self.search = Search(self.state, self.rules, sims, self.rng, noise, self.tree)

    def _finish_move(self) -> None:
        search = self.search
        assert search is not None and search.root is not None
        root = search.root
        self.simulations += search.done_simulations
        if self.full:
            self.full_searches += 1
            target = search.policy_target().astype(np.float32)
            self._record(root.actions, target, search.root_value())
        else:
            self.fast_searches += 1
        if self._check_resign(search.root_value()):
            return
        temperature = temperature_at(self.config.temperature, self.state.ply)
        action = int(root.actions[search.choose(temperature)])
        self._play(action)

    def _record(self, actions: np.ndarray, policy: np.ndarray, value: float) -> None:
        """Keep the current position as a training sample with this policy target
        and the search's value of it (NaN where no search ran).

        The network's input and the legal actions are what the env observes
        for the agent to act (``policy`` is over ``actions``, the same sorted
        legal actions the search's root holds).
        """
        observation = self.env.observe(self._base.agent_selection)
        legal = np.flatnonzero(observation["action_mask"])
        if not np.array_equal(legal, actions):
            raise RuntimeError("the search's legal actions differ from the env's action mask")
        self.samples.append((observation["observation"], self.state.to_act, legal, policy, value))
        self.sample_plies.append(len(self.moves))

    def _check_resign(self, value: float) -> bool:
        threshold = self.config.resign_threshold
        me = self.state.to_act
        if threshold <= -1.0:
            return False
        self.low_value_streak[me] = self.low_value_streak[me] + 1 if value < threshold else 0
        if self.low_value_streak[me] < self.config.resign_moves:
            return False
        if self.resign_disabled:
            if self.would_resign is None:
                self.would_resign = me
            return False
        self.resigned = me
        self.search = None
        return True

    def _play(self, action: int) -> None:
        """Step the env with ``action``, keeping its subtree (through forced moves too)."""
        search, self.search = self.search, None
        root = search.root if search is not None else self.tree
        self.tree = advance(root, action) if self.search_config.reuse_tree else None
        self.moves.append((self.state.to_act, action))
        self.env.step(action)
        self.state = self._base.copy_state()

    def finish(self) -> tuple[GameSamples, GameStats]:
        state = self._base.game
        if self.resigned is not None:
            returns = np.zeros(2, dtype=np.float32)
            returns[self.resigned], returns[1 - self.resigned] = -1.0, 1.0
            result, reason = "WB"[1 - self.resigned], "resign"
        else:
            # The outcome is the env's: its rewards once every agent is terminated.
            rewards = self._base.rewards
            returns = np.array([rewards[AGENTS[0]], rewards[AGENTS[1]]], dtype=np.float32)
            result, reason = state.result, state.end_reason or ""
        false_resign = self.would_resign is not None and returns[self.would_resign] >= 0
        samples = self._samples(returns)
        stats = GameStats(
            index=self.index,
            plies=state.ply,
            result=result,
            end_reason=reason,
            full_searches=self.full_searches,
            fast_searches=self.fast_searches,
            simulations=self.simulations,
            resign_disabled=self.resign_disabled,
            would_resign=self.would_resign is not None,
            false_resign=bool(false_resign),
            actions=state.actions,
        )
        return samples, stats

    def _samples(self, returns: np.ndarray) -> GameSamples:
        state = self._base.game
        n = len(self.samples)
        planes = (
            np.stack([s[0] for s in self.samples]) if n else np.zeros((0, 11, 11, 17), np.float32)
        )
        bits, values = pack_planes(planes)
        lengths = [len(s[2]) for s in self.samples]
        return GameSamples(
            bits=bits,
            plane_values=values,
            players=np.array([s[1] for s in self.samples], dtype=np.int8),
            policy_actions=np.concatenate([s[2] for s in self.samples] or [np.zeros(0)]).astype(
                np.int16
            ),
            policy_probs=np.concatenate([s[3] for s in self.samples] or [np.zeros(0)]).astype(
                np.float32
            ),
            policy_offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            returns=returns,
            removed=np.asarray(state.removed, dtype=np.float32),
            rings_to_win=state.rings_to_win,
            finished=self.resigned is None,
            final_markers=np.stack([bitboard_plane(m) for m in state.markers]).astype(np.int8),
            search_values=np.array([s[4] for s in self.samples], dtype=np.float32),
            opponent_actions=self._opponent_actions(),
        )

    def _opponent_actions(self) -> np.ndarray:
        """Per sample: the next action the other player took (-1: none, the game ended)."""
        upcoming = [-1, -1]  # each player's next action, walking the game backwards
        after: list[tuple[int, int]] = [(-1, -1)] * (len(self.moves) + 1)
        for ply in range(len(self.moves) - 1, -1, -1):
            player, action = self.moves[ply]
            upcoming[player] = action
            after[ply] = (upcoming[0], upcoming[1])
        opponents = [
            after[ply][1 - sample[1]] for ply, sample in zip(self.sample_plies, self.samples)
        ]
        return np.array(opponents, dtype=np.int16)


def play_games(
    evaluate: BatchEvaluator,
    seeds: list[int],
    search: SearchConfig,
    selfplay: SelfPlayConfig,
    first_index: int = 0,
) -> SelfPlayResult:
    """Play one game per seed, ``selfplay.games_in_flight`` at a time, leaves batched.

    Games are returned in seed order; ``first_index`` numbers them.
    """
    start = time.perf_counter()
    queue = deque(enumerate(seeds, start=first_index))
    active: list[SelfPlayGame] = []
    finished: list[tuple[GameSamples, GameStats]] = []
    while queue or active:
        while queue and len(active) < selfplay.games_in_flight:
            index, seed = queue.popleft()
            active.append(SelfPlayGame(index, seed, search, selfplay))
        leaves: list[Leaf] = []
        waiting: list[SelfPlayGame] = []
        for game in active:
            leaf = game.next_leaf()
            if leaf is None:
                finished.append(game.finish())
            else:
                leaves.append(leaf)
                waiting.append(game)
        if leaves:
            logits, values = evaluate(leaves)
            for game, leaf_logits, value in zip(waiting, logits, values):
                game.expand(leaf_logits, float(value))
        active = waiting
    finished.sort(key=lambda item: item[1].index)
    seconds = time.perf_counter() - start
    return SelfPlayResult(
        games=[g for g, _ in finished],
        stats=[s for _, s in finished],
        seconds=seconds,
        worker_seconds=seconds,
    )
