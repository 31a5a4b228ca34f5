# SPDX-License-Identifier: Apache-2.0
"""wyjit's runners of the gdn_replay family: replay mode (one per layout and addressing) and
classic verify at the same K and N (one per layout, strided), for the same table.

wyjit replay calls wyjit.gdn_replay_verify per layer (it reads the cursor, the checkpoint and
the live log, writes the outputs and K entries, and folds when len + 2K > L) and
wyjit.gdn_replay_commit once per step; --check reads S_cur with wyjit.gdn_replay_materialize.
The log is wyjit's own (include/wyjit/gdn_replay.h): per entry k [HK][dk], u [HV][dv], G [HV]
in fp32, G measured from the checkpoint."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

from . import _replay_cursors as cursors
from . import gdn_replay as fam
from . import gdn_verify as gv
from ._replay_run import ReplayBound
from ..core import Unavailable


def variant_name(p: fam.Point, layout: str, addressing: str) -> str:
    """`gdn_replay.kK.lL.io_T.st_T.addressing.layout.dD[.l2norm][.gating]` (docs/replay.md),
    `dkA.dvB` when the head dims differ."""
    dims = f"d{p.dk}" if p.dk == p.dv else f"dk{p.dk}.dv{p.dv}"
    name = f"{fam.NAME}.k{p.k}.l{p.L}.io_{p.io}.st_{p.state}.{addressing}.{layout}.{dims}.l2norm"
    return name + (".gating" if p.gating == "fused" else "")


def log_tile(p: fam.Point, x: Any, history: bool) -> Any:
    """[N, L*(HK*dk + HV*dv + HV)] fp32: k rows, then u rows, then G rows (cumulative sums of
    the history's per-token g: G is measured from the checkpoint)."""
    import torch

    n, L = p.n, p.L
    if not history:
        return torch.zeros(n, L * p.entry_floats, dtype=torch.float32, device=x.q.device)
    k = x.hist_k[:, :L].reshape(n, -1)
    u = x.hist_u[:, :L].reshape(n, -1)
    g = torch.cumsum(x.hist_g[:, :L], dim=1).reshape(n, -1)
    return torch.cat([k, u, g], dim=1).float().contiguous()


def token_kwargs(p: Any, t: Any) -> dict[str, Any]:
    import torch

    out = torch.empty(p.rows, p.hv * p.dv, dtype=gv.torch_dtype(p.io), device=t.q.device)
    kw: dict[str, Any] = dict(batch=p.n, num_k_heads=p.hk, num_v_heads=p.hv, q=t.q, k=t.k,
                              v=t.v, out=out, scale=p.scale)
    if p.gating == "fused":
        kw.update(a=t.a, b=t.b, a_log=t.a_log, dt_bias=t.dt_bias)
    else:
        kw.update(g=t.g, beta=t.beta)
    return kw


def addressed(addressing: str, ckpt: Any, log: Any, wyjit: Any, stream: Any) -> dict[str, Any]:
    """The checkpoint and log references of one launch: strided tensors; two one-tile
    TableStagers; or pools with slot b+1 for sequence b (slot 0 left unused, so a slot index
    is never the row index) and the fold written to the slot it read."""
    import torch

    n = ckpt.shape[0]
    if addressing == "strided":
        return {"kw": {"state": ckpt, "log": log}, "ckpt": ckpt, "keep": []}
    if addressing == "table":
        st, lt = wyjit.TableStager(1, n), wyjit.TableStager(1, n)
        st.stage([ckpt[b] for b in range(n)], stream=stream)
        lt.stage([log[b] for b in range(n)], stream=stream)
        if ckpt.is_cuda:
            torch.cuda.synchronize()  # the stagers copy their host arrays asynchronously
        return {"kw": {"tables": st, "log_tables": lt}, "ckpt": ckpt, "keep": [log]}
    if addressing == "slot":
        pool = torch.zeros((n + 1, *ckpt.shape[1:]), dtype=ckpt.dtype, device=ckpt.device)
        pool[1:] = ckpt
        lpool = torch.zeros((n + 1, log.shape[1]), dtype=log.dtype, device=log.device)
        lpool[1:] = log
        slots = torch.arange(1, n + 1, dtype=torch.int32, device=ckpt.device)
        return {"kw": {"state": pool, "read_slot": slots, "write_slot": slots, "log": lpool,
                       "log_slot": slots}, "ckpt": pool[1:], "keep": []}
    raise ValueError(f"addressing {addressing!r}")


class WyjitReplay:
    kind = "wyjit"

    def __init__(self, layout: str, addressing: str):
        self.layout, self.addressing = layout, addressing
        self.key = f"wyjit.replay.{addressing}.{layout}"
        self.label = f"wyjit replay {addressing} {layout}"

    def skip_reason(self, p: fam.Point) -> Optional[str]:
        if p.L < 2 * p.k:
            return f"L={p.L} < 2K: the fold rule needs L >= 2K"
        return None

    def rule(self, p: fam.Point) -> cursors.Rule:
        return cursors.wyjit_rule(p.L)

    def memory_bytes(self, p: fam.Point) -> int:
        return fam.memory_replay(p)

    def setup(self, p: fam.Point, ctx: Any) -> "_ReplayBound":
        wyjit = ctx.wyjit()
        if not hasattr(wyjit, "gdn_replay_verify"):
            raise Unavailable("the wyjit package has no gdn_replay_verify()")
        # NOTE: Jit.kernel raises InvalidSpecError for a variant this build does not support.
        kernel = ctx.jit().kernel(variant_name(p, self.layout, self.addressing))
        return _ReplayBound(p, self, kernel, wyjit)


class _ReplayBound(ReplayBound):
    def __init__(self, p: fam.Point, r: WyjitReplay, kernel: Any, wyjit: Any,
                 device: str = "cuda"):
        self.r, self.kernel, self.wyjit = r, kernel, wyjit
        traj = fam.trajectory(p, r.rule(p))
        super().__init__(p, traj, str(getattr(kernel, "spec", kernel)),
                         f"verify + commit/{p.layers}; fp32 log of {p.L} entries", device)

    def arrays(self, x: Any, layers: int, history: bool) -> dict[str, Any]:
        import torch

        s = x.state if self.r.layout == "vk" else x.state.transpose(-1, -2)
        # NOTE: a copy: the folds write the checkpoint, never the inputs other runners read.
        return addressed(self.r.addressing, s.clone(memory_format=torch.contiguous_format),
                         log_tile(self.p, x, history), self.wyjit, self.stream())

    def tokens(self, t: Any) -> dict[str, Any]:
        return token_kwargs(self.p, t)

    def cursors(self, base: Sequence[int], length: Sequence[int], fold: Sequence[bool]) -> Any:
        import torch

        rows = [[b, n] for b, n in zip(base, length, strict=True)]
        return torch.tensor(rows, dtype=torch.int32, device=self.device)

    def launch(self, arr: dict[str, Any], tok: dict[str, Any], cur: Any) -> None:
        self.wyjit.gdn_replay_verify(self.kernel, stream=self.stream(), cursor=cur, **tok,
                                     **arr["kw"])

    def commit(self, arr: Optional[dict[str, Any]], cur: Any, acc: Any) -> None:
        self.wyjit.gdn_replay_commit(self.kernel, stream=self.stream(), batch=self.p.n,
                                     cursor=cur, accepted=acc)

    def output(self, tok: dict[str, Any]) -> Any:
        return tok["out"].float()

    def materialize(self, arr: dict[str, Any], cur: Any) -> Any:
        import torch

        p, ckpt = self.p, arr["ckpt"]
        kw = {k: v for k, v in arr["kw"].items() if k != "write_slot"}
        out = torch.empty_like(ckpt)
        if self.r.addressing == "strided":
            kw["out"] = out
        elif self.r.addressing == "table":
            ot = self.wyjit.TableStager(1, p.n)
            ot.stage([out[b] for b in range(p.n)], stream=self.stream())
            kw["out_tables"] = ot
        else:
            pool = torch.zeros((p.n + 1, *out.shape[1:]), dtype=out.dtype, device=out.device)
            kw.update(out=pool, out_slot=torch.arange(1, p.n + 1, dtype=torch.int32,
                                                      device=out.device))
        self.wyjit.gdn_replay_materialize(self.kernel, stream=self.stream(), batch=p.n,
                                          num_k_heads=p.hk, num_v_heads=p.hv, cursor=cur, **kw)
        if out.is_cuda:
            torch.cuda.synchronize()
        s = kw["out"][1:] if self.r.addressing == "slot" else out
        return (s if self.r.layout == "vk" else s.transpose(-1, -2)).double()


class WyjitClassic:
    """gdn_verify at the point's K and N (one state read, K writes; the checkpoint dtype as its
    state dtype), strided: the design replay mode replaces, in the same table. Its time is the
    verify alone (an engine's accepted-state bookkeeping is not counted). --check runs the
    episode classically: each step from S_cur, then S_cur = the state after the accepted
    tokens."""

    kind = "wyjit"

    def __init__(self, layout: str):
        self.layout = layout
        self.key = f"wyjit.classic.{layout}"
        self.label = f"wyjit classic {layout}"
        self.inner = gv.WyjitGdnVerify(layout, "strided")

    def skip_reason(self, p: fam.Point) -> Optional[str]:
        return None

    def rule(self, p: fam.Point) -> Optional[cursors.Rule]:
        return None

    def memory_bytes(self, p: fam.Point) -> int:
        return fam.memory_classic(p)

    def setup(self, p: fam.Point, ctx: Any) -> "_ClassicBound":
        return _ClassicBound(p, self.inner.setup(p.classic(), ctx))


class _ClassicBound:
    def __init__(self, p: fam.Point, inner: Any):
        self.p, self.inner = p, inner
        self.variant = inner.variant
        self.note = "classic verify only (no commit)"

    def buffers(self, x: Any) -> dict[str, Any]:
        return {"inner": self.inner.buffers(x), "x": x}

    def __call__(self, bufs: dict[str, Any]) -> None:
        self.inner(bufs["inner"])

    def check_call(self, bufs: dict[str, Any]) -> None:
        import torch

        p, x = self.p, bufs["x"]
        ep = fam.episode(p, x)
        s, outs = x.state, []
        rows = torch.arange(p.n, device=s.device)
        for t, acc in zip(ep.tokens, ep.accepted, strict=True):
            b = self.inner.buffers(dataclasses.replace(t, state=s))
            self.inner(b)
            res = self.inner.readback(b)
            outs.append(res["out"])
            pick = torch.tensor([a - 1 for a in acc], device=s.device)
            s = res["states"][rows, pick].to(x.state.dtype)
        bufs["check"] = {"out": torch.stack(outs), "state": s.double()}

    def readback(self, bufs: dict[str, Any]) -> dict[str, Any]:
        return bufs["check"]
