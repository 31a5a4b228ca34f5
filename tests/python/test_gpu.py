# SPDX-License-Identifier: Apache-2.0
"""On a GPU with torch: gdn_verify on torch tensors (strided, table through a TableStager, slot,
and a torch CUDA graph replayed with new inputs), every output and state compared with a torch
float64 reference of the sequential recurrence; conv1d_update's cases (gpu_conv1d.py: both
rollback forms, the three addressing modes, both kernel paths bit for bit, a torch CUDA graph);
and gdn_replay's (gpu_replay.py: hundreds of verify + commit steps against the float64
recurrence, materialize, a step of two layers in a torch CUDA graph); and prepared launches
(gpu_prepared.py: every launch and addressing mode bit for bit against the one-shot launch,
over several steps and in a torch CUDA graph). What engines call (the torch custom ops, the
adapters) is test_gpu_engines.py.

Skipped (the reason starts with "wyjit-gpu-unavailable") without torch or a CUDA device. Runs
without pytest too: `python3 tests/python/test_gpu.py`.
"""

import math
import pathlib
import sys

try:
    import pytest
except ImportError:  # standalone run, see the bottom of the file
    pytest = None

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gpu_support import (  # noqa: E402,F401 (the harness reads these names here)
    UNAVAILABLE,
    assert_close,
    dtype_of,
    new_jit,
    run_standalone,
    storage_address,
    torch,
    wyjit,
)
import gpu_conv1d as conv1d  # noqa: E402
import gpu_prepared as prepared  # noqa: E402
import gpu_replay as replay  # noqa: E402

if pytest is not None:
    pytestmark = pytest.mark.skipif(bool(UNAVAILABLE), reason=f"wyjit-gpu-unavailable: {UNAVAILABLE}")

B, HK, HV = 3, 2, 4

# Where the tensors live and what launches: "cuda" and wyjit.gdn_verify here; the CPU self-test
# of this harness (test_gpu_harness.py) swaps in "cpu" and a float64 emulation of the kernel.
DEVICE = "cuda"
LAUNCH = wyjit.gdn_verify


def synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def current_stream():
    return torch.cuda.current_stream() if DEVICE == "cuda" else None


def to_layout(canonical, layout):
    """[..., dk, dv] canonical states -> the variant's storage ([..., dv, dk] for vk)."""
    return canonical.transpose(-1, -2) if layout == "vk" else canonical


def from_layout(stored, layout):
    return stored.transpose(-1, -2) if layout == "vk" else stored


def stored_states(canonical, layout, dtype):
    """A new contiguous tensor holding `canonical` states in the variant's storage.

    NOTE: always a copy. `to(dtype)` returns the tensor itself when the dtype already matches and
    `contiguous()` does when it is contiguous, so for kv states of the input's dtype the kernel
    would otherwise write its final state over the test's own x["state0"]."""
    return to_layout(canonical, layout).to(dtype).clone(memory_format=torch.contiguous_format)


def make_inputs(spec, batch, seed):
    """Random inputs, already rounded to what the kernel reads; state0 canonical [B, HV, dk, dv]."""
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    io = dtype_of(spec.io)
    K, dk, dv = spec.k, spec.dk, spec.dv

    def randn(*shape):
        return torch.randn(*shape, device=DEVICE, generator=gen)

    def rand(*shape):
        return torch.rand(*shape, device=DEVICE, generator=gen)

    return dict(
        q=torch.nn.functional.normalize(randn(batch, K, HK, dk), dim=-1).to(io),
        k=torch.nn.functional.normalize(randn(batch, K, HK, dk), dim=-1).to(io),
        v=randn(batch, K, HV, dv).to(io),
        g=-(0.01 + 0.99 * rand(batch, K, HV)),
        beta=0.05 + 0.9 * rand(batch, K, HV),
        state0=(0.5 * randn(batch, HV, dk, dv)).to(dtype_of(spec.state)).float(),
    )


