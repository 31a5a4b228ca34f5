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

conv1d_update's cases (gpu_conv1d.py) run the same way against a float64 emulation of a correct
conv1d kernel, and against deliberately wrong ones, which they must catch.

Skipped without torch (CPU torch is enough; CI's python may not have it).
"""

import math
import types

import pytest

torch = pytest.importorskip("torch", reason="the GPU test harness needs torch (CPU is enough)")

import gpu_conv1d as conv_rig  # noqa: E402
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

    def __init__(self, writes, max_batch):
        self.writes, self.max_batch = writes, max_batch

    def stage(self, states, inter=None, stream=None):
        assert len(states) <= self.max_batch and len(inter or []) == self.writes - 1
        self.staged_states = list(states)
        self.staged_inter = [list(row) for row in inter or []]

    def close(self):
        pass

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


def test_the_agreement_case_passes_against_a_correct_kernel(cpu_rig):
    rig.check_addressing_modes_agree(cpu_rig)


@pytest.mark.parametrize("layout", ["vk", "kv"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_stored_states_never_share_memory_with_the_canonical_states(dtype, layout):
    canonical = torch.randn(2, 3, 8, 8)
    stored = rig.stored_states(canonical, layout, rig.dtype_of(dtype))
    assert rig.storage_address(stored) != rig.storage_address(canonical)
    assert stored.is_contiguous()
    assert torch.equal(rig.from_layout(stored, layout), canonical.to(stored.dtype))


def test_a_launch_over_the_reference_inputs_is_refused(cpu_rig):
    spec = rig.wyjit.Spec.make("gdn_verify", k=2, io="f32", layout="kv", dk=64, dv=64)
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


# ---- conv1d_update ----------------------------------------------------------------------------


def emulated_conv1d_update(kernel, *, batch, channels, x, y, weight, bias=None, state=None,
                           inter=None, tables=None, read_slot=None, write_slot=None,
                           window_offset=None, state_cols=None, state_channel_stride=None,
                           state_col_stride=None, path="auto", stream=None, bug=None):
    """What a correct kernel does (include/wyjit/conv1d_update.hpp), sequence by sequence, on
    the tensors it is given; `bug` makes it wrong in one way."""
    spec = kernel.spec
    K, W = spec.k, spec.width
    H = W - 1
    window = spec.rollback == "window"
    writes = 1 if window else K
    xs, ys = x.reshape(batch, K, channels), y.view(batch, K, channels)
    for b in range(batch):
        if spec.addressing == "strided":
            read = state[b]
            outs = [inter[b, t] for t in range(writes - 1)] + [state[b]]
        elif spec.addressing == "table":
            read = tables.staged_states[b]
            outs = [tables.staged_inter[t][b] for t in range(writes - 1)] + [read]
        else:
            slots = state.shape[0]
            read = state[int(read_slot[b])] if 0 <= int(read_slot[b]) < slots else None
            row = write_slot[b, :writes] if write_slot.dim() == 2 else write_slot[b:b + 1]
            outs = [state[int(w)] if 0 <= int(w) < slots else None for w in row]
        offset = int(window_offset[b]) if window else 0
        padded = read is None or not 0 <= offset <= read.shape[-1] - H
        if padded and bug != "writes padded y":
            continue
        if padded:
            ys[b] = 0
            continue
        z = torch.cat([read[:, offset:offset + H].double(), xs[b].double().T], 1)  # [C, H+K]
        w = weight.double().reshape(channels, W)
        acc = torch.stack([(z[:, t:t + W] * w).sum(-1) for t in range(K)], 0)  # [K, C]
        if spec.bias:
            acc = acc + bias.double()
        if spec.silu:
            acc = acc / (1 + torch.exp(-acc))
        ys[b] = acc.to(y.dtype)
        for t, out in enumerate(outs):
            if out is None:
                continue
            if window:
                out[:, :H + K] = z.to(out.dtype)
            else:
                out[:, :H] = z[:, t + 1:t + 1 + H].to(out.dtype)
                if bug == "writes a spare column":
                    out[:, H] = 0


@pytest.fixture
def conv_cpu_rig(monkeypatch):
    monkeypatch.setattr(conv_rig, "DEVICE", "cpu")
    monkeypatch.setattr(conv_rig, "LAUNCH", emulated_conv1d_update)
    monkeypatch.setattr(conv_rig.wyjit, "TableStager", EmulatedTableStager)
    return EmulatedJit()


@pytest.mark.parametrize("rollback, addressing, cols_major", conv_rig.CASES)
def test_conv1d_case_passes_against_a_correct_kernel(conv_cpu_rig, rollback, addressing,
                                                     cols_major):
    conv_rig.check_case(conv_cpu_rig, rollback, addressing, cols_major)


@pytest.mark.parametrize("rollback", ["intermediate", "window"])
def test_conv1d_agreement_case_passes_against_a_correct_kernel(conv_cpu_rig, rollback):
    conv_rig.check_addressings_and_paths_agree(conv_cpu_rig, rollback)


def test_conv1d_rollback_case_passes_against_a_correct_kernel(conv_cpu_rig):
    conv_rig.check_window_rollback_equals_intermediate(conv_cpu_rig)


@pytest.mark.parametrize("bug, rollback, addressing, message", [
    ("writes padded y", "window", "strided", "y of padded sequence 3 was written"),
    ("writes padded y", "intermediate", "slot", "y of padded sequence 1 was written"),
    ("writes a spare column", "intermediate", "table", "pool differs from what the launch"),
    ("writes a spare column", "intermediate", "strided", "state differs from what the launch"),
])
def test_conv1d_cases_catch_a_wrong_kernel(conv_cpu_rig, monkeypatch, bug, rollback, addressing,
                                           message):
    monkeypatch.setattr(conv_rig, "LAUNCH",
                        lambda *a, **kw: emulated_conv1d_update(*a, bug=bug, **kw))
    with pytest.raises(AssertionError, match=message):
        conv_rig.check_case(conv_cpu_rig, rollback, addressing, cols_major=True)


def test_conv1d_the_launch_arguments_pass_the_real_checks(conv_cpu_rig, monkeypatch):
    """The arguments every case hands to the launch, through wyjit's own checks (Python's and
    the library's), with the CPU tensors presented as device ones."""
    seen = []

    def launch(kernel, **kw):
        seen.append((kernel.spec, dict(kw)))
        emulated_conv1d_update(kernel, **kw)

    monkeypatch.setattr(conv_rig, "LAUNCH", launch)
    for case in conv_rig.CASES:
        conv_rig.check_case(conv_cpu_rig, *case)
    conv_rig.check_window_rollback_equals_intermediate(conv_cpu_rig, steps=1)
    assert len(seen) == len(conv_rig.CASES) + 2
    for spec, kw in seen:
        kw = {n: OnDevice(v) if isinstance(v, torch.Tensor) else v for n, v in kw.items()
              if n != "stream"}
        if isinstance(kw.get("tables"), EmulatedTableStager):
            kw["tables"] = FakeStager(kw["tables"])
        rig.wyjit.check_conv1d_update(spec, **kw)


class OnDevice:
    """A CPU tensor presented as a device one (what wyjit reads of a tensor)."""

    def __init__(self, tensor):
        self.tensor, self.shape, self.dtype = tensor, tensor.shape, tensor.dtype
        self.is_cuda, self.device = True, "cuda:0"

    def data_ptr(self):
        return self.tensor.data_ptr()

    def stride(self):
        return self.tensor.stride()


class FakeStager:
    """What a launch reads of a TableStager, for an emulated one."""

    def __init__(self, emulated):
        self.writes, self.max_batch = emulated.writes, emulated.max_batch
        self.tables, self.slab_stride = 0x7F6000000000, emulated.max_batch
