"""RLlib's recipe pieces: the single-file PPO's network in RLlib's module, PPO's settings,
shaping through the environment, and weights for the league's fixed opponents."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("ray.rllib", reason='optional extra: pip install -e ".[rllib]"')
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from agents import make_agent
from agents.learned.ppo_policy import PPOPolicy
from agents.learned.rllib_models import MaskedPolicyModule
from train.libraries import rllib_example as example
from train.libraries.rllib_arguments import build_parser, parse_args
from train.libraries.rllib_league import fixed_ids, league_mapping
from yinsh_env import env, str_to_action
from yinsh_env.engine.state import State
from yinsh_env.envs.observation import encode

pytestmark = [
    pytest.mark.ray,
    pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env"),
    pytest.mark.usefixtures("torch_one_thread"),
]


def module_spec(**model_config: Any) -> RLModuleSpec:
    spaces = env()
    return RLModuleSpec(
        module_class=MaskedPolicyModule,
        observation_space=spaces.observation_space("player_0"),
        action_space=spaces.action_space("player_0"),
        model_config=model_config,
    )


def ppo_module(channels: int = 4, blocks: int = 1) -> Any:
    return module_spec(network="ppo", channels=channels, blocks=blocks).build()


def position_batch(count: int = 3) -> dict[str, Any]:
    """Observations of the empty board and of a few placements, as RLlib batches them."""
    states = []
    for i in range(count):
        state = State()
        for action in ["E5", "F6"][:i]:
            state.apply(str_to_action(action))
        states.append(state)
    planes = np.stack([encode(s) for s in states])
    masks = np.stack([s.legal_mask() for s in states])
    return {
        Columns.OBS: {
            "observation": torch.as_tensor(planes),
            "action_mask": torch.as_tensor(masks),
        }
    }


def test_the_ppo_network_module_is_the_single_file_ppos_network_masked() -> None:
    torch.manual_seed(0)
    module = ppo_module()
    batch = position_batch()
    out = module.forward_train(batch)
    logits = out[Columns.ACTION_DIST_INPUTS]
    policy = PPOPolicy(4, 1)
    policy.load_state_dict(module.net.state_dict())
    raw, values = policy(batch[Columns.OBS]["observation"])
    legal = batch[Columns.OBS]["action_mask"].bool()
    assert torch.equal(logits[legal], raw[legal])
    assert (logits[~legal] == torch.finfo(logits.dtype).min).all()
    # The values from the training pass's "embeddings" and from a pass of their own agree.
    assert torch.equal(module.compute_values(batch, out[Columns.EMBEDDINGS]), values)
    assert torch.equal(module.compute_values(batch), values)
    # Gradient reaches every weight through the policy and value (pass is illegal here).
    loss = -torch.log_softmax(logits, -1)[legal].mean() + module.compute_values(batch).pow(2).sum()
    loss.backward()
    reached = {
        n: p.grad is not None and bool(p.grad.abs().sum() > 0)
        for n, p in module.net.named_parameters()
    }
    assert {n for n, ok in reached.items() if not ok} == {"pass_logit.weight", "pass_logit.bias"}


def test_an_unknown_network_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown network 'mlp'"):
        module_spec(network="mlp").build()


def test_ppo_settings_become_rllibs_own_and_unknown_ones_are_refused() -> None:
    settings = example.ppo_settings({"clip": 0.2, "vf_coef": 0.25, "grad_clip": 0.5})
    assert settings == {
        "clip_param": 0.2,
        "vf_loss_coeff": 0.25,
        "grad_clip": 0.5,
        "grad_clip_by": "global_norm",
    }
    assert example.ppo_settings({"kl_coeff": 0.0}) == {"use_kl_loss": False, "kl_coeff": 0.0}
    assert example.ppo_settings({"grad_clip": 0.0}) == {}  # 0: RLlib's default, no clip
    with pytest.raises(ValueError, match="unknown PPO settings \\['clip_coef'\\]"):
        example.ppo_settings({"clip_coef": 0.2})
    config = example.build_config(
        ppo={"clip": 0.2, "vf_coef": 0.25, "grad_clip": 0.5, "kl_coeff": 0.0},
        shaping=(0.5, 0.05),
        gamma=0.9,
        network="ppo",
        blocks=1,
    )
    assert (config.clip_param, config.vf_loss_coeff, config.grad_clip) == (0.2, 0.25, 0.5)
    assert config.use_kl_loss is False and config.gamma == 0.9
    shaped = config.env_config
    assert (shaped["dense_reward"], shaped["threat_reward"], shaped["gamma"]) == (0.5, 0.05, 0.9)
    made = example.make_env(shaped).env.unwrapped
    assert (made.dense_reward, made.threat_reward, made.gamma) == (0.5, 0.05, 0.9)
    learner = config.rl_module_spec.rl_module_specs[example.LEARNER]
    assert learner.model_config["network"] == "ppo" and learner.model_config["blocks"] == 1


def test_league_weights_set_how_often_each_fixed_opponent_is_met() -> None:
    episodes = [SimpleNamespace(id_=f"episode-{i}") for i in range(2000)]
    fixed = fixed_ids(2)
    mapping = league_mapping(
        "learner", [], 1.0, fixed=fixed, fixed_share=1.0, fixed_weights=[1.0, 3.0]
    )
    met = [
        next(m for m in (mapping(a, e) for a in ("player_0", "player_1")) if m != "learner")
        for e in episodes
    ]
    first, second = met.count(fixed[0]), met.count(fixed[1])
    assert first + second == len(episodes)
    assert 2.5 < second / first < 3.6  # 3 to 1, within sampling error of 2,000 episodes
    with pytest.raises(ValueError, match="1 fixed_weights for 2 fixed opponents"):
        league_mapping("learner", [], 1.0, fixed=fixed, fixed_share=0.5, fixed_weights=[1.0])


def test_the_command_line_checks_league_weights_against_the_opponents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = build_parser()
    for weights, problem in (
        (["1"], "--league-weights gives 1 weights for 2 --league-opponents"),
        (["0", "0"], "--league-weights must not all be 0"),
    ):
        with pytest.raises(SystemExit):
            parse_args(
                parser, ["--league-opponents", "random", "greedy", "--league-weights", *weights]
            )
        assert problem in capsys.readouterr().err
    args = parse_args(parser, ["--recipe", "rllib"])
    assert args.network == "ppo" and args.kl_coeff == 0.0 and args.dense_reward == 0.5
    assert args.league_weights == [0.1, 0.2, 0.2, 0.5]


def test_the_aec_env_made_for_rllib_shapes_both_seats() -> None:
    rllib_env = example.make_env({"dense_reward": 0.5, "threat_reward": 0.05, "gamma": 1.0})
    plain = env(dense_reward=0.5, threat_reward=0.05, gamma=1.0)
    assert type(rllib_env.env.unwrapped) is type(plain.unwrapped)
    obs, _ = rllib_env.reset(seed=0)
    rng = np.random.default_rng(0)
    totals = {"player_0": 0.0, "player_1": 0.0}
    done = False
    while not done:
        ((agent, observation),) = obs.items()
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        obs, rewards, terminated, _, _ = rllib_env.step({agent: action})
        for name, reward in rewards.items():
            totals[name] += reward
        done = terminated["__all__"]
    white, black = rllib_env.env.unwrapped.game.returns()
    assert totals == pytest.approx({"player_0": white, "player_1": black}, abs=1e-9)


@pytest.mark.slow
def test_the_recipes_module_trains_and_plays_as_an_agent(ray_cluster: Any, tmp_path: Path) -> None:
    config = example.build_config(
        rings_to_win=1,
        batch_size=96,
        minibatch_size=48,
        epochs=1,
        channels=4,
        network="ppo",
        blocks=1,
        ppo={"clip": 0.2, "vf_coef": 0.25, "grad_clip": 0.5, "kl_coeff": 0.0},
        shaping=(0.5, 0.05),
        gamma=0.99,
        league_opponents=["random", "greedy"],
        league_share=0.5,
        league_weights=[1.0, 3.0],
        lr=1e-3,
    )
    algo = config.build_algo()
    try:
        before = [p.detach().clone() for p in algo.get_module(example.LEARNER).parameters()]
        result = algo.train()
        module = algo.get_module(example.LEARNER)
        assert any(not torch.equal(a, b) for a, b in zip(module.parameters(), before))
        assert np.isfinite(result["learners"][example.LEARNER]["total_loss"])
        assert result["learners"][example.LEARNER]["default_optimizer_learning_rate"] == 1e-3
        # --anneal-lr: the rate set between iterations holds through the next updates
        example.set_learning_rate(algo, 2.5e-4)
        result = algo.train()
        assert result["learners"][example.LEARNER]["default_optimizer_learning_rate"] == 2.5e-4
        learner = algo.learner_group._learner
        for _name, optimizer in learner.get_optimizers_for_module(example.LEARNER):
            assert optimizer.param_groups[0]["lr"] == 2.5e-4
        module.save_to_path(str(tmp_path / "policy"))
    finally:
        algo.stop()
    agent = make_agent(f"rllib:path={tmp_path / 'policy'}")
    assert agent.module.network == "ppo"  # type: ignore[attr-defined]
    batch = position_batch()
    mine = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    loaded = agent.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]  # type: ignore[attr-defined]
    assert torch.equal(mine, loaded)


def midgame_batch(games: int = 6, plies: int = 24) -> tuple[list[State], dict[str, Any]]:
    """Positions reached by random play, and their observations as RLlib batches them."""
    rng = np.random.default_rng(5)
    states = []
    for game in range(games):
        state = State()
        for _ in range(plies + game):
            legal = state.legal_actions()
            if state.is_terminal or not legal:
                break
            state.apply(int(rng.choice(legal)))
        states.append(state)
    planes = np.stack([encode(s) for s in states])
    masks = np.stack([s.legal_mask() for s in states])
    return states, {
        Columns.OBS: {"observation": torch.as_tensor(planes), "action_mask": torch.as_tensor(masks)}
    }


def baseline_module(spec: str) -> Any:
    spaces = env()
    return RLModuleSpec(
        module_class=example.BaselineModule,
        observation_space=spaces.observation_space("player_0"),
        action_space=spaces.action_space("player_0"),
        model_config={"spec": spec, "seed": 3},
    ).build()


def test_a_greedy_league_opponent_decides_every_game_of_the_batch_as_greedy_does() -> None:
    """The fixed ``greedy`` opponent answers a whole batch at once (``act_batch``, the
    vector environment's batched greedy), and each answer is one of greedy's best moves."""
    from agents.baselines.greedy import best_turn_value

    states, batch = midgame_batch()
    module = baseline_module("greedy")
    assert callable(module.agent.act_batch)

    def one_by_one(observation: Any) -> int:
        raise AssertionError("asked game by game")

    module.agent.act_observation = one_by_one
    actions = module.forward_exploration(batch)[Columns.ACTIONS]
    assert len(actions) == len(states)
    for state, action in zip(states, actions):
        values = {}
        for legal in state.legal_actions():
            work = state.copy()
            work.apply(legal)
            values[legal] = best_turn_value(work, state.to_act)
        assert int(action) in values  # legal
        assert values[int(action)] == max(values.values())  # one of greedy's best


def test_a_league_opponent_without_a_batch_decides_game_by_game() -> None:
    states, batch = midgame_batch(games=3)
    module = baseline_module("alphabeta:depth=1")
    assert not callable(getattr(module.agent, "act_batch", None))
    actions = module.forward_exploration(batch)[Columns.ACTIONS]
    for state, action in zip(states, actions):
        assert int(action) in state.legal_actions()
