"""The network evaluators: ONNX Runtime answers leaves as PyTorch does."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import numpy as np
import pytest
import torch

from agents import AgentSpecError, make_agent
from agents.network.inference import NetworkEvaluator
from agents.network.network import PolicyValueNet
from agents.search import network_leaf
from train.config import NetworkConfig
from yinsh_env import State

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def export_graph(model: PolicyValueNet) -> bytes:
    from agents.network.onnx_inference import export_onnx

    return export_onnx(model)


#: Two float32 computations of a tiny network (outputs below 1) in other kernels: a few
#: units of float32's rounding, 6e-8 measured (ONNX Runtime against PyTorch); 1e-5 is
#: over a hundred times that, and a graph of other weights misses by tenths.
FLOAT32: Final = 1e-5


def tiny_model(seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    return PolicyValueNet(NetworkConfig(blocks=1, channels=8, value_hidden=8)).eval()


def game_positions(count: int, seed: int = 0) -> list[State]:
    """Positions of a seeded random game, placements and ring moves."""
    rng = np.random.default_rng(seed)
    state, positions = State(), []
    while len(positions) < count and not state.is_terminal:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
        positions.append(state.copy())
    return positions


def test_the_onnx_evaluator_answers_leaves_as_the_torch_evaluator() -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    from agents.network.onnx_inference import OnnxEvaluator

    model = tiny_model()
    leaves = [network_leaf(s) for s in game_positions(30)[8::3]]
    reference = NetworkEvaluator(model, torch.device("cpu"))
    fast = OnnxEvaluator(model)
    for batch in ([leaves[0]], leaves):  # one leaf (a view, no stacking) and a batch
        logits, values = fast(batch)
        ref_logits, ref_values = reference(batch)
        assert values.shape == (len(batch),)
        np.testing.assert_allclose(values, ref_values, atol=FLOAT32)
        for leaf, got, want in zip(batch, logits, ref_logits):
            assert got.shape == leaf.actions.shape
            np.testing.assert_allclose(got, want, atol=FLOAT32)
    assert fast.positions == 1 + len(leaves) and fast.batches == 2


def test_the_int8_evaluator_runs_quantised_convolutions_close_to_the_float_network() -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    import onnx

    from agents.network.onnx_inference import OnnxEvaluator
    from agents.network.quantize import calibration_planes, quantize_int8

    model = tiny_model(1)
    exact = OnnxEvaluator(model)
    planes = calibration_planes(exact, count=24, seed=3)
    assert planes.shape == (24, 11, 11, 17)
    assert not np.array_equal(planes, calibration_planes(exact, count=24, seed=4))  # seeded games
    int8 = onnx.load_from_string(quantize_int8(export_graph(model), planes))
    ops = [n.op_type for n in int8.graph.node]
    assert ops.count("QuantizeLinear") >= 2 and "DequantizeLinear" in ops
    fast = OnnxEvaluator(model, precision="int8")
    assert fast.precision == "int8" and fast.positions == 0  # calibration is not counted
    leaves = [network_leaf(s) for s in game_positions(40, seed=5)]
    logits, values = fast(leaves)
    ref_logits, ref_values = exact(leaves)
    # Quantisation's reach, which depends on the CPU's integer kernels: values within
    # 0.001 and logits correlated at 0.9994 with AMX, 0.008 and 0.969 on AVX2 alone
    # (qemu -cpu Haswell, where ONNX Runtime's u8s8 sums can saturate); both within.
    assert np.abs(values - ref_values).max() < 0.1
    assert np.abs(values - ref_values).max() > 0.0  # really another graph
    for got, want in zip(logits, ref_logits):
        assert np.corrcoef(got, want)[0, 1] > 0.9


def test_every_tower_convolution_of_an_untrained_network_runs_in_int8(tmp_path: Path) -> None:
    """An untrained network's equal (zero) biases are shared by the exporter; each
    convolution still gets its own, so ONNX Runtime fuses all of them into int8 kernels."""
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    import onnx
    import onnxruntime as ort

    from agents.network.onnx_inference import OnnxEvaluator
    from agents.network.quantize import calibration_planes, quantize_int8

    model = tiny_model(2)  # 1 block: the stem and two convolutions in the tower
    planes = calibration_planes(OnnxEvaluator(model), count=16)
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    options.log_severity_level = 3
    ort.InferenceSession(quantize_int8(export_graph(model), planes), options)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    assert ops.count("QLinearConv") == 3


def test_int8_needs_onnx_runtime_and_bad_precisions_are_refused_by_name() -> None:
    from agents.network.onnx_inference import make_evaluator, precision_name

    with pytest.raises(ValueError, match="'int4'"):
        precision_name("int4")
    with pytest.raises(ValueError, match="int8"):
        make_evaluator(tiny_model(), torch.device("cpu"), "torch", precision="int8")


@pytest.mark.slow
def test_net_agents_take_a_precision_and_refuse_an_unknown_one(tiny_run_dir: Path) -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    agent = make_agent(f"net:path={tiny_run_dir},sims=4,precision=int8", seed=0)
    state = game_positions(12, seed=2)[-1]
    assert agent.act(state.copy()) in state.legal_actions()
    with pytest.raises(AgentSpecError, match="int4"):
        make_agent(f"net:path={tiny_run_dir},precision=int4")


def test_the_raw_policy_gathers_to_exactly_the_networks_policy() -> None:
    from agents.network.network import raw_gather

    model = tiny_model(3)
    planes = torch.from_numpy(np.stack([network_leaf(s).planes for s in game_positions(20)]))
    with torch.inference_mode():
        out = model(planes)
        raw, value = model.raw_policy_value(planes)
    primary, secondary = (torch.from_numpy(a.copy()) for a in raw_gather())
    assert torch.equal(raw[:, primary] + raw[:, secondary], out.policy)  # pass included
    assert torch.equal(value, out.value)


@pytest.mark.slow
def test_int8_graphs_are_kept_per_network_and_auto_means_int8_in_onnx_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    from agents.network import quantize
    from agents.network.onnx_inference import OnnxEvaluator, make_evaluator

    calls: list[int] = []
    real = quantize.calibration_planes

    def counted(*args: object, **kwargs: object) -> np.ndarray:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(quantize, "calibration_planes", counted)
    cpu = torch.device("cpu")
    first = make_evaluator(tiny_model(4), cpu, "auto", precision="auto")
    assert isinstance(first, OnnxEvaluator) and first.precision == "int8" and len(calls) == 1
    make_evaluator(tiny_model(4), cpu, "onnx", precision="int8")  # the same weights
    assert len(calls) == 1
    make_evaluator(tiny_model(5), cpu, "onnx", precision="int8")  # other weights
    assert len(calls) == 2
    assert type(make_evaluator(tiny_model(4), cpu, "torch", precision="auto")) is NetworkEvaluator


def test_amp_on_the_cpu_keeps_self_play_in_onnx_runtime() -> None:
    """``amp`` is the learner's bfloat16 autocast; it must not send CPU self-play to PyTorch."""
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    from agents.network.onnx_inference import OnnxEvaluator, make_evaluator

    cpu = torch.device("cpu")
    evaluator = make_evaluator(tiny_model(4), cpu, "auto", amp=True, precision="fp32")
    assert isinstance(evaluator, OnnxEvaluator) and evaluator.precision == "fp32"
    torch_side = make_evaluator(tiny_model(4), cpu, "torch", amp=True)
    assert type(torch_side) is NetworkEvaluator and torch_side.amp


