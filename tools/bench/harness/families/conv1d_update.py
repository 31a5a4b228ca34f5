# SPDX-License-Identifier: Apache-2.0
"""conv1d_update (K-token causal depthwise conv): axes, bytes, inputs, reference, wyjit's runners.

A point is (K, N) with channels, width W, io and weight dtypes, the rollback form (window or
intermediate) and bias/SiLU; wyjit's runners are one per (layout of the state tiles, addressing):
ct = [channels][cols], tc = [cols][channels]. Math and data: include/wyjit/conv1d_update.hpp.

wyjit's runner calls `wyjit.conv1d_update(kernel, batch=, channels=, x=, y=, weight=, bias=,
state=, inter=, state_cols=, window_offset=, stream=, ...)` with the field names of
wyjit::Conv1dUpdateArgs taking tensors.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from typing import Any, Optional

from .. import states as states_mod
from ..core import Unavailable
from .gdn_verify import DTYPE_BYTES, DTYPES, _choices, torch_dtype

NAME = "conv1d_update"
ROLLBACKS = ("window", "intermediate")
LAYOUTS = ("ct", "tc")
PATHS = ("auto", "wide", "narrow")
PEERS = ("vllm_conv1d",)


@dataclasses.dataclass(frozen=True)
class Point:
    k: int
    n: int
    channels: int = 8192
    width: int = 4
    io: str = "bf16"
    weight: str = "bf16"
    rollback: str = "window"
    bias: bool = False
    silu: bool = True

    @property
    def rows(self) -> int:
        return self.n * self.k

    @property
    def cols(self) -> int:
        """Columns of wyjit's state tile: W-1 (intermediate) or W-1+K (window)."""
        return self.width - 1 + (self.k if self.rollback == "window" else 0)

    @property
    def offset(self) -> int:
        """The window form's read offset (as if one token was accepted last time; 0 at K=1, where
        a peer's accepted count of 2 would be out of range)."""
        return 1 if self.k >= 2 else 0

    @property
    def group(self) -> str:
        opts = "".join((" bias" if self.bias else "", " silu" if self.silu else ""))
        return (f"channels={self.channels} W={self.width}, io {self.io}, weight {self.weight}, "
                f"{self.rollback}{opts}")

    def fields(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def bytes_moved(p: Point) -> int:
    """x and y, the weights (and bias), the W-1 history columns read, and the states written: K
    tiles of W-1 columns (intermediate) or one window of W-1+K columns and the offsets (window).
    The same formula as tools/bench/families/bench_conv1d.cpp."""
    io, wt = DTYPE_BYTES[p.io], DTYPE_BYTES[p.weight]
    h, c, n, k = p.width - 1, p.channels, p.n, p.k
    xy = 2 * n * k * c * io
    params = c * (p.width + (1 if p.bias else 0)) * wt
    read = n * c * h * io
    window = p.rollback == "window"
    written = n * c * (h + k) * io if window else n * k * c * h * io
    return xy + params + read + written + (n * 4 if window else 0)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("conv1d_update")
    g.add_argument("--channels", type=int, default=None,
                   help="channels per token (default 2*HK*128 + HV*128: 8192 for Qwen3-Next)")
    g.add_argument("--width", type=int, default=4)
    g.add_argument("--io", type=_choices("io", DTYPES), default=["bf16"])
    g.add_argument("--weight", type=_choices("weight", DTYPES), default=["bf16"])
    g.add_argument("--rollback", type=_choices("rollback", ROLLBACKS), default=list(ROLLBACKS))
    g.add_argument("--layout", type=_choices("layout", LAYOUTS), default=list(LAYOUTS),
                   help="wyjit state tiles: ct ([channels][cols]) or tc ([cols][channels])")
    g.add_argument("--addressing", type=_choices("addressing", states_mod.ADDRESSING),
                   default=["strided"])
    g.add_argument("--bias", action="store_true", help="add a per-channel bias")
    g.add_argument("--no-silu", dest="silu", action="store_false")
    g.add_argument("--path", choices=PATHS, default="auto", help="wyjit's kernel path")


def points(args: argparse.Namespace) -> list[Point]:
    channels = args.channels or 2 * args.hk * 128 + args.hv * 128
    return [Point(k, n, channels, args.width, io, wt, rb, args.bias, args.silu)
            for io, wt, rb in itertools.product(args.io, args.weight, args.rollback)
            for k in args.k for n in args.n]


def runners(args: argparse.Namespace) -> list[Any]:
    from ..peers import vllm_conv1d

    out: list[Any] = [vllm_conv1d.VllmConv1d()] if "vllm_conv1d" in args.peer_keys else []
    if args.wyjit:
        out += [WyjitConv1d(layout, addr, args.path)
                for addr in args.addressing for layout in args.layout]
    return out


@dataclasses.dataclass
class Inputs:
    """x [N*K, C]; weight [C, W]; bias [C] or None; window [N, C, W-1+K] (logical, channel
    major): the history is columns [offset, offset+W-1) (window form) or [0, W-1)."""

    x: Any
    weight: Any
    bias: Any
    window: Any


def make_inputs(p: Point, seed: int, device: str = "cuda") -> Inputs:
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    io, wt = torch_dtype(p.io), torch_dtype(p.weight)
    c = p.channels
    return Inputs(
        x=torch.randn(p.rows, c, generator=gen, device=device).to(io),
        weight=(torch.randn(c, p.width, generator=gen, device=device) * 0.5).to(wt),
        bias=(torch.randn(c, generator=gen, device=device) * 0.5).to(wt) if p.bias else None,
        window=torch.randn(p.n, c, p.width - 1 + p.k, generator=gen, device=device).to(io),
    )


def history(p: Point, x: Inputs) -> Any:
    start = p.offset if p.rollback == "window" else 0
    return x.window[..., start:start + p.width - 1]


def reference(p: Point, x: Inputs) -> dict[str, Any]:
    """float64: `y` [N*K, C]; window form `window_tail` = the window z[1:] ([N, C, W-2+K],
    what every window form keeps in common); intermediate form `states` [N, K, C, W-1]."""
    import torch

    xs = x.x.double().view(p.n, p.k, p.channels).permute(0, 2, 1)
    z = torch.cat([history(p, x).double(), xs], dim=-1)  # [N, C, W-1+K]
    w = x.weight.double()
    ys = []
    for t in range(p.k):
        acc = (z[..., t:t + p.width] * w).sum(-1)
        if x.bias is not None:
            acc = acc + x.bias.double()
        ys.append(acc * torch.sigmoid(acc) if p.silu else acc)
    y = torch.stack(ys, 1).reshape(p.rows, p.channels)
    if p.rollback == "window":
        return {"y": y, "window_tail": z[..., 1:]}
    return {"y": y, "states": torch.stack([z[..., t + 1:t + p.width] for t in range(p.k)], 1)}


def tolerance(p: Point, key: str) -> float:
    if key == "y":
        return 1e-4 if p.io == "f32" and p.weight == "f32" else 2e-2
    return 1e-6  # state columns are copies of inputs


def variant_name(p: Point, addressing: str) -> str:
    """wyjit's canonical name (include/wyjit/conv1d_update.hpp):
    `conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]`."""
    name = f"{NAME}.k{p.k}.io_{p.io}.w{p.width}.wt_{p.weight}.{p.rollback}.{addressing}"
    return name + (".bias" if p.bias else "") + (".silu" if p.silu else "")


class WyjitConv1d:
    kind = "wyjit"

    def __init__(self, layout: str, addressing: str, path: str = "auto"):
        self.layout, self.addressing, self.path = layout, addressing, path
        self.key = f"wyjit.{addressing}.{layout}" + ("" if path == "auto" else f".{path}")
        self.label = f"wyjit {addressing} {layout}" + ("" if path == "auto" else f" {path}")

    def skip_reason(self, p: Point) -> Optional[str]:
        return None

    def setup(self, p: Point, ctx: Any) -> "_WyjitBound":
        wyjit = ctx.wyjit()
        if not hasattr(wyjit, "conv1d_update"):
            raise Unavailable("the wyjit package has no conv1d_update() yet")
        return _WyjitBound(p, self, ctx.jit().kernel(variant_name(p, self.addressing)), wyjit)


class _WyjitBound:
    def __init__(self, p: Point, r: WyjitConv1d, kernel: Any, wyjit: Any):
        self.p, self.r, self.kernel, self.wyjit = p, r, kernel, wyjit
        self.variant = str(kernel.spec)
        self.note = ""

    def buffers(self, x: Inputs) -> dict[str, Any]:
        import torch

        p, ct = self.p, self.r.layout == "ct"
        logical = (x.window if p.rollback == "window" else history(p, x))[..., :p.cols]
        phys = logical.contiguous() if ct else logical.transpose(1, 2).contiguous()
        writes = 1 if p.rollback == "window" else p.k
        tiles = states_mod.arrange(self.r.addressing, phys, writes, self.wyjit)
        y = torch.empty_like(x.x)
        kw: dict[str, Any] = dict(
            batch=p.n, channels=p.channels, x=x.x, y=y, weight=x.weight, bias=x.bias,
            state_cols=p.cols, state_channel_stride=p.cols if ct else 1,
            state_col_stride=1 if ct else p.channels, **tiles.kwargs)
        if p.rollback == "window":
            kw["window_offset"] = torch.full((p.n,), p.offset, dtype=torch.int32, device=y.device)
        if self.r.path != "auto":
            kw["path"] = self.r.path
        return {"kwargs": kw, "tiles": tiles}

    def __call__(self, bufs: dict[str, Any]) -> None:
        import torch

        self.wyjit.conv1d_update(self.kernel, stream=torch.cuda.current_stream(), **bufs["kwargs"])

    def readback(self, bufs: dict[str, Any]) -> dict[str, Any]:
        p = self.p
        s = bufs["tiles"].written()  # [N, writes, *phys]
        if self.r.layout == "tc":
            s = s.transpose(-1, -2)
        out: dict[str, Any] = {"y": bufs["kwargs"]["y"].float()}
        if p.rollback == "window":
            out["window_tail"] = s[:, 0, :, 1:p.cols].float()
        else:
            out["states"] = s.float()
        return out
