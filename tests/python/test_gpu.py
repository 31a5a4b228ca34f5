# SPDX-License-Identifier: Apache-2.0
"""On a GPU with torch: gdn_verify on torch tensors (strided, table through a TableStager, slot,
and a torch CUDA graph replayed with new inputs), every output and state compared with a torch
float64 reference of the sequential recurrence.

Skipped (the reason starts with "wyjit-gpu-unavailable") without torch or a CUDA device. Runs
without pytest too: `python3 tests/python/test_gpu.py`.
"""

import math
import pathlib
import sys
import tempfile

try:
    import pytest
except ImportError:  # standalone run, see the bottom of the file
    pytest = None

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import wyjit  # noqa: E402

torch = None
UNAVAILABLE = ""
try:
    import torch  # noqa: F811
except ImportError:
    UNAVAILABLE = "torch is not installed"
if not UNAVAILABLE and not torch.cuda.is_available():
    UNAVAILABLE = "torch sees no CUDA device"
if not UNAVAILABLE and wyjit.device_count() == 0:
    UNAVAILABLE = "wyjit sees no CUDA device: " + wyjit.device_unavailable_reason()

if pytest is not None:
    pytestmark = pytest.mark.skipif(bool(UNAVAILABLE), reason=f"wyjit-gpu-unavailable: {UNAVAILABLE}")

B, HK, HV = 3, 2, 4


def dtype_of(name):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[name]


def to_layout(canonical, layout):
    """[..., dk, dv] canonical states -> the variant's storage ([..., dv, dk] for vk)."""
    return canonical.transpose(-1, -2) if layout == "vk" else canonical


def from_layout(stored, layout):
    return stored.transpose(-1, -2) if layout == "vk" else stored


