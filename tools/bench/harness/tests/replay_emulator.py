# SPDX-License-Identifier: Apache-2.0
"""Replay mode in float64 on torch CPU tensors, for the CPU tests: DESIGN.md's route (a
checkpoint and a log of (k, u, G); S_cur^T x from the log without forming S_cur; u by forward
substitution over the K tokens, the WY identity), and stand-ins of wyjit's three launches and
of FlashInfer's kernel that run it on the arrays the runners lay out. Nothing here times
anything: it checks the runners' layouts, cursors and commits."""

from __future__ import annotations

from typing import Any

import torch


def norm(t: Any) -> Any:
    return t / torch.sqrt((t * t).sum(-1, keepdim=True) + 1e-6)


def s_cur_t(s0: Any, ks: Any, us: Any, Gs: Any) -> Any:
    """S_cur^T [HV, dv, dk] = e^{G_last} S0^T + sum_j e^{G_last - G_j} u_j k_j^T;
    ks [n, HV, dk] (already per value head), us [n, HV, dv], Gs [n, HV]."""
    if ks.shape[0] == 0:
        return s0.clone()
    last = Gs[-1]
    w = torch.exp(last[None] - Gs)  # [n, HV]
    return torch.exp(last)[:, None, None] * s0 + torch.einsum("jh,jhv,jhk->hvk", w, us, ks)


def wy_tokens(s0: Any, ks: Any, us: Any, Gs: Any, q: Any, k: Any, v: Any, g: Any, beta: Any,
              scale: float) -> tuple[Any, Any, Any]:
    """One sequence's K tokens on top of S_cur by DESIGN's WY identity, S_cur never formed:
    S_cur^T x = e^{Gc} S0^T x + sum_j e^{Gc - G_j} (k_j . x) u_j. q, k [K, HV, dk] (normalised),
    v [K, HV, dv], g, beta [K, HV]. Returns outputs [K, HV, dv], u [K, HV, dv] and the tokens'
    G measured from S_cur [K, HV]."""
    gc = Gs[-1] if Gs.shape[0] else torch.zeros_like(g[0])

    def cur_t(x: Any) -> Any:  # S_cur^T x for x [HV, dk]
        out = torch.exp(gc)[:, None] * torch.einsum("hvk,hk->hv", s0, x)
        if ks.shape[0]:
            w = torch.exp(gc[None] - Gs) * torch.einsum("jhk,hk->jh", ks, x)
            out = out + torch.einsum("jh,jhv->hv", w, us)
        return out

    G = torch.cumsum(g, dim=0)  # [K, HV] from S_cur
    u, o = [], []
    for t in range(k.shape[0]):
        acc = v[t] - torch.exp(G[t])[:, None] * cur_t(k[t])
        for j in range(t):
            acc = acc - (torch.exp(G[t] - G[j]) * (k[j] * k[t]).sum(-1))[:, None] * u[j]
        u.append(beta[t][:, None] * acc)
    for t in range(k.shape[0]):
        ot = torch.exp(G[t])[:, None] * cur_t(q[t])
        for j in range(t + 1):
            ot = ot + (torch.exp(G[t] - G[j]) * (k[j] * q[t]).sum(-1))[:, None] * u[j]
        o.append(ot * scale)
    return torch.stack(o), torch.stack(u), G


def token_rows(p: Any, tok: dict[str, Any], b: int) -> tuple[Any, Any, Any, Any, Any]:
    """Sequence b's q, k (normalised, per value head), v, g, beta in float64 from a launch's
    token arguments (g/beta, or a/b with A_log/dt_bias)."""
    rep, rows = p.hv // p.hk, slice(b * p.k, (b + 1) * p.k)
    q = norm(tok["q"][rows].double().view(p.k, p.hk, p.dk)).repeat_interleave(rep, 1)
    k = norm(tok["k"][rows].double().view(p.k, p.hk, p.dk)).repeat_interleave(rep, 1)
    v = tok["v"][rows].double().view(p.k, p.hv, p.dv)
    if "g" in tok:
        g, beta = tok["g"][rows].double(), tok["beta"][rows].double()
    else:
        x = tok["a"][rows].double() + tok["dt_bias"].double()
        sp = torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x)
        g = -torch.exp(tok["a_log"].double()) * sp
        beta = torch.sigmoid(tok["b"][rows].double())
    return q, k, v, g, beta


