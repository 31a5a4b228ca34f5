# SPDX-License-Identifier: Apache-2.0
"""wyjit.adapters on the CPU (skipped without torch): the engines' own functions in Triton's
interpreter against the adapters with wyjit emulated in float64 after the library's real
checks (adapters_interpreter.py; also needs triton, numpy and .peers/classic), which variant
and which tensors each call passes, and the refusals."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import adapter_emulation as emu  # noqa: E402
import gpu_adapters as cases  # noqa: E402
import wyjit  # noqa: E402
from wyjit.adapters import sglang, vllm  # noqa: E402


@pytest.fixture
def launches(monkeypatch):
    return emu.install(monkeypatch)


@pytest.fixture(scope="module")
def interpreted():
    for module in ("triton", "numpy"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"Triton's interpreter needs {module}")
    if not (cases.PEERS_DIR / "classic").is_dir():
        pytest.skip(f"{cases.PEERS_DIR / 'classic'} is not filled (fetch_peers.py)")
    done = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__),
                                                        "adapters_interpreter.py"),
                           str(cases.PEERS_DIR)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("label", list(cases.cpu_cases()))
def test_the_engine_function_and_its_adapter_agree(interpreted, label):
    result = interpreted[label]
    for name, err in result.items():
        assert err <= cases.tolerance(name, torch.float16), (label, result)


def vllm_inputs(n=3, k=4, hk=2, hv=4, d=64):
    rows = n * k
    g = torch.Generator().manual_seed(0)
    return dict(
        q=torch.randn(1, rows, hk, d, generator=g).half(),
        k=torch.randn(1, rows, hk, d, generator=g).half(),
        v=torch.randn(1, rows, hv, d, generator=g).half(),
        g=-torch.rand(1, rows, hv, generator=g), beta=torch.rand(1, rows, hv, generator=g),
        initial_state=torch.randn(rows + 2, hv, d, d, generator=g),
        cu_seqlens=torch.arange(0, rows + 1, k, dtype=torch.int32),
        ssm_state_indices=torch.arange(rows, dtype=torch.int32).view(n, k),
        num_accepted_tokens=torch.tensor([1, 3, 4][:n], dtype=torch.int32),
        use_qk_l2norm_in_kernel=True)


def test_vllm_spec_decode_maps_onto_a_kv_slot_launch(launches):
    x = vllm_inputs()
    o, final = vllm.fused_recurrent_gated_delta_rule(**x)
    (name, kw), = launches
    assert name == "gdn_verify.k4.io_f16.st_f32.slot.kv.d64.l2norm"
    assert final is x["initial_state"] and kw["state"] is final
    assert kw["write_slot"].data_ptr() == x["ssm_state_indices"].data_ptr()  # no copy
    assert kw["read_slot"].tolist() == [0, 4 + 2, 8 + 3]  # indices[n, accepted-1]
    assert o.shape == x["v"].shape and kw["out"].data_ptr() == o.data_ptr()
    assert kw["q"].data_ptr() == x["q"].data_ptr() and kw["scale"] == 64 ** -0.5


def test_vllm_decode_form_and_non_varlen(launches):
    x = vllm_inputs(k=1)
    x.update(ssm_state_indices=torch.tensor([5, 0, 2], dtype=torch.int32),
             num_accepted_tokens=None)
    vllm.fused_recurrent_gated_delta_rule(**x)
    name, kw = launches[-1]
    assert name.startswith("gdn_verify.k1.") and kw["read_slot"] is kw["write_slot"]
    y = vllm_inputs(n=3, k=2)
    for t in ("q", "k", "v", "g", "beta"):
        y[t] = y[t].view(3, 2, *y[t].shape[2:])
    y["cu_seqlens"], y["num_accepted_tokens"] = None, torch.tensor([1, 2, 2], dtype=torch.int32)
    vllm.fused_recurrent_gated_delta_rule(**y)
    assert launches[-1][0].startswith("gdn_verify.k2.") and launches[-1][1]["batch"] == 3


@pytest.mark.parametrize("change, message", [
    ({"inplace_final_state": False}, "inplace_final_state is False: wyjit reads and writes one"),
    ({"retrieve_parent_token": torch.zeros(3, 4, dtype=torch.int32)}, "retrieve_parent_token is"),
    ({"beta": None}, "beta is 'None'"),
    ({"ssm_state_indices": None}, "ssm_state_indices is 'None'"),
    ({"cu_seqlens": torch.tensor([0, 4, 6, 12], dtype=torch.int32)}, "cu_seqlens is .0, 4, 6"),
    ({"scale": -1.0}, "scale is -1.0: must be positive"),
    ({"initial_state": torch.zeros(14, 4, 64, 64, dtype=torch.float64)}, "initial_state is a "
                                                                         "float64 tensor"),
])
def test_vllm_refusals_name_the_argument(launches, change, message):
    x = vllm_inputs()
    x.update(change)
    with pytest.raises(wyjit.InvalidArgumentError, match=message):
        vllm.fused_recurrent_gated_delta_rule(**x)
    assert not launches


def test_vllm_lengths_check_can_be_turned_off(launches, monkeypatch):
    from wyjit import adapters

    x = vllm_inputs()
    x["cu_seqlens"] = torch.tensor([0, 4, 6, 12], dtype=torch.int32)
    monkeypatch.setattr(adapters._common, "CHECK_LENGTHS", True)
    adapters.check_lengths(False)
    vllm.fused_recurrent_gated_delta_rule(**x)
    assert len(launches) == 1


def sglang_inputs(n=3, k=4, hk=2, hv=4, d=64, verify=True):
    rows = n * k
    g = torch.Generator().manual_seed(1)
    ab = torch.randn(rows, 2 * hv, generator=g).half()
    x = dict(A_log=torch.rand(hv, generator=g), a=ab[:, :hv], dt_bias=torch.rand(hv, generator=g),
             softplus_beta=1.0, softplus_threshold=20.0,
             q=torch.randn(1, rows, hk, d, generator=g).half(),
             k=torch.randn(1, rows, hk, d, generator=g).half(),
             v=torch.randn(1, rows, hv, d, generator=g).half(), b=ab[:, hv:],
             initial_state_source=torch.randn(n + 1, hv, d, d, generator=g),
             initial_state_indices=torch.tensor([2, 0, 3][:n], dtype=torch.int32),
             use_qk_l2norm_in_kernel=True,
             cu_seqlens=torch.arange(0, rows + 1, k, dtype=torch.int32))
    if verify:
        x.update(disable_state_update=True,
                 intermediate_states_buffer=torch.zeros(n, k + 1, hv, d, d),
                 intermediate_state_indices=torch.tensor([1, 2, 0][:n], dtype=torch.int32),
                 cache_steps=k)
    return x


def test_sglang_verify_stages_s0_in_the_buffer_and_writes_k_states_there(launches):
    x = sglang_inputs()
    pool = x["initial_state_source"].clone()
    sglang.fused_sigmoid_gating_delta_rule_update(**x)
    (name, kw), = launches
    assert name == "gdn_verify.k4.io_f16.st_f32.slot.vk.d64.l2norm.gating"
    buf = x["intermediate_states_buffer"]
    assert kw["state"].data_ptr() == buf.data_ptr() and kw["state"].shape[0] == 3 * 5
    assert kw["read_slot"].tolist() == [5, 10, 0]  # cache index * steps
    assert kw["write_slot"].tolist() == [[5 + t for t in range(4)], [10 + t for t in range(4)],
                                         list(range(4))]
    assert kw["a"].data_ptr() == x["a"].data_ptr() and kw["b"].data_ptr() == x["b"].data_ptr()
    assert torch.equal(x["initial_state_source"], pool)  # only read
    assert (buf[:, 4] == 0).all()  # the step past K is not touched


def test_sglang_padding_writes_nothing(launches):
    x = sglang_inputs()
    x["intermediate_state_indices"] = torch.tensor([1, -1, 0], dtype=torch.int32)
    x["initial_state_indices"] = torch.tensor([2, 0, -1], dtype=torch.int32)
    sglang.fused_sigmoid_gating_delta_rule_update(**x)
    kw = launches[-1][1]
    assert kw["read_slot"].tolist() == [5, -1, -1]
    assert (x["intermediate_states_buffer"][0] == 0).all()  # sequence 2's cache entry


def test_sglang_decode_writes_only_the_final_state(launches):
    x = sglang_inputs(k=3, verify=False)
    sglang.fused_sigmoid_gating_delta_rule_update(**x)
    kw = launches[-1][1]
    assert kw["state"] is x["initial_state_source"]
    assert kw["write_slot"].tolist() == [[-1, -1, 2], [-1, -1, 0], [-1, -1, 3]]


@pytest.mark.parametrize("change, message", [
    ({"retrieve_parent_token": torch.zeros(3, 4, dtype=torch.int32)},
     "retrieve_parent_token is .*refused until wyjit's tree family lands"),
    ({"is_kda": True}, "is_kda is True"),
    ({"cache_ring": True}, "cache_ring is True"),
    ({"softplus_beta": 2.0}, "softplus_beta is 2.0"),
    ({"softplus_threshold": 10.0}, "softplus_threshold is 10.0"),
    ({"disable_state_update": False}, "disable_state_update is False: .*K\\+1"),
    ({"intermediate_state_indices": None}, "intermediate_state_indices is 'None'"),
    ({"intermediate_states_buffer": torch.zeros(3, 2, 4, 64, 64)}, "2 steps a sequence"),
    ({"dt_bias": torch.rand(4).half()}, "dt_bias has dtype f16"),
])
def test_sglang_refusals_name_the_argument(launches, change, message):
    x = sglang_inputs()
    x.update(change)
    with pytest.raises(wyjit.InvalidArgumentError, match=message):
        sglang.fused_sigmoid_gating_delta_rule_update(**x)


def test_vllm_conv_update_matches_a_float64_loop(launches):
    k, n, c, w = 3, 3, 16, 4
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n * k, c, generator=g).half()
    weight, bias = torch.randn(c, w, generator=g).half(), torch.randn(c, generator=g).half()
    mem = torch.randn(5, w - 1, c, generator=g).half()
    state = mem.clone().transpose(1, 2)  # [lines, C, W-1], channels contiguous
    idx = torch.tensor([4, -1, 0], dtype=torch.int32)
    y = vllm.causal_conv1d_update(x, state, weight, bias, activation=True,
                                  conv_state_indices=idx,
                                  query_start_loc=torch.arange(0, n * k + 1, k,
                                                               dtype=torch.int32),
                                  max_query_len=k)
    (name, kw), = launches
    assert name == "conv1d_update.k3.io_f16.w4.wt_f16.intermediate.slot.bias.silu"
    assert kw["write_slot"].tolist() == [[-1, -1, 4], [-1, -1, -1], [-1, -1, 0]]
    before = mem.transpose(1, 2)
    for b, line in ((0, 4), (2, 0)):
        z = torch.cat([before[line].double(), x[b * k:(b + 1) * k].double().T], 1)
        acc = torch.stack([(z[:, t:t + w] * weight.double()).sum(-1) for t in range(k)])
        acc = acc + bias.double()
        want = acc * torch.sigmoid(acc)
        assert torch.allclose(y[b * k:(b + 1) * k].double(), want, rtol=2e-3, atol=2e-3)
        assert torch.equal(state[line], z[:, k:].half())
    assert torch.equal(state[[1, 2, 3]], before[[1, 2, 3]])


@pytest.mark.parametrize("change, message", [
    ({"num_accepted_tokens": torch.ones(3, dtype=torch.int32)},
     "num_accepted_tokens is .*W-2\\+K columns"),
    ({"activation": "gelu"}, "activation is 'gelu'"),
    ({"initial_state_idx": torch.zeros(3, dtype=torch.int32)}, "initial_state_idx is"),
    ({"retrieve_parent_token": torch.zeros(3, 2, dtype=torch.int32)}, "retrieve_parent_token"),
])
def test_vllm_conv_refusals_name_the_argument(launches, change, message):
    x = torch.zeros(3, 16).half()
    kw = dict(conv_state=torch.zeros(4, 16, 3).half(), weight=torch.zeros(16, 4).half(),
              conv_state_indices=torch.arange(3, dtype=torch.int32), activation="silu")
    kw.update(change)
    with pytest.raises(wyjit.InvalidArgumentError, match=message):
        vllm.causal_conv1d_update(x, **kw)
