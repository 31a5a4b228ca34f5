# SPDX-License-Identifier: Apache-2.0
"""Prepared launches on the GPU (test_gpu.py runs them): for every launch and addressing mode of
launch_cases.py, a prepared launch called with a problem's arrays leaves every output, state,
log and cursor bit for bit as the one-shot launch of the same problem does, over several steps
with new token arrays; and a prepared launch captured in a torch CUDA graph.

The numbers themselves are checked against float64 references by the other GPU cases; here the
two paths must agree exactly. Imports without torch (the cases need it and a GPU)."""

import launch_cases
from gpu_support import torch, wyjit

STEPS = 3
DEVICE = "cuda"  # a CPU dry run of this module's own logic may swap in "cpu"
_INDEX = ("read_slot", "write_slot", "log_slot", "out_slot")


def _filled(case, seed):
    """The case's arrays as CUDA tensors with content a launch may read: random floats (g
    negative), distinct slots, zero cursors and window offsets, K accepted tokens; each stand-in
    stager replaced by a TableStager over a pool of its own (the pools come back as well)."""
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    made = {}

    def make(shape, dtype):
        return torch.empty(shape, dtype=getattr(torch, dtype), device=DEVICE)

    case = _rebuilt(case, make)
    arguments, pools = dict(case.arguments), {}
    for name, value in case.arguments.items():
        if isinstance(value, launch_cases.Stager):
            arguments[name], pools[name] = _stager(case, name, value, gen)
        elif isinstance(value, torch.Tensor):
            made[name] = value
    slot = 0
    for name, t in made.items():
        if t.dtype.is_floating_point:
            t.copy_(0.1 * torch.randn(t.shape, generator=gen, device=DEVICE))
            if name == "g":
                t.copy_(-t.abs())
        elif name in _INDEX:  # distinct slots: nothing written over what is read
            n = t.numel()
            t.copy_(torch.arange(slot, slot + n, dtype=torch.int32, device=DEVICE).view(t.shape))
            slot += n
        elif name == "accepted":
            t.fill_(case.spec.k)
        else:  # cursor, window_offset
            t.zero_()
    return case, arguments, pools


def _rebuilt(case, make):
    """The case with CUDA tensors (launch_cases builds its tensors with the factory given)."""
    for c in launch_cases.cases(make):
        if c.label == case.label:
            return c
    raise AssertionError(f"no case {case.label}")


def _stager(case, name, stand_in, gen):
    """A TableStager of the stand-in's writes over a new pool of the tiles `name` names."""
    spec = case.spec
    if case.launch == "conv1d_update":
        cols = case.arguments["state_cols"]
        tile, dtype = (launch_cases.C, cols), torch.bfloat16
    elif name == "log_tables":
        tile = (wyjit.gdn_replay_log_floats(spec, launch_cases.HK, launch_cases.HV),)
        dtype = torch.float32
    else:
        tile, dtype = (launch_cases.HV, spec.dv, spec.dk), torch.float32
    b, writes = stand_in.max_batch, stand_in.writes
    pool = (0.1 * torch.randn((b * writes, *tile), generator=gen, device=DEVICE)).to(dtype)
    stager = wyjit.TableStager(writes, b)
    inter = [[pool[b + t * b + i] for i in range(b)] for t in range(writes - 1)]
    stager.stage([pool[i] for i in range(b)], inter or None, stream=torch.cuda.current_stream())
    return stager, pool


def _same_bits(a, b):
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def _fresh_step(case, arguments, seed):
    """New content for the step's arrays (the same in both problems for the same seed)."""
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    for name in case.step:
        t = arguments[name]
        if t.dtype.is_floating_point:
            t.copy_(0.1 * torch.randn(t.shape, generator=gen, device=DEVICE))
            if name == "g":
                t.copy_(-t.abs())


def check_prepared_equals_one_shot(jit, label):
    case = _case(label)
    kernel = jit.kernel(case.spec)
    one_shot = getattr(wyjit, case.launch)
    _, eager, eager_pools = _filled(case, seed=1)
    _, swapped, swapped_pools = _filled(case, seed=1)  # the same content, other memory
    _, other, _ = _filled(case, seed=2)
    fixed = {n: v for n, v in swapped.items() if not isinstance(v, torch.Tensor)}
    prepared = getattr(wyjit, f"prepare_{case.launch}")(kernel, **dict(other, **fixed))
    stream = torch.cuda.current_stream()
    for step in range(STEPS):
        _fresh_step(case, eager, seed=100 + step)
        _fresh_step(case, swapped, seed=100 + step)
        one_shot(kernel, stream=stream, **eager)
        # the first call swaps every array in, later ones only the step's
        names = prepared.arrays if step == 0 else case.step
        prepared(stream=stream.cuda_stream, **{n: swapped[n] for n in names})
        torch.cuda.synchronize()
        for name, t in eager.items():
            if isinstance(t, torch.Tensor):
                assert _same_bits(swapped[name], t), f"{label}, step {step}: {name} differs"
        for name, pool in eager_pools.items():
            assert _same_bits(swapped_pools[name], pool), f"{label}, step {step}: {name} pool"
    for stager in [v for v in (*eager.values(), *swapped.values(), *other.values())
                   if isinstance(v, wyjit.TableStager)]:
        stager.close()


def _case(label):
    return next(c for c in launch_cases.cases(lambda shape, dtype: _Shape(shape, dtype))
                if c.label == label)


class _Shape:
    """A shape-only tensor stand-in, to pick a case by label without allocating."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


def check_prepared_in_a_torch_graph(jit):
    """A prepared gdn_verify captured in a torch CUDA graph, replayed with new content in the
    captured arrays, equals a one-shot launch of the same content bit for bit."""
    case = _case("gdn_verify strided")
    kernel = jit.kernel(case.spec)
    _, eager, _ = _filled(case, seed=3)
    _, graphed, _ = _filled(case, seed=3)
    prepared = wyjit.prepare_gdn_verify(kernel, **graphed)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side), torch.cuda.graph(graph, stream=side):
        prepared(stream=side)
    torch.cuda.synchronize()
    for replay in range(STEPS):
        _fresh_step(case, eager, seed=200 + replay)
        _fresh_step(case, graphed, seed=200 + replay)
        graph.replay()
        wyjit.gdn_verify(kernel, stream=torch.cuda.current_stream(), **eager)
        torch.cuda.synchronize()
        for name, t in eager.items():
            if isinstance(t, torch.Tensor):
                assert _same_bits(graphed[name], t), f"replay {replay}: {name} differs"


LABELS = [c.label for c in launch_cases.cases(lambda shape, dtype: _Shape(shape, dtype))]
