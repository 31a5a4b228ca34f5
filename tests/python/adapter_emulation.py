# SPDX-License-Identifier: Apache-2.0
"""wyjit's launches for the adapters' CPU tests: the library's real checks (Python's and C's,
on the very arguments the adapter passes, CPU tensors presented as device ones), then a float64
emulation of a correct kernel on those tensors (slot addressing: the adapters' mode)."""

import math
import types

import torch

import wyjit
from test_gpu_harness import OnDevice, emulated_conv1d_update


def on_device(arguments):
    return {n: OnDevice(v) if isinstance(v, torch.Tensor) else v for n, v in arguments.items()
            if n != "stream"}


def kernel(name, device):
    return types.SimpleNamespace(spec=wyjit.Spec.parse(name))


def gdn_verify(kernel, *, stream=None, batch, num_k_heads, num_v_heads, q, k, v, out, state,
               read_slot, write_slot, scale=None, g=None, beta=None, a=None, b=None,
               a_log=None, dt_bias=None):
    """What a correct gdn_verify (slot addressing) does, in float64."""
    spec = kernel.spec
    args = dict(batch=batch, num_k_heads=num_k_heads, num_v_heads=num_v_heads, q=q, k=k, v=v,
                out=out, state=state, read_slot=read_slot, write_slot=write_slot, scale=scale,
                g=g, beta=beta, a=a, b=b, a_log=a_log, dt_bias=dt_bias)
    wyjit.check_gdn_verify(spec, **on_device({n: x for n, x in args.items() if x is not None}))
    K, dk, dv, hk, hv = spec.k, spec.dk, spec.dv, num_k_heads, num_v_heads
    rows = batch * K
    head = torch.arange(hv) // (hv // hk)
    qq = q.reshape(batch, K, hk, dk).double()[:, :, head]
    kk = k.reshape(batch, K, hk, dk).double()[:, :, head]
    if spec.l2norm:
        qq = qq / torch.sqrt((qq * qq).sum(-1, keepdim=True) + 1e-6)
        kk = kk / torch.sqrt((kk * kk).sum(-1, keepdim=True) + 1e-6)
    vv = v.reshape(batch, K, hv, dv).double()
    if spec.gating:
        x = a.reshape(batch, K, hv).double() + dt_bias.double()
        sp = torch.where(x > 20.0, x, torch.log1p(torch.exp(x)))
        gg = -torch.exp(a_log.double()) * sp
        bb = torch.sigmoid(b.reshape(batch, K, hv).double())
    else:
        gg, bb = g.reshape(batch, K, hv).double(), beta.reshape(batch, K, hv).double()
    scale = 1 / math.sqrt(dk) if scale is None else scale
    o = out.view(rows, hv, dv).view(batch, K, hv, dv)
    slots = state.shape[0]
    kv = spec.layout == "kv"
    for s_b in range(batch):
        r = int(read_slot[s_b])
        if not 0 <= r < slots:
            continue
        s = state[r].double() if kv else state[r].double().transpose(-1, -2)  # [HV, dk, dv]
        for t in range(K):
            s = s * torch.exp(gg[s_b, t])[:, None, None]
            u = bb[s_b, t, :, None] * (vv[s_b, t] - torch.einsum("hij,hi->hj", s, kk[s_b, t]))
            s = s + torch.einsum("hi,hj->hij", kk[s_b, t], u)
            o[s_b, t] = (torch.einsum("hij,hi->hj", s, qq[s_b, t]) * scale).to(out.dtype)
            w = int(write_slot[s_b, t] if write_slot.dim() == 2 else write_slot[s_b])
            if 0 <= w < slots:
                state[w] = (s if kv else s.transpose(-1, -2)).to(state.dtype)


def conv1d_update(kernel, *, stream=None, **arguments):
    """What a correct conv1d_update does (test_gpu_harness's emulation), after the checks."""
    wyjit.check_conv1d_update(kernel.spec, **on_device(arguments))
    emulated_conv1d_update(kernel, **arguments)


def install(monkeypatch):
    """The adapters launch the emulation (their kernels are specs only)."""
    from wyjit.adapters import _common

    seen = []

    def record(launch):
        def run(kernel, **kw):
            seen.append((kernel.spec.name, kw))
            launch(kernel, **kw)
        return run

    monkeypatch.setattr(_common, "kernel", kernel)
    monkeypatch.setattr(_common, "gdn_verify", record(gdn_verify))
    monkeypatch.setattr(_common, "conv1d_update", record(conv1d_update))
    return seen