def reference(x, scale):
    """The sequential gated delta rule in float64: out [B, K, HV, dv], states [B, K, HV, dk, dv]
    (states[:, t] is the state after token t)."""
    q, k, v, g, beta, s = (x[n].double() for n in ("q", "k", "v", "g", "beta", "state0"))
    hv = v.shape[2]
    key_head = torch.arange(hv, device=q.device) // (hv // q.shape[2])  # GVA
    q, k = q[:, :, key_head], k[:, :, key_head]  # [B, K, HV, dk]
    outs, states = [], []
    for t in range(v.shape[1]):
        s = s * torch.exp(g[:, t])[..., None, None]
        kt = k[:, t]
        u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhij,bhi->bhj", s, kt))
        s = s + torch.einsum("bhi,bhj->bhij", kt, u)
        outs.append(torch.einsum("bhij,bhi->bhj", s, scale * q[:, t]))
        states.append(s)
    return torch.stack(outs, 1), torch.stack(states, 1)


def tolerances(spec):
    out = 1e-4 if spec.io == "f32" else 2e-2
    state = {"bf16": 1e-2, "f16": 2e-3}.get(spec.state, 1e-4 if spec.io == "f32" else 1e-3)
    return out, state


def assert_no_alias(x, written):
    """The kernel's outputs must not share memory with the inputs the reference reads."""
    inputs = {n: storage_address(x[n]) for n in ("q", "k", "v", "g", "beta", "state0")}
    for name, t in written.items():
        for n, address in inputs.items():
            assert storage_address(t) != address, (
                f"test harness bug: {name} shares its storage with x[{n!r}], so the launch "
                "would change what the reference reads")


def launch(kernel, x, out, **state_arguments):
    written = {n: t for n, t in state_arguments.items() if n in ("state", "inter")}
    assert_no_alias(x, {"out": out, **written})
    LAUNCH(kernel, batch=x["q"].shape[0], num_k_heads=HK, num_v_heads=HV, q=x["q"], k=x["k"],
           v=x["v"], g=x["g"], beta=x["beta"], out=out, stream=current_stream(),
           **state_arguments)


# ---- the cases ------------------------------------------------------------------------------


def check_strided(jit, io, layout):
    spec = wyjit.Spec.make("gdn_verify", k=4, io=io, layout=layout)
    K = spec.k
    x = make_inputs(spec, B, seed=11)
    st = dtype_of(spec.state)
    state = stored_states(x["state0"], layout, st)  # [B, HV, ., .]
    shape = tuple(state.shape[1:])
    inter = torch.full((B, K - 1, *shape), math.nan, device=DEVICE, dtype=st)
    out = torch.full(x["v"].shape, math.nan, device=DEVICE, dtype=dtype_of(io))
    want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))  # before the launch writes
    launch(jit.kernel(spec), x, out, state=state, inter=inter)
    synchronize()
    tol_out, tol_state = tolerances(spec)
    assert_close(out, want_out, tol_out, f"{spec}: out", ("b", "t", "head"))
    for t in range(K - 1):
        assert_close(from_layout(inter[:, t], layout), want_states[:, t], tol_state,
                     f"{spec}: state after token {t}", ("b", "head"))
    assert_close(from_layout(state, layout), want_states[:, K - 1], tol_state,
                 f"{spec}: final state", ("b", "head"))


