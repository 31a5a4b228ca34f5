# SPDX-License-Identifier: Apache-2.0
"""wyjit's torch custom ops (wyjit.torch_ops) on the GPU; test_gpu_engines.py runs these cases:

- every launch and addressing mode of launch_cases.py called through its op leaves every
  output, state, log, cursor and table pool bit for bit as the plain launch does, over several
  steps with new content;
- two engine steps, each run by torch.compile(fullgraph=True), by a torch CUDA graph of the
  ops and by a CUDA graph of the compiled step, equal the same ops called eagerly bit for bit
  over several steps with new content: one layer's conv1d_update (window form) on a packed
  projection with q, k and v sliced out of its output, then gdn_verify on a slot pool; and
  replay mode's two layers of gdn_replay_verify, the commit and a materialize;
- a bad call raises the plain launch's error and writes nothing.

The numbers themselves are checked against float64 references by the other GPU cases. Imports
without torch; test_torch_ops.py dry-runs these cases on the CPU with the launches stubbed."""

import contextlib
import math

import gpu_prepared
from gpu_support import torch, wyjit

STEPS = 3
DEVICE = "cuda"  # the CPU dry run swaps in "cpu"
BACKEND = "inductor"  # torch.compile's; the CPU dry run swaps in "aot_eager"
B, K, HK, HV, D, W = 3, 4, 2, 4, 128, 4
C = 2 * HK * D + HV * D  # conv1d channels: q, k and v of the layer

LABELS = gpu_prepared.LABELS


def torch_ops():
    import wyjit.torch_ops as module  # needs torch: imported when a case runs

    return module


@contextlib.contextmanager
def ops_on(jit):
    """wyjit.torch_ops compiling and loading through `jit`, the manager the plain launches use."""
    module = torch_ops()
    module.use_jit(jit)
    try:
        yield module
    finally:
        module.use_jit(None)


def op_arguments(case, arguments, pools):
    """The op's arguments for the plain launch's `arguments`: each TableStager (or stand-in) as
    its address, and its slab stride where the launch writes several tiles a sequence, with its
    pool (`pools[name]`) in `pools` (materialize's out_tables: in `out_pools`)."""
    out = {}
    for name, value in arguments.items():
        if hasattr(value, "slab_stride"):
            out[name] = value.tables
            if case.launch in ("gdn_verify", "conv1d_update"):
                out["slab_stride"] = value.slab_stride
            out.setdefault("out_pools" if name == "out_tables" else "pools", []).append(pools[name])
        else:
            out[name] = value
    return out


def _stream():
    return torch.cuda.current_stream() if DEVICE == "cuda" else None


def _synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def _same_bits(a, b):
    return gpu_prepared._same_bits(a, b)


def check_op_equals_plain(jit, label):
    case = gpu_prepared._case(label)
    kernel = jit.kernel(case.spec)
    plain = getattr(wyjit, case.launch)
    _, eager, eager_pools = gpu_prepared._filled(case, seed=1)
    _, opped, op_pools = gpu_prepared._filled(case, seed=1)  # the same content, other memory
    arguments = op_arguments(case, opped, op_pools)
    try:
        with ops_on(jit):
            op = getattr(torch.ops.wyjit, case.launch)
            for step in range(STEPS):
                gpu_prepared._fresh_step(case, eager, seed=100 + step)
                gpu_prepared._fresh_step(case, opped, seed=100 + step)
                plain(kernel, stream=_stream(), **eager)
                op(case.spec.name, **arguments)
                _synchronize()
                for name, t in eager.items():
                    if isinstance(t, torch.Tensor):
                        assert _same_bits(opped[name], t), f"{label}, step {step}: {name} differs"
                for name, pool in eager_pools.items():
                    assert _same_bits(op_pools[name], pool), f"{label}, step {step}: {name} pool"
    finally:
        for stager in [v for v in (*eager.values(), *opped.values())
                       if isinstance(v, wyjit.TableStager)]:
            stager.close()


# ---- engine steps: make(seed) -> the step's tensors, refill(tensors, seed), step(tensors) -----


def _generator(seed):
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return gen


