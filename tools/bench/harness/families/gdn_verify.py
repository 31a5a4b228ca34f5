# SPDX-License-Identifier: Apache-2.0
"""gdn_verify (classic: every state kept): axes, bytes, inputs, reference, and wyjit's runners.

A point is (K, N) with the shape (HK, HV, dk, dv), the io and state dtypes and the gating
(`g`: fp32 g/beta; `fused`: raw a/b in the io dtype with fp32 A_log/dt_bias). wyjit's runners
are one per (layout, addressing); the peers come from ../peers. Every kernel at a point reads
the same logical inputs: q/k L2-normalised in the kernel, scale 1/sqrt(dk), and g/beta
derived in fp32 from a/b (g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b)), so a
kernel with fused gating and one taking g/beta compute the same thing.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from typing import Any, Optional

from .. import states as states_mod

NAME = "gdn_verify"
DTYPES = ("f32", "f16", "bf16")
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
GATING = ("g", "fused")
LAYOUTS = ("vk", "kv")
PEERS = ("vllm_spec", "sglang_verify", "sglang_update")  # the table's column order


@dataclasses.dataclass(frozen=True)
class Point:
    k: int
    n: int
    hk: int = 16
    hv: int = 32
    dk: int = 128
    dv: int = 128
    io: str = "bf16"
    state: str = "f32"
    gating: str = "g"

    @property
    def rows(self) -> int:
        return self.n * self.k

    @property
    def tile(self) -> int:
        """Elements of one sequence's state."""
        return self.hv * self.dk * self.dv

    @property
    def scale(self) -> float:
        return self.dk ** -0.5

    @property
    def group(self) -> str:
        return (f"HK={self.hk} HV={self.hv} dk={self.dk} dv={self.dv}, io {self.io}, "
                f"state {self.state}, gating {self.gating}")

    def fields(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def bytes_moved(p: Point) -> int:
    """DESIGN.md "Performance model": (1+K)*N*HV*dk*dv*sizeof(state) of state (S0 read once, K
    states written), the q/k/v/out rows, and g/beta fp32 (or a/b in the io dtype plus
    A_log/dt_bias). The same formula as tools/bench/families/bench_gdn_verify.cpp."""
    io, st = DTYPE_BYTES[p.io], DTYPE_BYTES[p.state]
    state = (1 + p.k) * p.n * p.tile * st
    rows = p.rows * (2 * p.hk * p.dk + 2 * p.hv * p.dv) * io
    gating = p.rows * p.hv * 2 * io + p.hv * 8 if p.gating == "fused" else p.rows * p.hv * 8
    return state + rows + gating


def _choices(kind: str, allowed: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        items = [t for t in text.split(",") if t]
        bad = [t for t in items if t not in allowed]
        if not items or bad:
            raise argparse.ArgumentTypeError(f"{kind} {text!r}: use {', '.join(allowed)}")
        return items
    return parse


def add_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("gdn_verify")
    g.add_argument("--io", type=_choices("io", DTYPES), default=["bf16"],
                   help="q/k/v/out dtype(s)")
    g.add_argument("--state", type=_choices("state", DTYPES), default=["f32"],
                   help="state dtype(s)")
    g.add_argument("--gating", type=_choices("gating", GATING), default=["g"],
                   help="g: fp32 g/beta; fused: raw a/b + A_log/dt_bias (default g)")
    g.add_argument("--layout", type=_choices("layout", LAYOUTS), default=["vk"],
                   help="wyjit state layout(s): vk ([dv][dk]) or kv")
    g.add_argument("--addressing", type=_choices("addressing", states_mod.ADDRESSING),
                   default=["strided"], help="wyjit addressing(s): strided, table, slot")
    g.add_argument("--dk", type=int, default=128)
    g.add_argument("--dv", type=int, default=128)


def points(args: argparse.Namespace) -> list[Point]:
    """Grouped by (io, state, gating), then K, then N."""
    return [Point(k, n, args.hk, args.hv, args.dk, args.dv, io, st, gate)
            for io, st, gate in itertools.product(args.io, args.state, args.gating)
            for k in args.k for n in args.n]


def runners(args: argparse.Namespace) -> list[Any]:
    from ..peers import sglang_update, sglang_verify, vllm_spec

    by_key = {"vllm_spec": vllm_spec.VllmSpec, "sglang_verify": sglang_verify.SglangVerify,
              "sglang_update": sglang_update.SglangUpdate}
    out: list[Any] = [by_key[k]() for k in PEERS if k in args.peer_keys]
    if args.wyjit:
        out += [WyjitGdnVerify(layout, addr) for addr in args.addressing for layout in args.layout]
    return out


# ---- inputs and reference (torch) ----

def torch_dtype(name: str) -> Any:
    import torch

    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[name]


@dataclasses.dataclass
class Inputs:
    """One buffer set's logical inputs. Rows are [N*K, heads*dim]; state is [N, HV, dv, dk]
    (wyjit's vk layout, dk contiguous) in the state dtype."""

    q: Any
    k: Any
    v: Any
    a: Any
    b: Any
    a_log: Any
    dt_bias: Any
    g: Any
    beta: Any
    state: Any


def make_inputs(p: Point, seed: int, device: str = "cuda") -> Inputs:
    """Random data, never zeros. Decays g in about (-4, -0.01); beta in (0, 1)."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    io = torch_dtype(p.io)

    def randn(*shape: int, scale: float = 1.0) -> Any:
        return torch.randn(*shape, generator=gen, device=device) * scale

    a = randn(p.rows, p.hv, scale=0.5).to(io)
    b = randn(p.rows, p.hv).to(io)
    a_log = torch.empty(p.hv, device=device).uniform_(-2.0, 0.5, generator=gen)
    dt_bias = torch.empty(p.hv, device=device).uniform_(-1.0, 1.0, generator=gen)
    x = a.float() + dt_bias
    softplus = torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x)
    return Inputs(
        q=randn(p.rows, p.hk * p.dk).to(io),
        k=randn(p.rows, p.hk * p.dk).to(io),
        v=randn(p.rows, p.hv * p.dv, scale=0.5).to(io),
        a=a, b=b, a_log=a_log, dt_bias=dt_bias,
        g=(-torch.exp(a_log) * softplus).contiguous(),
        beta=torch.sigmoid(b.float()).contiguous(),
        state=randn(p.n, p.hv, p.dv, p.dk, scale=0.1).to(torch_dtype(p.state)),
    )


def reference(p: Point, x: Inputs) -> dict[str, Any]:
    """The sequential recurrence (DESIGN.md "The math") in float64: `out` [N*K, HV*dv] and
    `states` [N, K, HV, dv, dk] (the state after each token)."""
    import torch

    n, k = p.n, p.k

    def norm(t: Any) -> Any:
        return t / torch.sqrt((t * t).sum(-1, keepdim=True) + 1e-6)

    rep = p.hv // p.hk
    q = norm(x.q.double().view(n, k, p.hk, p.dk)).repeat_interleave(rep, dim=2)
    kk = norm(x.k.double().view(n, k, p.hk, p.dk)).repeat_interleave(rep, dim=2)
    v = x.v.double().view(n, k, p.hv, p.dv)
    g = x.g.double().view(n, k, p.hv)
    beta = x.beta.double().view(n, k, p.hv)
    s = x.state.double()
    outs, states = [], []
    for t in range(k):
        s = s * torch.exp(g[:, t])[..., None, None]
        u = beta[:, t][..., None] * (v[:, t] - torch.einsum("nhvk,nhk->nhv", s, kk[:, t]))
        s = s + u[..., :, None] * kk[:, t][..., None, :]
        outs.append(torch.einsum("nhvk,nhk->nhv", s, q[:, t]) * p.scale)
        states.append(s)
    return {"out": torch.stack(outs, 1).reshape(p.rows, p.hv * p.dv),
            "states": torch.stack(states, 1)}


def tolerance(p: Point, key: str) -> float:
    """Largest max|x - ref| / max|ref| accepted by --check."""
    dtype = p.io if key == "out" else p.state
    return 1e-4 if dtype == "f32" else 2e-2


# ---- wyjit's runner ----

def variant_name(p: Point, layout: str, addressing: str) -> str:
    """wyjit's canonical name (include/wyjit/gdn_verify.hpp):
    `gdn_verify.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]`, `dkA.dvB` when the head
    dims differ. Names, not Spec objects, cross into the package: they are its stable contract."""
    dims = f"d{p.dk}" if p.dk == p.dv else f"dk{p.dk}.dv{p.dv}"
    name = f"{NAME}.k{p.k}.io_{p.io}.st_{p.state}.{addressing}.{layout}.{dims}.l2norm"
    return name + (".gating" if p.gating == "fused" else "")


class WyjitGdnVerify:
    """wyjit.gdn_verify with one (layout, addressing): the state after token t goes to Hi_t
    (t < K-1) and the final state over S0 (strided, table) or to its own slot (slot)."""

    kind = "wyjit"

    def __init__(self, layout: str, addressing: str):
        self.layout, self.addressing = layout, addressing
        self.key = f"wyjit.{addressing}.{layout}"
        self.label = f"wyjit {addressing} {layout}"

    def skip_reason(self, p: Point) -> Optional[str]:
        return None

    def setup(self, p: Point, ctx: Any) -> "_WyjitBound":
        # NOTE: Jit.kernel raises InvalidSpecError for a variant this build does not support.
        kernel = ctx.jit().kernel(variant_name(p, self.layout, self.addressing))
        return _WyjitBound(p, self.layout, self.addressing, kernel, ctx.wyjit())


class _WyjitBound:
    def __init__(self, p: Point, layout: str, addressing: str, kernel: Any, wyjit: Any):
        self.p, self.layout, self.addressing = p, layout, addressing
        self.kernel, self.wyjit = kernel, wyjit
        self.variant = str(kernel.spec)
        self.note = ""

    def buffers(self, x: Inputs) -> dict[str, Any]:
        import torch

        p = self.p
        phys = x.state if self.layout == "vk" else x.state.transpose(-1, -2).contiguous()
        tiles = states_mod.arrange(self.addressing, phys, p.k, self.wyjit)
        out = torch.empty(p.rows, p.hv * p.dv, dtype=torch_dtype(p.io), device=x.q.device)
        kw: dict[str, Any] = dict(batch=p.n, num_k_heads=p.hk, num_v_heads=p.hv, q=x.q, k=x.k,
                                  v=x.v, out=out, scale=p.scale, **tiles.kwargs)
        if p.gating == "fused":
            kw.update(a=x.a, b=x.b, a_log=x.a_log, dt_bias=x.dt_bias)
        else:
            kw.update(g=x.g, beta=x.beta)
        return {"kwargs": kw, "tiles": tiles}

    def __call__(self, bufs: dict[str, Any]) -> None:
        import torch

        self.wyjit.gdn_verify(self.kernel, stream=torch.cuda.current_stream(), **bufs["kwargs"])

    def readback(self, bufs: dict[str, Any]) -> dict[str, Any]:
        s = bufs["tiles"].written()
        if self.layout == "kv":
            s = s.transpose(-1, -2)
        return {"out": bufs["kwargs"]["out"].float(), "states": s.float()}