def check_table(jit):
    """Table addressing through a TableStager, with null entries in the middle of the batch:
    sequence PADDED is padding (null S_b: nothing of it read or written) and Hi_0 of sequence 0
    is skipped (null entry)."""
    spec = wyjit.Spec.make("gdn_verify", k=3, io="bf16", addressing="table")
    K, batch, padded = spec.k, 4, 2
    x = make_inputs(spec, batch, seed=12)
    tiles = 2 * batch * K
    pool = torch.full((tiles, HV, spec.dv, spec.dk), math.nan, device=DEVICE)  # vk tiles
    perm = torch.randperm(tiles, generator=torch.Generator().manual_seed(5)).tolist()
    reads = perm[:batch]
    writes = [perm[batch + b * (K - 1): batch + (b + 1) * (K - 1)] for b in range(batch)]
    for b in range(batch):
        pool[reads[b]] = to_layout(x["state0"][b], "vk")
    before = pool.clone()
    want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
    staged_states = [None if b == padded else pool[reads[b]] for b in range(batch)]
    staged_inter = [[None if b == padded or (b, t) == (0, 0) else pool[writes[b][t]]
                     for b in range(batch)] for t in range(K - 1)]
    stream = current_stream()
    with wyjit.TableStager(K, max_batch=batch) as stager:
        stager.stage(staged_states, staged_inter, stream=stream)
        out = torch.full(x["v"].shape, math.nan, device=DEVICE, dtype=torch.bfloat16)
        launch(jit.kernel(spec), x, out, tables=stager)
        synchronize()
    tol_out, tol_state = tolerances(spec)
    live = [b for b in range(batch) if b != padded]
    assert_close(out[live], want_out[live], tol_out, f"{spec}: out (live sequences {live})",
                 ("b", "t", "head"))
    assert torch.isnan(out[padded]).all(), f"{spec}: out of padded sequence {padded} was written"
    written = set()
    for b in live:
        for t in range(K - 1):
            if staged_inter[t][b] is None:
                continue
            written.add(writes[b][t])
            assert_close(from_layout(pool[writes[b][t]], "vk"), want_states[b, t], tol_state,
                         f"{spec}: sequence {b}, state after token {t}", ("head",))
        written.add(reads[b])
        assert_close(from_layout(pool[reads[b]], "vk"), want_states[b, K - 1], tol_state,
                     f"{spec}: sequence {b}, final state", ("head",))
    others = sorted(set(range(tiles)) - written)
    assert torch.equal(pool[others].isnan(), before[others].isnan()) and torch.equal(
        pool[others].nan_to_num(), before[others].nan_to_num()), (
        "a tile no live table entry names was written (padded sequence, skipped Hi_0(0), or "
        "unnamed)")


def check_slot(jit):
    spec = wyjit.Spec.make("gdn_verify", k=3, io="f16", addressing="slot", layout="kv")
    K = spec.k
    x = make_inputs(spec, B, seed=13)
    slots = B * (K + 1) + 1
    pool = torch.full((slots, HV, spec.dk, spec.dv), math.nan, device=DEVICE)  # kv tiles
    perm = torch.randperm(slots, generator=torch.Generator().manual_seed(6))
    read_slot = perm[:B].to(device=DEVICE, dtype=torch.int32)
    write_slot = perm[B: B + B * K].view(B, K).to(device=DEVICE, dtype=torch.int32)
    pool[read_slot.long()] = x["state0"]
    before = pool.clone()
    out = torch.full(x["v"].shape, math.nan, device=DEVICE, dtype=torch.float16)
    want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
    launch(jit.kernel(spec), x, out, state=pool, read_slot=read_slot, write_slot=write_slot)
    synchronize()
    tol_out, tol_state = tolerances(spec)
    assert_close(out, want_out, tol_out, f"{spec}: out", ("b", "t", "head"))
    for t in range(K):
        assert_close(pool[write_slot[:, t].long()], want_states[:, t], tol_state,
                     f"{spec}: state after token {t}", ("b", "head"))
    assert torch.equal(pool[read_slot.long()], before[read_slot.long()]), "a read slot was written"
    assert torch.isnan(pool[perm[B + B * K:].to(DEVICE)]).all(), "the spare slot was written"


