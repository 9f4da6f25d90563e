"""What the agents playing RL-library policies share (``sb3:``, ``rllib:``).

Each library gives a distribution over the 2,142 actions in its own way; the
agent plays its most likely legal action (``greedy=true``, the default) or
samples one with its own seeded generator, on ``threads`` torch threads.

The examples record the variant a policy was trained for (``rings_to_win``,
which the observation planes encode) beside it: a ``yinsh.json`` file inside
the RLlib module directory or inside the SB3 model's zip, which SB3 ignores.
The agent then knows its variant, so the arena refuses to play it in another
one; files without it (made elsewhere) play any variant.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
import torch

from agents.base import Agent, batch_arrays
from agents.params import PathText, Threads, checked
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import decode
from yinsh_env.util.atomic_write import write_text

#: The file (in a directory or a zip) that names the variant a policy was trained for.
VARIANT_FILE = "yinsh.json"


def save_variant(path: str | Path | BinaryIO, rings_to_win: int) -> None:
    """Record ``rings_to_win`` with the policy saved at ``path`` (a directory, a zip,
    or a zip being built in memory)."""
    text = json.dumps({"rings_to_win": int(rings_to_win)})
    if isinstance(path, (str, Path)) and Path(path).is_dir():
        write_text(Path(path) / VARIANT_FILE, text)
        return
    with zipfile.ZipFile(path, "a") as archive:
        if VARIANT_FILE not in archive.namelist():
            archive.writestr(VARIANT_FILE, text)


def sample_rows(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n,) one column per row of ``weights`` (n, k), drawn in proportion to the row.

    A column of weight 0 is never drawn; a row without a positive weight is a
    ValueError naming it.
    """
    cumulative = np.cumsum(np.asarray(weights, dtype=np.float64), axis=1)
    totals = cumulative[:, -1]
    if not (totals > 0).all():
        raise ValueError(f"weights row {int(np.argmin(totals > 0))} has no positive weight")
    draws = (1.0 - rng.random(len(totals))) * totals  # in (0, total]: never a zero column
    return (cumulative < draws[:, None]).sum(axis=1).astype(np.int64)


class LegalSlots(NamedTuple):
    """Each row's legal actions packed to the left, in action order.

    ``actions[i, j]`` is row i's j-th legal action (0 past its last one),
    ``valid[i, j]`` whether slot j of row i holds one.  A few dozen slots
    instead of 2,142 columns: a policy needs its logits, and a sampler its
    running sums, for these only.
    """

    actions: np.ndarray
    valid: np.ndarray


def legal_slots(legal: np.ndarray) -> LegalSlots:
    """The :class:`LegalSlots` of bool masks ``legal`` (n, k); every row needs a legal action."""
    rows, columns = np.nonzero(legal)
    counts = np.bincount(rows, minlength=len(legal))
    width = int(counts.max()) if counts.size else 0
    first = np.cumsum(counts) - counts  # each row's first entry in rows/columns
    actions = np.zeros((len(legal), width), dtype=np.int64)
    actions[rows, np.arange(rows.size) - first[rows]] = columns
    return LegalSlots(actions, np.arange(width) < counts[:, None])


def slot_probabilities(logits: torch.Tensor, slots: LegalSlots) -> np.ndarray:
    """(n, width) float64: the softmax of each row's legal actions' ``logits`` (n, width,
    in ``slots``' order), exactly 0 in the padding."""
    valid = torch.from_numpy(slots.valid).to(logits.device)
    probs = torch.where(valid, logits, float("-inf")).softmax(-1)
    return probs.cpu().numpy().astype(np.float64)


def load_variant(path: str | Path) -> int | None:
    """The variant recorded with the policy at ``path``; None where none is.

    Raises ``ValueError`` naming the file for a record that is not one.
    """
    path = Path(path)
    try:
        if path.is_dir():
            file = path / VARIANT_FILE
            if not file.is_file():
                return None
            text = file.read_text()
        else:
            with zipfile.ZipFile(path) as archive:
                if VARIANT_FILE not in archive.namelist():
                    return None
                text = archive.read(VARIANT_FILE).decode()
        rings = json.loads(text)["rings_to_win"]
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{VARIANT_FILE} of {str(path)!r} is not a variant record: {e}") from None
    if type(rings) is not int or not 1 <= rings <= 5:
        raise ValueError(f"{VARIANT_FILE} of {str(path)!r}: rings_to_win 1..5, not {rings!r}")
    return rings


