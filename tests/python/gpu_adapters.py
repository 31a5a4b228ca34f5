# SPDX-License-Identifier: Apache-2.0
"""wyjit.adapters side by side with the engines' own functions (vLLM's
fused_recurrent_gated_delta_rule and causal_conv1d_update, SGLang's
fused_sigmoid_gating_delta_rule_update: their Triton code from .peers/classic, fetched by
tools/bench/harness/fetch_peers.py, never committed), on the same random inputs: every output
row of a live sequence and every state tensor either writes (whole pools and buffers, so a
tile written where it should not be fails too) compared.

test_gpu_engines.py runs these on CUDA (bf16 tokens, the real kernels); adapters_interpreter.py runs
cpu_cases() on the CPU (fp16 tokens, the peers in Triton's interpreter, wyjit emulated).
Imports without torch."""

import functools
import pathlib

import sys

from gpu_support import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools/bench"))

REPO = pathlib.Path(__file__).resolve().parents[2]
PEERS_DIR = REPO / ".peers"


def rel(got, want):
    got, want = got.double(), want.double()
    if got.isnan().any():
        return float("inf")
    return (got - want).abs().max().item() / max(want.abs().max().item(), 1e-30)


def _gen(device, seed):
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def vllm_gdn(peer, *, device, io, n=3, hk=2, hv=8, d=64, k=4, pad=True, seed=1):
    """Spec decode: cu_seqlens 0, K, 2K, .. (the last sequence padding: length 0, slots -1),
    ssm_state_indices [N, K] a permutation of a pool, num_accepted_tokens in [1, K]."""
    from wyjit.adapters import vllm

    gen = _gen(device, seed)
    rows, slots = n * k, n * k + 5
    q = torch.randn(1, rows, hk, d, generator=gen, device=device).to(io)
    kk = torch.randn(1, rows, hk, d, generator=gen, device=device).to(io)
    v = torch.randn(1, rows, hv, d, generator=gen, device=device).to(io)
    g = -torch.rand(1, rows, hv, generator=gen, device=device) - 0.01
    beta = torch.rand(1, rows, hv, generator=gen, device=device)
    pool = torch.randn(slots, hv, d, d, generator=gen, device=device) * 0.3
    perm = torch.randperm(slots, generator=_gen(device, seed + 1), device=device)
    idx = perm[:rows].view(n, k).to(torch.int32)
    acc = torch.randint(1, k + 1, (n,), generator=gen, device=device, dtype=torch.int32)
    cu = torch.arange(0, rows + 1, k, dtype=torch.int32, device=device)
    live = n - 1 if pad else n
    if pad:
        idx[live:] = -1
        cu[live + 1:] = cu[live]
    results = {}
    outs = {}
    for who, fn in (("peer", peer), ("wyjit", vllm.fused_recurrent_gated_delta_rule)):
        p = pool.clone()
        o, final = fn(q=q, k=kk, v=v, g=g, beta=beta, initial_state=p, inplace_final_state=True,
                      cu_seqlens=cu, ssm_state_indices=idx, num_accepted_tokens=acc,
                      use_qk_l2norm_in_kernel=True)
        assert final.data_ptr() == p.data_ptr() and o.shape == v.shape and o.dtype == q.dtype, (who, o.shape, o.dtype)
        outs[who] = (o[0, :live * k], p)
    results["o"] = rel(outs["wyjit"][0], outs["peer"][0])
    results["pool"] = rel(outs["wyjit"][1], outs["peer"][1])
    return results


def sglang_gdn(peer, *, device, io, n=3, hk=2, hv=8, d=64, k=4, mode="verify", seed=2):
    """Target verify (disable_state_update=True, a buffer of K+1 steps indexed by a permutation)
    or decode (the final state back to the pool), a/b sliced out of a wider [T, 2*HV] tensor."""
    from wyjit.adapters import sglang

    gen = _gen(device, seed)
    rows, slots = n * k, n + 4
    q = torch.randn(1, rows, hk, d, generator=gen, device=device).to(io)
    kk = torch.randn(1, rows, hk, d, generator=gen, device=device).to(io)
    v = torch.randn(1, rows, hv, d, generator=gen, device=device).to(io)
    ab = torch.randn(rows, 2 * hv, generator=gen, device=device).to(io)
    a, b = ab[:, :hv], ab[:, hv:]
    a_log = torch.rand(hv, generator=gen, device=device) - 1.5
    dt_bias = torch.rand(hv, generator=gen, device=device) - 0.5
    pool = torch.randn(slots, hv, d, d, generator=gen, device=device) * 0.3
    src = torch.randperm(slots, generator=_gen(device, seed + 1), device=device)[:n]
    src = src.to(torch.int32)
    cache = torch.randperm(n + 1, generator=_gen(device, seed + 2), device=device)[:n]
    cache = cache.to(torch.int32)
    buffer = torch.randn(n + 1, k + 1, hv, d, d, generator=gen, device=device)
    cu = torch.arange(0, rows + 1, k, dtype=torch.int32, device=device)
    verify = mode == "verify"
    outs = {}
    for who, fn in (("peer", peer), ("wyjit", sglang.fused_sigmoid_gating_delta_rule_update)):
        p, buf = pool.clone(), buffer.clone()
        extra = dict(disable_state_update=True, intermediate_states_buffer=buf,
                     intermediate_state_indices=cache, cache_steps=k) if verify else {}
        o = fn(A_log=a_log, a=a, dt_bias=dt_bias, softplus_beta=1.0, softplus_threshold=20.0,
               q=q, k=kk, v=v, b=b, initial_state_source=p, initial_state_indices=src,
               use_qk_l2norm_in_kernel=True, cu_seqlens=cu, **extra)
        assert o.shape == v.shape and o.dtype == q.dtype
        outs[who] = (o, p, buf)
    results = {"o": rel(outs["wyjit"][0], outs["peer"][0]),
               "pool": rel(outs["wyjit"][1], outs["peer"][1])}
    if verify:
        results["buffer"] = rel(outs["wyjit"][2], outs["peer"][2])
    return results