def check_addressing_modes_agree(jit):
    """The same inputs through strided, table and slot addressing give out and every state bit
    for bit (as the C++ suite asks of the kernel): the modes only change where tiles are."""
    base = wyjit.Spec.make("gdn_verify", k=3, io="bf16")
    K = base.k
    x = make_inputs(base, B, seed=14)
    initial = stored_states(x["state0"], "vk", torch.float32)  # [B, HV, dv, dk]
    tile = tuple(initial.shape[1:])

    def poisoned(*lead):
        return torch.full((*lead, *tile), math.nan, device=DEVICE)

    def new_out():
        return torch.full(x["v"].shape, math.nan, device=DEVICE, dtype=torch.bfloat16)

    results = {}
    state, inter, out = initial.clone(), poisoned(B, K - 1), new_out()
    launch(jit.kernel(base), x, out, state=state, inter=inter)
    results["strided"] = (out, [inter[:, t] for t in range(K - 1)] + [state])

    pool, out = poisoned(B * (K + 1)), new_out()
    pool[:B] = initial
    read_slot = torch.arange(B, dtype=torch.int32, device=DEVICE)
    write_slot = torch.arange(B, B + B * K, dtype=torch.int32, device=DEVICE).view(B, K)
    launch(jit.kernel(base.replace(addressing="slot")), x, out, state=pool, read_slot=read_slot,
           write_slot=write_slot)
    results["slot"] = (out, [pool[write_slot[:, t].long()] for t in range(K)])

    pool, out = poisoned(B * K), new_out()
    pool[:B] = initial
    written = [[B + b * (K - 1) + t for b in range(B)] for t in range(K - 1)]
    with wyjit.TableStager(K, max_batch=B) as stager:
        stager.stage([pool[b] for b in range(B)], [[pool[i] for i in row] for row in written],
                     stream=current_stream())
        launch(jit.kernel(base.replace(addressing="table")), x, out, tables=stager)
        synchronize()
    results["table"] = (out, [pool[row] for row in written] + [pool[:B]])

    want_out, want_states = results["strided"]
    assert not want_out.isnan().any(), "strided: out was not written"
    for mode in ("slot", "table"):
        got_out, got_states = results[mode]
        assert torch.equal(got_out, want_out), f"{mode}: out differs from strided's"
        for t in range(K):
            assert torch.equal(got_states[t], want_states[t]), (
                f"{mode}: the state after token {t} differs from strided's")


def check_torch_graph(jit):
    """Captured once with torch.cuda.graph (global capture mode), replayed with new inputs."""
    spec = wyjit.Spec.make("gdn_verify", k=2, io="bf16")
    K = spec.k
    kernel = jit.kernel(spec)  # before capture
    x = make_inputs(spec, B, seed=20)
    state = stored_states(x["state0"], "vk", torch.float32)
    inter = torch.empty((B, K - 1, *state.shape[1:]), device=DEVICE)
    out = torch.empty(x["v"].shape, device=DEVICE, dtype=torch.bfloat16)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch(kernel, x, out, state=state, inter=inter)
    tol_out, tol_state = tolerances(spec)
    for replay in range(5):
        fresh = make_inputs(spec, B, seed=100 + replay)
        for name in ("q", "k", "v", "g", "beta"):
            x[name].copy_(fresh[name])
        x["state0"] = fresh["state0"]
        state.copy_(to_layout(fresh["state0"], "vk"))
        out.fill_(math.nan)
        want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
        graph.replay()
        torch.cuda.synchronize()
        assert_close(out, want_out, tol_out, f"replay {replay}: out", ("b", "t", "head"))
        assert_close(from_layout(state, "vk"), want_states[:, K - 1], tol_state,
                     f"replay {replay}: final state", ("b", "head"))


def check_errors_on_the_gpu(jit):
    spec = wyjit.Spec.make("gdn_verify", k=2, io="f32", dk=64, dv=64)
    x = make_inputs(spec, B, seed=30)
    kernel = jit.kernel(spec)
    state = stored_states(x["state0"], "vk", torch.float32)
    inter = torch.empty((B, 1, HV, 64, 64), device=DEVICE)
    out = torch.empty(x["v"].shape, device=DEVICE)
    bad = dict(x)
    bad["q"] = x["q"].to(torch.float16)
    try:
        launch(kernel, bad, out, state=state, inter=inter)
    except wyjit.InvalidArgumentError as e:
        assert "q has dtype f16, the variant needs f32" in str(e)
    else:
        raise AssertionError("a float16 q was accepted by an f32 variant")
    try:
        launch(kernel, x, out, state=state.cpu(), inter=inter)
    except wyjit.InvalidArgumentError as e:
        assert "state is on cpu" in str(e)
    else:
        raise AssertionError("a CPU state was accepted")


# ---- pytest ---------------------------------------------------------------------------------

STRIDED = [("f32", "vk"), ("bf16", "kv"), ("f16", "vk")]
REPLAY_STEPS = [("f32", 300), ("bf16", 100)]

