"""Self-play snapshots deciding together: one grouped pass, each snapshot's own values."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="optional extra: pip install -e '.[sb3]'")
torch = pytest.importorskip("torch")

from agents.learned.library_agent import LegalSlots, legal_slots  # noqa: E402
from train.libraries import sb3_maskable_ppo as example  # noqa: E402
from train.libraries.sb3_selfplay import PolicySnapshot, SelfPlayCallback  # noqa: E402
from train.libraries.snapshot_batch import SnapshotBatch, joinable  # noqa: E402
from yinsh_env.engine.errors import IllegalActionError  # noqa: E402
from yinsh_env.engine.state import State  # noqa: E402
from yinsh_env.envs.matchmaking import OpponentPool  # noqa: E402
from yinsh_env.envs.observation import encode  # noqa: E402
from yinsh_env.vector.batch_agents import RandomOpponent, random_legal  # noqa: E402
from yinsh_env.vector.env import YinshVectorEnv  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def positions(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Planes and int8 masks of ``count`` positions from random games."""
    rng = np.random.default_rng(seed)
    planes, masks = [], []
    state = State()
    while len(planes) < count:
        if state.is_terminal:
            state = State()
        if rng.random() < 0.3:
            planes.append(encode(state))
            masks.append(state.legal_mask())
        state.apply(int(rng.choice(state.legal_actions())))
    return np.stack(planes).astype(np.float32), np.stack(masks).astype(np.int8)


@pytest.fixture(scope="module")
def snapshots() -> list[PolicySnapshot]:
    """Three snapshots of one learner whose weights moved between them."""
    env = example.make_vec_env("random", seed=0, rings_to_win=3, envs=1)
    model: Any = example.build_model(env, n_steps=32, batch_size=32, channels=4, features=16)
    taken = []
    generator = torch.Generator().manual_seed(0)
    for seed in range(3):
        taken.append(PolicySnapshot(model.policy, seed=seed))
        with torch.no_grad():
            for weight in model.policy.parameters():
                weight.add_(0.1 * torch.randn(weight.shape, generator=generator))
    return taken


def requests(snapshots: list[PolicySnapshot], sizes: list[int]) -> list[Any]:
    planes, masks = positions(sum(sizes), seed=1)
    ends = np.cumsum(sizes)
    return [
        (snapshot, planes[end - size : end], masks[end - size : end])
        for snapshot, size, end in zip(snapshots, sizes, ends)
    ]


def each_alone(asked: list[Any], slots: LegalSlots) -> np.ndarray:
    """Each snapshot's own probabilities of its games' legal actions, in ``slots``."""
    rows, first = [], 0
    for snapshot, planes, masks in asked:
        mine = LegalSlots(*(a[first : first + len(planes)] for a in slots))
        rows.append(snapshot.packed_probabilities(planes, masks, mine))
        first += len(planes)
    return np.concatenate(rows)


#: Against each snapshot alone in float32.  float32: another order of the same sums,
#: a few units of float32's rounding (6e-8) on the probabilities (7e-7 measured).
#: bfloat16: the grouped trunk rounds weights and layer outputs to 8 significant
#: bits (2**-8 each); where it rounds is the same on every CPU (only the float32
#: accumulation order differs), so the gap is the rounding's own: 0.0114 with AMX,
#: AVX-512 BF16 and AVX2 kernels alike (ONEDNN_MAX_CPU_ISA), 3e-2 leaves room for
#: roundings that land the other way.
@pytest.mark.parametrize(("dtype", "tolerance"), [("float32", 1e-5), ("bfloat16", 3e-2)])
def test_one_grouped_pass_gives_each_snapshot_its_own_probabilities(
    snapshots: list[PolicySnapshot], dtype: str, tolerance: float
) -> None:
    asked = requests(snapshots, [5, 1, 9])
    slots = legal_slots(np.concatenate([masks for _, _, masks in asked]) > 0)
    joint = SnapshotBatch(getattr(torch, dtype))
    sizes = np.array([5, 1, 9])
    planes = np.concatenate([planes for _, planes, _ in asked])
    stack = joint._stack(snapshots)
    assert stack is not None and joint._stack(snapshots) is stack  # built once, then kept
    grouped = joint._probabilities(stack, planes, sizes, slots)
    alone = each_alone(asked, slots)
    assert not grouped[~slots.valid].any() and np.allclose(grouped.sum(axis=1), 1.0)
    np.testing.assert_allclose(grouped, alone, atol=tolerance)
    first = slice(0, 5)  # the snapshots differ: each game must go through its own
    other = snapshots[1].packed_probabilities(
        planes[first], asked[0][2], LegalSlots(slots.actions[first], slots.valid[first])
    )
    assert np.abs(other - alone[first]).max() > 0.05  # both float32, snapshot alone