def conv_gdn_step():
    """conv1d_update on the packed projection x (window form, strided states), then gdn_verify
    on q, k, v sliced out of its output y, its g computed by torch, states in a slot pool."""
    conv = wyjit.Spec.make("conv1d_update", k=K, width=W, io="bf16", weight="bf16",
                           rollback="window", silu=True).name
    gdn = wyjit.Spec.make("gdn_verify", k=K, io="bf16", addressing="slot").name
    slots = B * (K + 1) + 1
    bf16 = torch.bfloat16

    def make(seed):
        gen = _generator(seed)

        def randn(*shape):
            return torch.randn(*shape, generator=gen, device=DEVICE)

        def empty(*shape, dtype=torch.float32):
            return torch.empty(*shape, dtype=dtype, device=DEVICE)

        return dict(x=empty(B * K, C, dtype=bf16), y=empty(B * K, C, dtype=bf16),
                    weight=(0.5 * randn(C, W)).to(bf16),
                    conv_state=(0.1 * randn(B, C, W - 1 + K)).to(bf16),
                    window_offset=torch.zeros(B, dtype=torch.int32, device=DEVICE),
                    g_raw=empty(B * K, HV), beta=empty(B * K, HV),
                    out=empty(B * K, HV * D, dtype=bf16), pool=0.1 * randn(slots, HV, D, D),
                    read_slot=empty(B, dtype=torch.int32),
                    write_slot=empty(B, K, dtype=torch.int32))

    def refill(t, seed):
        gen = _generator(seed)
        t["x"].copy_(0.1 * torch.randn(t["x"].shape, generator=gen, device=DEVICE))
        t["g_raw"].copy_(0.5 * torch.randn(t["g_raw"].shape, generator=gen, device=DEVICE))
        t["beta"].copy_(torch.rand(t["beta"].shape, generator=gen, device=DEVICE))
        perm = torch.randperm(slots, generator=gen, device=DEVICE).to(torch.int32)
        t["read_slot"].copy_(perm[:B])  # distinct: nothing written over what is read
        t["write_slot"].copy_(perm[B:B + B * K].view(B, K))
        t["y"].fill_(math.nan)
        t["out"].fill_(math.nan)

    def step(t):
        torch.ops.wyjit.conv1d_update(conv, B, C, t["x"], t["y"], t["weight"],
                                      state=t["conv_state"], window_offset=t["window_offset"])
        y = t["y"]
        q, k, v = y[:, :HK * D], y[:, HK * D:2 * HK * D], y[:, 2 * HK * D:]
        torch.ops.wyjit.gdn_verify(gdn, B, HK, HV, q, k, v, t["out"], g=-t["g_raw"].abs(),
                                   beta=t["beta"], state=t["pool"], read_slot=t["read_slot"],
                                   write_slot=t["write_slot"])

    return make, refill, step


def replay_step():
    """Two layers' gdn_replay_verify sharing one cursor, the commit (accepted counts with
    padding and counts past K), then layer 1's S_cur materialized."""
    spec = wyjit.Spec.make("gdn_replay", k=K, log=16, io="bf16", state="f32", layout="vk")
    name, floats, layers = spec.name, wyjit.gdn_replay_log_floats(spec, HK, HV), range(2)

    def make(seed):
        gen = _generator(seed)
        t = dict(cursor=torch.zeros(B, 2, dtype=torch.int32, device=DEVICE),
                 accepted=torch.empty(B, dtype=torch.int32, device=DEVICE),
                 s_cur=torch.empty(B, HV, D, D, device=DEVICE))
        for i in layers:
            t[f"state{i}"] = 0.5 * torch.randn(B, HV, D, D, generator=gen, device=DEVICE)
            # NOTE: NaN: the kernels must read only the log entries they wrote.
            t[f"log{i}"] = torch.full((B, floats), math.nan, device=DEVICE)
            for n, shape, dtype in (("q", (B, K, HK, D), torch.bfloat16),
                                    ("k", (B, K, HK, D), torch.bfloat16),
                                    ("v", (B, K, HV, D), torch.bfloat16),
                                    ("out", (B, K, HV, D), torch.bfloat16),
                                    ("g", (B, K, HV), torch.float32),
                                    ("beta", (B, K, HV), torch.float32)):
                t[f"{n}{i}"] = torch.empty(shape, dtype=dtype, device=DEVICE)
        return t

    def refill(t, seed):
        gen = _generator(seed)

        def randn(shape):
            return torch.randn(shape, generator=gen, device=DEVICE)

        def rand(shape):
            return torch.rand(shape, generator=gen, device=DEVICE)

        for i in layers:
            for n in ("q", "k"):
                t[f"{n}{i}"].copy_(torch.nn.functional.normalize(randn(t[f"{n}{i}"].shape), dim=-1))
            t[f"v{i}"].copy_(randn(t[f"v{i}"].shape))
            t[f"g{i}"].copy_(-(0.01 + 0.2 * rand(t[f"g{i}"].shape)))
            t[f"beta{i}"].copy_(0.05 + 0.9 * rand(t[f"beta{i}"].shape))
            t[f"out{i}"].fill_(math.nan)
        t["accepted"].copy_(torch.randint(-1, K + 2, (B,), generator=gen, device=DEVICE,
                                          dtype=torch.int32))
        t["s_cur"].fill_(math.nan)

    def step(t):
        for i in layers:
            torch.ops.wyjit.gdn_replay_verify(name, B, HK, HV, t[f"q{i}"], t[f"k{i}"],
                                              t[f"v{i}"], t[f"out{i}"], t["cursor"],
                                              log=t[f"log{i}"], g=t[f"g{i}"],
                                              beta=t[f"beta{i}"], state=t[f"state{i}"])
        torch.ops.wyjit.gdn_replay_commit(name, B, t["cursor"], t["accepted"])
        torch.ops.wyjit.gdn_replay_materialize(name, B, HK, HV, t["cursor"], log=t["log1"],
                                               out=t["s_cur"], state=t["state1"])

    return make, refill, step