if pytest is not None:

    @pytest.fixture(scope="module")
    def jit():
        torch.zeros(1, device=DEVICE)  # makes torch's CUDA context current on this thread
        torch.cuda.synchronize()
        with new_jit() as manager:
            yield manager

    @pytest.mark.parametrize("io, layout", STRIDED)
    def test_strided_verify_matches_the_float64_reference(jit, io, layout):
        check_strided(jit, io, layout)

    def test_table_addressing_through_a_table_stager(jit):
        check_table(jit)

    def test_slot_addressing(jit):
        check_slot(jit)

    def test_addressing_modes_agree_bit_for_bit(jit):
        check_addressing_modes_agree(jit)

    def test_a_torch_cuda_graph_replays_with_new_inputs(jit):
        check_torch_graph(jit)

    def test_bad_tensors_are_refused_before_launch(jit):
        check_errors_on_the_gpu(jit)

    @pytest.mark.parametrize("rollback, addressing, cols_major", conv1d.CASES)
    def test_conv1d_update_matches_the_float64_reference(jit, rollback, addressing, cols_major):
        conv1d.check_case(jit, rollback, addressing, cols_major)

    @pytest.mark.parametrize("rollback", ["intermediate", "window"])
    def test_conv1d_update_addressing_modes_and_paths_agree_bit_for_bit(jit, rollback):
        conv1d.check_addressings_and_paths_agree(jit, rollback)

    def test_conv1d_update_window_rollback_equals_the_intermediate_form(jit):
        conv1d.check_window_rollback_equals_intermediate(jit)

    def test_conv1d_update_in_a_torch_cuda_graph_replays_with_new_inputs(jit):
        conv1d.check_torch_graph(jit)

    def test_conv1d_update_bad_tensors_are_refused_before_launch(jit):
        conv1d.check_errors_on_the_gpu(jit)

    @pytest.mark.parametrize("io, steps", REPLAY_STEPS)
    def test_gdn_replay_steps_match_the_float64_recurrence(jit, io, steps):
        replay.check_steps(jit, io, steps)

    def test_gdn_replay_step_in_a_torch_cuda_graph_equals_eager(jit):
        replay.check_torch_graph(jit)

    def test_gdn_replay_bad_tensors_are_refused_before_launch(jit):
        replay.check_errors_on_the_gpu(jit)

    @pytest.mark.parametrize("label", prepared.LABELS)
    def test_a_prepared_launch_equals_the_one_shot_launch_bit_for_bit(jit, label):
        prepared.check_prepared_equals_one_shot(jit, label)

    def test_a_prepared_launch_in_a_torch_cuda_graph_equals_one_shot(jit):
        prepared.check_prepared_in_a_torch_graph(jit)


if __name__ == "__main__":
    cases = [(f"strided {io} {layout}", check_strided, (io, layout)) for io, layout in STRIDED]
    cases += [("table", check_table, ()), ("slot", check_slot, ()),
              ("addressing modes agree", check_addressing_modes_agree, ()),
              ("torch graph", check_torch_graph, ()), ("errors", check_errors_on_the_gpu, ())]
    cases += [(f"conv1d {r} {a}{' cols-major' if m else ''}", conv1d.check_case, (r, a, m))
              for r, a, m in conv1d.CASES]
    cases += [(f"conv1d {r}: addressing modes and paths agree",
               conv1d.check_addressings_and_paths_agree, (r,)) for r in ("intermediate", "window")]
    cases += [("conv1d window rollback == intermediate",
               conv1d.check_window_rollback_equals_intermediate, ()),
              ("conv1d torch graph", conv1d.check_torch_graph, ()),
              ("conv1d errors", conv1d.check_errors_on_the_gpu, ())]
    cases += [(f"replay {io} {n} steps", replay.check_steps, (io, n)) for io, n in REPLAY_STEPS]
    cases += [("replay torch graph", replay.check_torch_graph, ()),
              ("replay errors", replay.check_errors_on_the_gpu, ())]
    cases += [(f"prepared {label} == one-shot", prepared.check_prepared_equals_one_shot, (label,))
              for label in prepared.LABELS]
    cases += [("prepared in a torch graph", prepared.check_prepared_in_a_torch_graph, ())]
    run_standalone(cases)
