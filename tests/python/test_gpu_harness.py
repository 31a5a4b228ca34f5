# SPDX-License-Identifier: Apache-2.0
"""The GPU test's harness (test_gpu.py) checked on the CPU: with torch but no GPU, its strided,
table and slot cases run against a float64 emulation of a correct kernel that reads and writes the very
tensors the test hands to wyjit.gdn_verify. A harness bug (a reference computed from memory the
launch overwrote, a wrong layout, a wrong tolerance) then fails here instead of looking like a
kernel bug on the H200.

Regression: check_strided("bf16", "kv") used to build its state with
`to(f32).contiguous()`, which returns x["state0"] itself for kv f32 states, so the kernel's final
state overwrote the input the reference was computed from afterwards ("out: relative error 1.13"
on the H200 while every other case passed).

Skipped without torch (CPU torch is enough; CI's python may not have it).
"""

import math
import types

import pytest

torch = pytest.importorskip("torch", reason="the GPU test harness needs torch (CPU is enough)")

import test_gpu as rig  # noqa: E402


def emulated_gdn_verify(kernel, *, batch, num_k_heads, num_v_heads, q, k, v, g, beta, out,
                        stream=None, state=None, inter=None, tables=None, read_slot=None,
                        write_slot=None):
    """What a correct kernel does, on the tensors it is given: per sequence, reads S0 when
    launched, then writes out, the intermediate states and the final state (every addressing
    mode; a padded sequence is skipped, a null/negative write skips that state)."""
    spec = kernel.spec
    K, layout = spec.k, spec.layout
    assert q.shape[0] == batch and v.shape[2] == num_v_heads
    key_head = torch.arange(num_v_heads) // (num_v_heads // num_k_heads)
    scale = 1 / math.sqrt(spec.dk)
    for b in range(batch):
        if spec.addressing == "strided":
            read = state[b]
            writes = [inter[b, t] for t in range(K - 1)] + [state[b]]
        elif spec.addressing == "table":
            read = tables.staged_states[b]
            writes = [tables.staged_inter[t][b] for t in range(K - 1)] + [read]
        else:
            slot = int(read_slot[b])
            read = state[slot] if slot >= 0 else None
            writes = [state[int(w)] if w >= 0 else None for w in write_slot[b, :K]]
        if read is None:
            continue  # padding
        s = rig.from_layout(read, layout).double()  # [HV, dk, dv]
        qq, kk = q[b].double()[:, key_head], k[b].double()[:, key_head]  # [K, HV, dk]
        for t in range(K):
            s = s * torch.exp(g[b, t].double())[:, None, None]
            u = beta[b, t, :, None].double() * (v[b, t].double()
                                                - torch.einsum("hij,hi->hj", s, kk[t]))
            s = s + torch.einsum("hi,hj->hij", kk[t], u)
            out[b, t] = torch.einsum("hij,hi->hj", s, scale * qq[t]).to(out.dtype)
            if writes[t] is not None:
                writes[t].copy_(rig.to_layout(s, layout).to(writes[t].dtype))


class EmulatedTableStager:
    """wyjit.TableStager without a GPU: keeps the staged tensors (None: a null entry)."""

    def __init__(self, k, max_batch):
        self.k, self.max_batch = k, max_batch

    def stage(self, states, inter=None, stream=None):
        assert len(states) <= self.max_batch and len(inter or []) == self.k - 1
        self.staged_states = list(states)
        self.staged_inter = [list(row) for row in inter or []]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class EmulatedJit:
    def kernel(self, spec):
        return types.SimpleNamespace(spec=spec)


@pytest.fixture
def cpu_rig(monkeypatch):
    monkeypatch.setattr(rig, "DEVICE", "cpu")
    monkeypatch.setattr(rig, "LAUNCH", emulated_gdn_verify)
    monkeypatch.setattr(rig.wyjit, "TableStager", EmulatedTableStager)
    return EmulatedJit()


@pytest.mark.parametrize("io, layout", rig.STRIDED + [("f32", "kv"), ("f16", "kv")])
def test_strided_case_passes_against_a_correct_kernel(cpu_rig, io, layout):
    rig.check_strided(cpu_rig, io, layout)


def test_slot_case_passes_against_a_correct_kernel(cpu_rig):
    rig.check_slot(cpu_rig)


def test_table_case_with_padding_passes_against_a_correct_kernel(cpu_rig):
    rig.check_table(cpu_rig)


@pytest.mark.parametrize("layout", ["vk", "kv"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_stored_states_never_share_memory_with_the_canonical_states(dtype, layout):
    canonical = torch.randn(2, 3, 8, 8)
    stored = rig.stored_states(canonical, layout, rig.dtype_of(dtype))
    assert rig.storage_address(stored) != rig.storage_address(canonical)
    assert stored.is_contiguous()
    assert torch.equal(rig.from_layout(stored, layout), canonical.to(stored.dtype))


def test_a_launch_over_the_reference_inputs_is_refused(cpu_rig):
    spec = rig.wyjit.Spec(k=2, io="f32", layout="kv", dk=64, dv=64)
    x = rig.make_inputs(spec, rig.B, seed=1)
    out = torch.empty(x["v"].shape)
    inter = torch.empty((rig.B, 1, *x["state0"].shape[1:]))
    # What the old check_strided did for kv f32 states: the same tensor as x["state0"].
    aliased = x["state0"].to(torch.float32).contiguous()
    with pytest.raises(AssertionError, match=r"state shares its storage with x\['state0'\]"):
        rig.launch(cpu_rig.kernel(spec), x, out, state=aliased, inter=inter)


def test_a_failure_names_the_wrong_slices():
    want = torch.ones(2, 3, 4, 8, dtype=torch.float64)
    got = want.clone()
    got[1, 2, 3] += 0.5  # one (b, t, head)
    with pytest.raises(AssertionError, match=r"wrong in 1 of 24 \(b x t x head\) slices: "
                                             r"b=1 t=2 head=3: 5\.00e-01"):
        rig.assert_close(got, want, 1e-3, "out", ("b", "t", "head"))
    got[0, 0, 0, 0] = math.nan
    with pytest.raises(AssertionError, match=r"1 of 192 elements NaN.*b=0 t=0 head=0: inf"):
        rig.assert_close(got, want, 1e-3, "out", ("b", "t", "head"))
    rig.assert_close(want + 1e-5, want, 1e-3, "out", ("b", "t", "head"))