def make_inputs(spec, batch, seed):
    """Random inputs, already rounded to what the kernel reads; state0 canonical [B, HV, dk, dv]."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    io = dtype_of(spec.io)
    K, dk, dv = spec.k, spec.dk, spec.dv

    def randn(*shape):
        return torch.randn(*shape, device="cuda", generator=gen)

    def rand(*shape):
        return torch.rand(*shape, device="cuda", generator=gen)

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


def assert_close(got, want, tol, what):
    got = got.double()
    assert not torch.isnan(got).any(), f"{what}: NaN in the result (not written?)"
    err = (got - want).abs().max().item()
    ref = max(want.abs().max().item(), 1e-30)
    assert err / ref <= tol, f"{what}: relative error {err / ref:.3e} > {tol}"


def new_jit():
    return wyjit.Jit(pathlib.Path(tempfile.gettempdir()) / "wyjit-python-gpu-test-cache")


def launch(kernel, x, out, **state_arguments):
    wyjit.gdn_verify(kernel, batch=x["q"].shape[0], num_k_heads=HK, num_v_heads=HV, q=x["q"],
                     k=x["k"], v=x["v"], g=x["g"], beta=x["beta"], out=out,
                     stream=torch.cuda.current_stream(), **state_arguments)


# ---- the cases ------------------------------------------------------------------------------


def check_strided(jit, io, layout):
    spec = wyjit.Spec(k=4, io=io, layout=layout)
    K = spec.k
    x = make_inputs(spec, B, seed=11)
    st = dtype_of(spec.state)
    state = to_layout(x["state0"], layout).to(st).contiguous()  # [B, HV, ., .]
    shape = tuple(state.shape[1:])
    inter = torch.full((B, K - 1, *shape), math.nan, device="cuda", dtype=st)
    out = torch.full(x["v"].shape, math.nan, device="cuda", dtype=dtype_of(io))
    launch(jit.kernel(spec), x, out, state=state, inter=inter)
    torch.cuda.synchronize()
    want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
    tol_out, tol_state = tolerances(spec)
    assert_close(out, want_out, tol_out, f"{spec}: out")
    for t in range(K - 1):
        assert_close(from_layout(inter[:, t], layout), want_states[:, t], tol_state,
                     f"{spec}: state after token {t}")
    assert_close(from_layout(state, layout), want_states[:, K - 1], tol_state, f"{spec}: final state")


def check_table(jit):
    spec = wyjit.Spec(k=3, io="bf16", addressing="table")
    K, batch = spec.k, 4
    x = make_inputs(spec, batch, seed=12)
    tiles = 2 * batch * K
    pool = torch.full((tiles, HV, spec.dv, spec.dk), math.nan, device="cuda")  # vk tiles
    perm = torch.randperm(tiles, generator=torch.Generator().manual_seed(5)).tolist()
    reads = perm[:batch]
    writes = [perm[batch + b * (K - 1): batch + (b + 1) * (K - 1)] for b in range(batch)]
    for b in range(batch):
        pool[reads[b]] = to_layout(x["state0"][b], "vk")
    stream = torch.cuda.current_stream()
    with wyjit.TableStager(K, max_batch=batch) as stager:
        stager.stage([pool[i] for i in reads],
                     [[pool[writes[b][t]] for b in range(batch)] for t in range(K - 1)],
                     stream=stream)
        out = torch.full(x["v"].shape, math.nan, device="cuda", dtype=torch.bfloat16)
        launch(jit.kernel(spec), x, out, tables=stager)
        torch.cuda.synchronize()
    want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
    tol_out, tol_state = tolerances(spec)
    assert_close(out, want_out, tol_out, f"{spec}: out")
    for b in range(batch):
        for t in range(K - 1):
            assert_close(from_layout(pool[writes[b][t]], "vk"), want_states[b, t], tol_state,
                         f"{spec}: sequence {b}, state after token {t}")
        assert_close(from_layout(pool[reads[b]], "vk"), want_states[b, K - 1], tol_state,
                     f"{spec}: sequence {b}, final state")
    untouched = sorted(set(range(tiles)) - set(reads) - {w for row in writes for w in row})
    assert torch.isnan(pool[untouched]).all(), "a tile no table names was written"


def check_slot(jit):
    spec = wyjit.Spec(k=3, io="f16", addressing="slot", layout="kv")
    K = spec.k
    x = make_inputs(spec, B, seed=13)
    slots = B * (K + 1) + 1
    pool = torch.full((slots, HV, spec.dk, spec.dv), math.nan, device="cuda")  # kv tiles
    perm = torch.randperm(slots, generator=torch.Generator().manual_seed(6))
    read_slot = perm[:B].to(device="cuda", dtype=torch.int32)
    write_slot = perm[B: B + B * K].view(B, K).to(device="cuda", dtype=torch.int32)
    pool[read_slot.long()] = x["state0"]
    before = pool.clone()
    out = torch.full(x["v"].shape, math.nan, device="cuda", dtype=torch.float16)
    launch(jit.kernel(spec), x, out, state=pool, read_slot=read_slot, write_slot=write_slot)
    torch.cuda.synchronize()
    want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
    tol_out, tol_state = tolerances(spec)
    assert_close(out, want_out, tol_out, f"{spec}: out")
    for t in range(K):
        assert_close(pool[write_slot[:, t].long()], want_states[:, t], tol_state,
                     f"{spec}: state after token {t}")
    assert torch.equal(pool[read_slot.long()], before[read_slot.long()]), "a read slot was written"
    assert torch.isnan(pool[perm[B + B * K:].cuda()]).all(), "the spare slot was written"


def check_torch_graph(jit):
    """Captured once with torch.cuda.graph (global capture mode), replayed with new inputs."""
    spec = wyjit.Spec(k=2, io="bf16")
    K = spec.k
    kernel = jit.kernel(spec)  # before capture
    x = make_inputs(spec, B, seed=20)
    state = to_layout(x["state0"], "vk").contiguous()
    inter = torch.empty((B, K - 1, *state.shape[1:]), device="cuda")
    out = torch.empty(x["v"].shape, device="cuda", dtype=torch.bfloat16)
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
        graph.replay()
        torch.cuda.synchronize()
        want_out, want_states = reference(x, 1 / math.sqrt(spec.dk))
        assert_close(out, want_out, tol_out, f"replay {replay}: out")
        assert_close(from_layout(state, "vk"), want_states[:, K - 1], tol_state,
                     f"replay {replay}: final state")


def check_errors_on_the_gpu(jit):
    spec = wyjit.Spec(k=2, io="f32", dk=64, dv=64)
    x = make_inputs(spec, B, seed=30)
    kernel = jit.kernel(spec)
    state = x["state0"].contiguous()
    inter = torch.empty((B, 1, HV, 64, 64), device="cuda")
    out = torch.empty(x["v"].shape, device="cuda")
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

if pytest is not None:

    @pytest.fixture(scope="module")
    def jit():
        torch.zeros(1, device="cuda")  # makes torch's CUDA context current on this thread
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

    def test_a_torch_cuda_graph_replays_with_new_inputs(jit):
        check_torch_graph(jit)

    def test_bad_tensors_are_refused_before_launch(jit):
        check_errors_on_the_gpu(jit)


if __name__ == "__main__":
    if UNAVAILABLE:
        print(f"SKIPPED: wyjit-gpu-unavailable: {UNAVAILABLE}")
        sys.exit(0)
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    cases = [(f"strided {io} {layout}", check_strided, (io, layout)) for io, layout in STRIDED]
    cases += [("table", check_table, ()), ("slot", check_slot, ()),
              ("torch graph", check_torch_graph, ()), ("errors", check_errors_on_the_gpu, ())]
    failed = 0
    with new_jit() as manager:
        for name, check, args in cases:
            try:
                check(manager, *args)
                print(f"PASSED {name}")
            except Exception as e:  # noqa: BLE001 - report every case
                failed += 1
                print(f"FAILED {name}: {type(e).__name__}: {e}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