def test_joint_answers_are_legal_and_each_snapshot_draws_with_its_generator(
    snapshots: list[PolicySnapshot],
) -> None:
    asked = requests(snapshots, [4, 7, 3])
    joint = SnapshotBatch(torch.float32)
    draws = [s.np_rng.bit_generator.state for s in snapshots]
    seconds = [s.seconds for s in snapshots]
    for snapshot in snapshots:
        snapshot.greedy = True
    try:
        greedy = joint.act_joint(asked, np.random.default_rng(0))
        assert [s.np_rng.bit_generator.state for s in snapshots] == draws  # greedy draws nothing
    finally:
        for snapshot in snapshots:
            snapshot.greedy = False
    answers = joint.act_joint(asked, np.random.default_rng(0))
    for (_, _, masks), chosen, best in zip(asked, answers, greedy):
        assert chosen.shape == best.shape == (len(masks),)
        assert (
            masks[np.arange(len(masks)), chosen].all() and masks[np.arange(len(masks)), best].all()
        )
    assert all(s.np_rng.bit_generator.state != d for s, d in zip(snapshots, draws))
    assert joint.seconds > 0 and all(s.seconds > t for s, t in zip(snapshots, seconds))


def test_one_snapshot_or_a_policy_it_cannot_group_is_asked_alone(
    snapshots: list[PolicySnapshot],
) -> None:
    asked = requests(snapshots, [3, 2])
    calls: list[int] = []

    class Counted(RandomOpponent):
        policy = None  # no network to group

        def act_batch(self, observations: Any, masks: np.ndarray, rng: Any) -> np.ndarray:
            calls.append(len(masks))
            return super().act_batch(observations, masks, rng)

    joint = SnapshotBatch(torch.float32)
    mixed = [(Counted(), *asked[0][1:]), asked[1]]
    assert not joinable(None) and joinable(snapshots[0].policy)
    for layers in (
        [torch.nn.Linear(4, 4), torch.nn.Flatten()],  # a dense layer before the flatten
        [torch.nn.Flatten(), torch.nn.Conv2d(4, 4, 1)],  # a convolution after it
        [torch.nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular"), torch.nn.Flatten()],
        [torch.nn.Conv2d(4, 4, 1), torch.nn.Tanh(), torch.nn.Flatten()],  # an unknown layer
    ):
        policy = SimpleNamespace(
            features_extractor=SimpleNamespace(net=torch.nn.Sequential(*layers)),
            share_features_extractor=True,
            action_net=torch.nn.Linear(4, 2142),
        )
        assert not joinable(policy), layers
    answers = joint.act_joint(mixed, np.random.default_rng(0))
    assert calls == [3] and [len(a) for a in answers] == [3, 2]
    assert joint.seconds == 0.0  # nothing grouped
    env = example.make_vec_env("random", seed=0, rings_to_win=3, envs=1)
    wider: Any = example.build_model(env, n_steps=32, batch_size=32, channels=8, features=16)
    other = PolicySnapshot(wider.policy, seed=9)
    assert joint._stack([snapshots[0], other]) is None  # different shapes: one by one
    answers = joint.act_joint([asked[0], (other, *asked[1][1:])], np.random.default_rng(0))
    assert [len(a) for a in answers] == [3, 2] and joint.seconds == 0.0
    assert len(joint.act_joint(asked[:1], np.random.default_rng(0))[0]) == 3


def test_the_vector_env_asks_opponents_sharing_a_joint_once_a_round() -> None:
    class Joint:
        def __init__(self, answer: str = "legal") -> None:
            self.rounds: list[int] = []
            self.answer = answer

        def act_joint(self, asked: Any, rng: np.random.Generator) -> list[np.ndarray]:
            self.rounds.append(len(asked))
            for _, planes, masks in asked:
                assert planes is not None and len(planes) == len(masks)
            answers = [random_legal(masks, rng) for _, _, masks in asked]
            if self.answer == "illegal":
                answers[0] = answers[0] + 2142  # out of range: refused, not wrapped
            return answers[:-1] if self.answer == "short" else answers

    def pool_of(joint: Joint) -> OpponentPool:
        pool = OpponentPool()

        class Member(RandomOpponent):
            observes = True

            def __init__(self) -> None:
                self.joint = joint

        for i in range(3):
            pool.add(f"member{i}", Member())
        pool.add("alone", None)
        return pool

    joint = Joint()
    vec = YinshVectorEnv(16, opponent=pool_of(joint))
    observations, _ = vec.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(40):
        observations, *_ = vec.step(random_legal(observations["action_mask"], rng))
        assert (observations["action_mask"].sum(axis=1) > 0).all()
    assert joint.rounds and max(joint.rounds) == 3  # the three members in one call

    for answer, words in (("short", "answered 2 of 3"), ("illegal", "illegal actions")):
        refused = YinshVectorEnv(16, opponent=pool_of(Joint(answer)), learner="player_1")
        with pytest.raises(IllegalActionError, match=words):
            refused.reset(seed=3)


def test_a_bf16_learners_snapshots_share_the_callbacks_joint() -> None:
    pool = OpponentPool()
    env = example.make_vec_env(pool, seed=0, rings_to_win=1, envs=2)
    model: Any = example.build_model(
        env, n_steps=32, batch_size=32, channels=4, features=16, precision="fp32"
    )
    callback = SelfPlayCallback(pool, pool, every=64, report_every=0)
    assert callback.snapshot(model.policy, 0).joint is None  # float32: each on its own
    model.policy.bf16 = True
    first, second = callback.snapshot(model.policy, 1), callback.snapshot(model.policy, 2)
    assert first.joint is second.joint is callback.joint
    assert not first.policy.bf16  # the snapshot's own passes stay float32