PROBLEMS = {"conv1d_update + gdn_verify": conv_gdn_step, "gdn_replay": replay_step}


# ---- runners: how a step is run on its own copy of the tensors ------------------------------


def compiled(step, t):
    run = torch.compile(step, fullgraph=True, backend=BACKEND)
    return lambda: run(t)


def capture(run, t):
    """`run` captured in a torch CUDA graph after one warm-up run on a side stream (kernels
    loaded, a compiled step's first call), `t` put back as it was before the warm-up."""
    saved = {n: x.clone() for n, x in t.items()}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    torch.cuda.synchronize()
    for n, x in saved.items():
        t[n].copy_(x)
    return graph.replay


def graphed(step, t):
    return capture(lambda: step(t), t)


def graphed_compiled(step, t):
    return capture(compiled(step, t), t)


def _check_runs(jit, problem, runners):
    """Every runner's copy of the step's tensors equals, bit for bit after each step, a copy on
    which the step's ops are called eagerly; all copies refilled alike before each step."""
    make, refill, step = PROBLEMS[problem]()
    with ops_on(jit):
        eager = make(seed=1)
        copies = {label: make(seed=1) for label in runners}
        runs = {label: build(step, copies[label]) for label, build in runners.items()}
        for n in range(STEPS):
            for t in (eager, *copies.values()):
                refill(t, seed=100 + n)
            step(eager)
            for run in runs.values():
                run()
            _synchronize()
            written = [x for x in eager.values() if x.dtype.is_floating_point]
            assert not any(x.isnan().all() for x in written), f"{problem}: an output is all NaN"
            for label, t in copies.items():
                for name, x in eager.items():
                    assert _same_bits(t[name], x), (
                        f"{problem}, {label}, step {n}: {name} differs from eager")


def check_compiled_step_equals_eager(jit, problem):
    _check_runs(jit, problem, {"torch.compile(fullgraph=True)": compiled})


def check_graphed_step_equals_eager(jit, problem):
    _check_runs(jit, problem, {"CUDA graph": graphed, "CUDA graph of the compiled step":
                               graphed_compiled})


def _error(call):
    try:
        call()
    except wyjit.InvalidArgumentError as e:
        return str(e)
    raise AssertionError("a bad call was accepted")


def check_errors_match_plain(jit):
    """A float16 q for a bf16 variant: the op raises the plain launch's message and writes
    nothing."""
    case = gpu_prepared._case("gdn_verify strided")
    _, arguments, _ = gpu_prepared._filled(case, seed=4)
    bad = dict(arguments, q=arguments["q"].to(torch.float16))
    before = {n: x.clone() for n, x in arguments.items() if isinstance(x, torch.Tensor)}
    want = _error(lambda: wyjit.gdn_verify(jit.kernel(case.spec), stream=_stream(), **bad))
    with ops_on(jit):
        got = _error(lambda: torch.ops.wyjit.gdn_verify(case.spec.name, **bad))
    assert got == want and "q has dtype f16, the variant needs bf16" in got, (got, want)
    _synchronize()
    for n, x in before.items():
        assert _same_bits(arguments[n], x), f"a refused op wrote {n}"