def vllm_conv(peer, *, device, io, n=3, channels=96, width=4, k=3, extra_cols=0, seed=3):
    """Decode with K tokens a sequence (query_start_loc, max_query_len = K), a pool of lines
    [lines, C, cols] with channels contiguous, one line index padding (-1), bias, silu."""
    from wyjit.adapters import vllm

    gen = _gen(device, seed)
    lines, cols = n + 3, width - 1 + extra_cols
    x = torch.randn(n * k, channels, generator=gen, device=device).to(io)
    weight = (torch.randn(channels, width, generator=gen, device=device) * 0.5).to(io)
    bias = (torch.randn(channels, generator=gen, device=device) * 0.5).to(io)
    mem = torch.randn(lines, cols, channels, generator=gen, device=device).to(io)
    idx = torch.randperm(lines, generator=_gen(device, seed + 1), device=device)[:n]
    idx = idx.to(torch.int32)
    idx[1] = -1
    qsl = torch.arange(0, n * k + 1, k, dtype=torch.int32, device=device)
    outs = {}
    for who, fn in (("peer", peer), ("wyjit", vllm.causal_conv1d_update)):
        state = mem.clone().transpose(1, 2)  # [lines, C, cols], channels contiguous
        y = fn(x, state, weight, bias, activation="silu", conv_state_indices=idx,
               query_start_loc=qsl, max_query_len=k)
        assert y.shape == x.shape and y.dtype == x.dtype
        live = torch.cat([y[:k], y[2 * k:]])
        outs[who] = (live, state)
    return {"y": rel(outs["wyjit"][0], outs["peer"][0]),
            "conv_state": rel(outs["wyjit"][1], outs["peer"][1])}


def _cases(d_big):
    cases = {}
    for k in (1, 2, 4):
        cases[f"vllm gdn HK=2 HV=8 K={k}"] = ("vllm_spec", functools.partial(vllm_gdn, k=k))
        cases[f"sglang verify HK=2 HV=8 K={k}"] = ("sglang_verify",
                                                   functools.partial(sglang_gdn, k=k))
    cases["vllm gdn HK=16 HV=32 K=3"] = ("vllm_spec", functools.partial(
        vllm_gdn, hk=16, hv=32, d=d_big, k=3, n=3))
    cases["sglang verify HK=16 HV=32 K=3"] = ("sglang_verify", functools.partial(
        sglang_gdn, hk=16, hv=32, d=d_big, k=3, n=3))
    cases["sglang decode HK=2 HV=8 K=1"] = ("sglang_verify", functools.partial(
        sglang_gdn, k=1, mode="decode"))
    cases["sglang decode HK=2 HV=8 K=3"] = ("sglang_verify", functools.partial(
        sglang_gdn, k=3, mode="decode"))
    for k in (1, 3):
        cases[f"vllm conv K={k}"] = ("vllm_conv1d", functools.partial(vllm_conv, k=k))
    cases["vllm conv K=2 W=4 cols=W+1"] = ("vllm_conv1d", functools.partial(
        vllm_conv, k=2, extra_cols=2))
    return cases


def cpu_cases():
    """NOTE: vLLM's conv kernel does not run in Triton's interpreter ("mask has unsupported
    dtype"): its cases are GPU-only."""
    return {label: case for label, case in _cases(d_big=64).items()
            if case[0] != "vllm_conv1d"}


GPU_CASES = _cases(d_big=128)
LABELS = list(GPU_CASES)


def tolerance(name, io):
    if name in ("o", "y"):
        return 2e-3 if io == torch.float16 else 1e-2
    return 1e-4 if name != "conv_state" else 0.0  # conv states are copies of inputs


def check_side_by_side(jit, label):
    """On CUDA: the peer and the adapter (wyjit's kernels through `jit`), bf16 tokens."""
    from harness.peers import _load
    import wyjit.torch_ops as ops

    key, run = GPU_CASES[label]
    ops.use_jit(jit)
    try:
        results = run(_load.load(key, PEERS_DIR), device="cuda", io=torch.bfloat16)
    finally:
        ops.use_jit(None)
    bad = {n: e for n, e in results.items() if not e <= tolerance(n, torch.bfloat16)}
    assert not bad, f"{label}: relative error beyond tolerance: {bad} (all: {results})"