class LibraryPolicyAgent(Agent):
    """An agent over a trained policy: subclasses give :meth:`legal_probabilities`."""

    @checked
    def __init__(self, seed: int | None = None, greedy: bool = True, threads: Threads = 1) -> None:
        super().__init__(seed)
        self.greedy = greedy
        torch.set_num_threads(threads)
        self.np_rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self.np_rng = np.random.default_rng(seed)

    def legal_probabilities(self, state: State) -> np.ndarray:
        """Probabilities (or any non-negative weights) over all actions, 0 where illegal."""
        raise NotImplementedError

    def batch_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        """(n, 2142) :meth:`legal_probabilities` of n games in one call, from their
        observations; None (the default) where the library has no batched form."""
        return None

    def packed_probabilities(
        self, observations: np.ndarray, masks: np.ndarray, slots: LegalSlots
    ) -> np.ndarray | None:
        """(n, width) the weights of each game's legal actions in ``slots``' order, 0 in
        the padding; None where the library has no batched form.

        By default :meth:`batch_probabilities` gathered into the slots; a policy
        that can compute its logits for the legal actions alone overrides it.
        """
        dense = self.batch_probabilities(observations, masks)
        if dense is None:
            return None
        return np.take_along_axis(dense, slots.actions, axis=1) * slots.valid

    def act(self, state: State) -> int:
        weights = self.legal_probabilities(state).astype(np.float64)
        if self.greedy:
            return int(np.argmax(weights))
        return int(self.np_rng.choice(len(weights), p=weights / weights.sum()))

    def act_batch(
        self,
        observations: np.ndarray,
        masks: np.ndarray,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """(n,) one action in each of n games: the batched opponent interface
        (:mod:`yinsh_env.vector.batch_agents`).

        ``observations`` (n, 11, 11, 17) planes and ``masks`` (n, 2142), each game
        from its player's side.  One forward pass for all n games where the
        policy has a batched form (:meth:`packed_probabilities`), else :meth:`act`
        game by game; sampling (``greedy=false``) uses the agent's own generator,
        as :meth:`act` does, so ``rng`` is unused.  The choice is made among the
        legal actions only (:class:`LegalSlots`), and is the one the full-width
        weights give: illegal actions weigh 0, and slots keep the actions' order.
        """
        planes, legal = batch_arrays(observations, masks)
        if not len(planes):
            return np.zeros(0, dtype=np.int64)
        slots = legal_slots(legal)
        weights = self.packed_probabilities(planes, legal, slots)
        if weights is None:
            return np.array([self.act(decode(p)) for p in planes], dtype=np.int64)
        return self.choose(weights, slots.actions)

    def choose(self, weights: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """(n,) one of each row's ``actions`` by its ``weights`` (both (n, width)): the
        heaviest (``greedy``) or one drawn with the agent's own generator."""
        chosen = np.argmax(weights, axis=1) if self.greedy else sample_rows(weights, self.np_rng)
        return actions[np.arange(len(chosen)), chosen]


class SavedPolicyAgent(LibraryPolicyAgent):
    """A policy loaded from ``path=``, knowing the variant recorded beside it.

    Subclasses load their library's file in :meth:`load`; the parameters, the
    variant record and the sampling are the same for every library.
    """

    @checked
    def __init__(
        self,
        seed: int | None = None,
        path: PathText = "",
        greedy: bool = True,
        threads: Threads = 1,
    ) -> None:
        super().__init__(seed, greedy, threads)
        #: The variant it was trained for (None: any); the arena refuses to pair it with another.
        self.rings_to_win = self.variant(self.load(path))

    def load(self, path: str) -> Path:
        """Load the policy ``path`` names; return where its variant record is kept.

        Raises ``ValueError`` naming ``path`` when it holds no usable policy.
        """
        raise NotImplementedError

    def variant(self, record: Path) -> int | None:
        """The variant recorded at ``record`` (what :meth:`load` returned); None: any.

        A library whose file holds the variant itself overrides this.
        """
        return load_variant(record)