def test_amp_auto_means_native_bfloat16_read_from_the_cpus_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.network import inference

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16\n")
    assert inference.cpu_flags(str(info)) >= {"avx2", "avx512_bf16"}
    assert inference.cpu_flags(str(tmp_path / "missing")) == frozenset()
    cpu = torch.device("cpu")
    for flags, native in (({"avx2", "avx512_bf16"}, True), ({"amx_bf16"}, True), ({"avx2"}, False)):
        monkeypatch.setattr(inference, "cpu_flags", lambda flags=flags: frozenset(flags))
        assert inference.amp_enabled("auto", cpu) is native
        assert inference.amp_enabled(True, cpu) and not inference.amp_enabled(False, cpu)


def test_calibration_methods_give_their_own_ranges_and_an_unknown_one_is_refused() -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    from agents.network.onnx_inference import OnnxEvaluator
    from agents.network.quantize import calibration_planes, quantize_int8

    model = tiny_model(4)
    graph = export_graph(model)
    planes = calibration_planes(OnnxEvaluator(model), count=16)
    minmax = quantize_int8(graph, planes)
    assert quantize_int8(graph, planes, method="minmax") == minmax
    assert quantize_int8(graph, planes, method="percentile") != minmax
    with pytest.raises(ValueError, match="'median'"):
        quantize_int8(graph, planes, method="median")


def test_the_gathered_graph_answers_as_the_raw_graph_gathered() -> None:
    pytest.importorskip("onnxruntime", reason='optional extra: pip install -e ".[onnx]"')
    import onnxruntime as ort

    from agents.network.network import raw_gather
    from agents.network.onnx_inference import export_onnx
    from yinsh_env.envs.observation import encode

    model = tiny_model(5)
    planes = np.stack([encode(s) for s in game_positions(12, seed=6)])
    raw, values = ort.InferenceSession(export_onnx(model)).run(None, {"planes": planes})
    gathered = ort.InferenceSession(export_onnx(model, gathered=True))
    assert [o.name for o in gathered.get_outputs()] == ["policy", "value"]
    policy, values2 = gathered.run(None, {"planes": planes})
    primary, secondary = raw_gather()
    np.testing.assert_allclose(policy, raw[:, primary] + raw[:, secondary], atol=FLOAT32)
    np.testing.assert_allclose(values2, values, atol=FLOAT32)