class FakeStager:
    """wyjit.TableStager's stand-in: keeps what was staged (the tensors themselves)."""

    def __init__(self, writes: int, max_batch: int):
        self.writes, self.max_batch = writes, max_batch
        self.tables, self.slab_stride = 0x7F6000000000, max_batch
        self.staged: list = []

    def stage(self, states: list, inter: Any = None, stream: Any = None) -> None:
        self.staged = list(states)


class FakeWyjit:
    """wyjit's replay launches run by the emulator on CPU tensors, after the library's own
    argument checks (`real`, the wyjit package, with the tensors shown to it as CUDA arrays)
    where it loads."""

    TableStager = FakeStager

    def __init__(self, p: Any, layout: str, addressing: str, real: Any = None):
        self.p, self.layout, self.addressing, self.real = p, layout, addressing, real
        self.checked = 0

    def _check(self, entry: str, kernel: Any, kw: dict[str, Any]) -> None:
        if self.real is not None:
            getattr(self.real, f"check_{entry}")(kernel, **{k: as_cuda(v) for k, v in kw.items()})
            self.checked += 1

    def _refs(self, kw: dict[str, Any], b: int, out: bool = False) -> tuple[Any, Any, Any]:
        """(checkpoint read, where a fold or materialize writes, log tile) of sequence b."""
        if self.addressing == "strided":
            return kw["state"][b], kw["out"][b] if out else kw["state"][b], kw["log"][b]
        if self.addressing == "table":
            dst = kw["out_tables"].staged[b] if out else kw["tables"].staged[b]
            return kw["tables"].staged[b], dst, kw["log_tables"].staged[b]
        r = int(kw["read_slot"][b])
        w = int(kw["out_slot"][b]) if out else int(kw["write_slot"][b])
        log = kw["log"][int(kw["log_slot"][b])]
        return kw["state"][r], (kw["out"] if out else kw["state"])[w], log

    def _log(self, tile: Any) -> tuple[Any, Any, Any]:
        p, L = self.p, self.p.L
        nk, nu = L * p.hk * p.dk, L * p.hv * p.dv
        return (tile[:nk].view(L, p.hk, p.dk), tile[nk:nk + nu].view(L, p.hv, p.dv),
                tile[nk + nu:].view(L, p.hv))

    def _s0(self, tile: Any) -> Any:
        s = tile.double()
        return s if self.layout == "vk" else s.transpose(-1, -2)

    def _live(self, logk: Any, logu: Any, logG: Any, base: int, n: int) -> tuple[Any, Any, Any]:
        idx = [(base + j) % self.p.L for j in range(n)]
        rep = self.p.hv // self.p.hk
        return (logk[idx].double().repeat_interleave(rep, 1), logu[idx].double(),
                logG[idx].double())

    def gdn_replay_verify(self, kernel: Any, stream: Any = None, **kw: Any) -> None:
        self._check("gdn_replay_verify", kernel, kw)
        p = self.p
        for b in range(p.n):
            base, n = (int(c) for c in kw["cursor"][b])
            src, dst, tile = self._refs(kw, b)
            logk, logu, logG = self._log(tile)
            ks, us, Gs = self._live(logk, logu, logG, base, n)
            s0 = self._s0(src)
            q, k, v, g, beta = token_rows(p, kw, b)
            o, u, G = wy_tokens(s0, ks, us, Gs, q, k, v, g, beta, kw["scale"])
            kw["out"][b * p.k:(b + 1) * p.k] = o.reshape(p.k, -1).to(kw["out"].dtype)
            if n + 2 * p.k > p.L:  # fold: S_cur becomes the checkpoint, G restarts from it
                s = s_cur_t(s0, ks, us, Gs)
                dst.copy_((s if self.layout == "vk" else s.transpose(-1, -2)).to(dst.dtype))
            elif n:
                G = G + Gs[-1]
            for t in range(p.k):
                j = (base + n + t) % p.L
                logk[j] = k[t, ::p.hv // p.hk].float()
                logu[j], logG[j] = u[t].float(), G[t].float()

    def gdn_replay_commit(self, kernel: Any, stream: Any = None, **kw: Any) -> None:
        self._check("gdn_replay_commit", kernel, kw)
        cur, acc = kw["cursor"], kw["accepted"]
        for b in range(kw["batch"]):
            a = min(int(acc[b]), self.p.k)
            base, n = int(cur[b, 0]), int(cur[b, 1])
            cur[b] = torch.tensor([(base + n) % self.p.L, a] if n + 2 * self.p.k > self.p.L
                                  else [base, n + a])

    def gdn_replay_materialize(self, kernel: Any, stream: Any = None, **kw: Any) -> None:
        self._check("gdn_replay_materialize", kernel, kw)
        for b in range(self.p.n):
            base, n = (int(c) for c in kw["cursor"][b])
            src, dst, tile = self._refs(kw, b, out=True)
            s = s_cur_t(self._s0(src), *self._live(*self._log(tile), base, n))
            dst.copy_((s if self.layout == "vk" else s.transpose(-1, -2)).to(dst.dtype))


class CudaView:
    """A CPU tensor shown to wyjit's argument checks as a CUDA array (they read its dtype,
    shape, strides and address, never its memory)."""

    is_cuda = True
    device = "cuda:0"

    def __init__(self, t: Any):
        self.t, self.shape, self.dtype = t, tuple(t.shape), t.dtype

    def stride(self) -> tuple:
        return self.t.stride()

    def data_ptr(self) -> int:
        return self.t.data_ptr()

    def get_device(self) -> int:
        return 0


def as_cuda(v: Any) -> Any:
    return CudaView(v) if isinstance(v, torch.Tensor) else v


def flashinfer_kernel(p: Any, flush_min: int, ring: int = 32):
    """FlashInfer's ring kernel as its docstring states it (the harness cannot run the CuTe DSL
    on a CPU): a row with hist_len >= flush_min folds S_cur into the checkpoint, then every row
    appends its T entries (normalised k, u, G) at (base + len + s) & 31, G restarting at 0 after
    a fold; the cursors are only read."""

    def call(**kw: Any) -> None:
        tok = {"q": kw["q"].reshape(p.rows, -1), "k": kw["k"].reshape(p.rows, -1),
               "v": kw["v"].reshape(p.rows, -1), "a": kw["a"].reshape(p.rows, -1),
               "b": kw["b"].reshape(p.rows, -1), "a_log": kw["A_log"], "dt_bias": kw["dt_bias"]}
        h0, kc, uc, gc = kw["initial_state_source"], kw["k_cache"], kw["u_cache"], kw["g_cache"]
        rep = p.hv // p.hk
        for b in range(p.n):
            base, n = int(kw["cache_base"][b]), int(kw["hist_len"][b])
            idx = [(base + j) % ring for j in range(n)]
            ks = kc[b][:, idx].double().repeat_interleave(rep, 0).transpose(0, 1)
            us, Gs = uc[b][:, idx].double().transpose(0, 1), gc[b][:, idx].double().T
            q, k, v, g, beta = token_rows(p, tok, b)
            o, u, G = wy_tokens(h0[b].double(), ks, us, Gs, q, k, v, g, beta, kw["scale"])
            kw["output"][b] = o.to(kw["output"].dtype)
            if n >= flush_min:
                h0[b] = s_cur_t(h0[b].double(), ks, us, Gs).to(h0.dtype)
            elif n:
                G = G + Gs[-1]
            for t in range(p.k):
                j = (base + n + t) % ring
                kc[b][:, j] = k[t, ::rep].to(kc.dtype)
                uc[b][:, j], gc[b][:, j] = u[t].to(uc.dtype), G[t].float()

    return call


def close(a: Any, b: Any) -> float:
    """max |a - b| / max |b|."""
    return float((a.double() - b.double()).abs().max() / (b.double().abs().max() or 1.0))
