# SPDX-License-Identifier: Apache-2.0
"""gdn_replay (replay mode, DESIGN.md "Replay mode"): axes, the cursor run, bytes, inputs, the
float64 reference, memory per sequence, and the runners (wyjit replay, wyjit classic, peers).

A point is (K, N) with the shape, io dtype, checkpoint dtype, gating, log capacity L
(default max(16, 2K) rounded up to a power of two), the acceptance probability (0.7: each
draft accepted until the first rejection), the steps of the run (200) and the layers a step
has (36). One timed call is one layer's verify at the cursors one step of the run gives it;
call i of the graph uses buffer set i % sets and the cursors of step i % steps, so a graph
replay averages over the whole run, folds as often as the run has them. A kernel's per-step
launches for all layers (wyjit's commit; a peer's cursor commit and, for SGLang and TRT-LLM
at N >= 16, the fold of every layer) are timed in their own graph over the same run and
divided by the layers: a record's time is verify + per-step / layers (the `parts` of its
JSON record). Each kernel moves its cursors by its own rule (families/_replay_cursors.py) on
the same acceptance draws.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import math
from typing import Any

from . import _replay_cursors as cursors
from . import gdn_verify as gv
from .. import states as states_mod
from ..core import MIB, Plan

NAME = "gdn_replay"
PEERS = ("vllm_replay", "sglang_replay", "trtllm_replay", "flashinfer_replay")
TRAJECTORY_SEED = 42  # the run is part of the point: the same draws for every kernel and seed
HISTORY_ROWS = 32  # logical log rows in the inputs (or L): the largest ring of any peer


@dataclasses.dataclass(frozen=True)
class Point:
    k: int
    n: int
    hk: int = 16
    hv: int = 32
    dk: int = 128
    dv: int = 128
    io: str = "bf16"
    state: str = "f32"  # the checkpoint's dtype
    gating: str = "g"
    log: int = 0  # L; 0: max(16, 2K) rounded up to a power of two
    accept: float = 0.7
    steps: int = 200
    layers: int = 36

    @property
    def L(self) -> int:
        return self.log or max(16, cursors.next_pow2(2 * self.k))

    @property
    def rows(self) -> int:
        return self.n * self.k

    @property
    def tile(self) -> int:
        return self.hv * self.dk * self.dv

    @property
    def scale(self) -> float:
        return self.dk ** -0.5

    @property
    def entry_floats(self) -> int:
        """One log entry of wyjit's: k [HK][dk], u [HV][dv], G [HV], fp32."""
        return self.hk * self.dk + self.hv * self.dv + self.hv

    @property
    def group(self) -> str:
        log = f"L={self.log}" if self.log else "L=max(16,2K)"
        return (f"HK={self.hk} HV={self.hv} dk={self.dk} dv={self.dv}, io {self.io}, "
                f"checkpoint {self.state}, gating {self.gating}, {log}, p={self.accept}, "
                f"{self.steps} steps, {self.layers} layers")

    def classic(self) -> gv.Point:
        """The classic verify at the same K and N (state dtype = the checkpoint's)."""
        return gv.Point(self.k, self.n, self.hk, self.hv, self.dk, self.dv, self.io,
                        self.state, self.gating)

    def fields(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "L": self.L}


@functools.lru_cache(maxsize=256)
def draws(p: Point) -> cursors.Draws:
    return cursors.draw(p.n, p.k, p.steps, p.accept, TRAJECTORY_SEED)


@functools.lru_cache(maxsize=1024)
def trajectory(p: Point, rule: cursors.Rule) -> cursors.Trajectory:
    return cursors.simulate(rule, draws(p), p.k)


def wyjit_trajectory(p: Point) -> cursors.Trajectory:
    return trajectory(p, cursors.wyjit_rule(p.L))


def bytes_moved(p: Point) -> int:
    """DESIGN.md "Performance model", per layer and step: the checkpoint read, the folds'
    writes (one state per folding sequence), the live log read (mean len entries), the K new
    entries written, the q/k/v/out rows and g/beta fp32 (or a/b in the io dtype). Fold fraction
    and mean len from wyjit's cursor run at the point. The formula of
    tools/bench/families/bench_gdn_replay.cpp."""
    t = wyjit_trajectory(p)
    io, st = gv.DTYPE_BYTES[p.io], gv.DTYPE_BYTES[p.state]
    entry = p.entry_floats * 4
    moved = (p.n * p.tile * st * (1.0 + t.fold_fraction) + p.n * t.mean_len * entry
             + p.n * p.k * entry + p.rows * (2 * p.hk * p.dk + 2 * p.hv * p.dv) * io
             + p.rows * p.hv * (2 * io if p.gating == "fused" else 8))
    return int(round(moved))


def memory_replay(p: Point) -> int:
    """wyjit replay, bytes per sequence and layer: the checkpoint and the log tile."""
    return p.tile * gv.DTYPE_BYTES[p.state] + p.L * p.entry_floats * 4


def memory_classic(p: Point) -> int:
    """Classic verify: the state and K-1 intermediate states (the state after token K-1 is
    written over S0)."""
    return p.k * p.tile * gv.DTYPE_BYTES[p.state]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("gdn_replay")
    g.add_argument("--io", type=gv._choices("io", gv.DTYPES), default=["bf16"])
    g.add_argument("--state", type=gv._choices("state", gv.DTYPES), default=["f32"],
                   help="checkpoint dtype(s)")
    g.add_argument("--gating", type=gv._choices("gating", gv.GATING), default=["g"])
    g.add_argument("--layout", type=gv._choices("layout", gv.LAYOUTS), default=["vk"],
                   help="wyjit checkpoint layout(s)")
    g.add_argument("--addressing", type=gv._choices("addressing", states_mod.ADDRESSING),
                   default=["strided"], help="wyjit addressing(s): strided, table, slot")
    g.add_argument("--dk", type=int, default=128)
    g.add_argument("--dv", type=int, default=128)
    g.add_argument("--log", type=_logs, default=[0],
                   help="log capacity L list (8,16,32,64); default max(16, 2K)")
    g.add_argument("--accept", type=float, default=0.7, help="per-draft acceptance probability")
    g.add_argument("--steps", type=int, default=200, help="steps of the cursor run")
    g.add_argument("--layers", type=int, default=36, help="layers the per-step launches serve")
    g.add_argument("--no-classic", dest="classic", action="store_false",
                   help="leave out wyjit classic (gdn_verify at the same K, N)")


def _logs(text: str) -> list[int]:
    items = [int(t) for t in text.split(",") if t.strip().isdigit()]
    if not items or any(x not in (8, 16, 32, 64) for x in items):
        raise argparse.ArgumentTypeError(f"--log {text!r}: use 8, 16, 32 or 64")
    return items


def points(args: argparse.Namespace) -> list[Point]:
    """Grouped by (io, checkpoint, gating, L), then K, then N."""
    return [Point(k, n, args.hk, args.hv, args.dk, args.dv, io, st, gate, log, args.accept,
                  args.steps, args.layers)
            for io, st, gate, log in itertools.product(args.io, args.state, args.gating, args.log)
            for k in args.k for n in args.n]


def plan(p: Point, args: argparse.Namespace) -> Plan:
    """Buffer sets as for every family (one cycle >= --footprint-mib), rounded so that the
    calls cover every step of the run once: sets a divisor of the steps and calls = steps, or,
    where more sets are needed, a multiple of the steps and calls = sets."""
    nbytes, target = bytes_moved(p), args.footprint_mib * MIB
    needed = max(1, min(args.max_sets, math.ceil(target / nbytes)))
    if needed <= p.steps:
        sets = next(d for d in range(needed, p.steps + 1) if p.steps % d == 0)
        return Plan(nbytes, sets, max(p.steps, args.min_calls), target)
    sets = math.ceil(needed / p.steps) * p.steps
    return Plan(nbytes, sets, sets, target)


def runners(args: argparse.Namespace) -> list[Any]:
    from ..peers import flashinfer_replay, sglang_replay, trtllm_replay, vllm_replay
    from . import _replay_wyjit as wy

    by_key = {"vllm_replay": vllm_replay.VllmReplay, "sglang_replay": sglang_replay.SglangReplay,
              "trtllm_replay": trtllm_replay.TrtllmReplay,
              "flashinfer_replay": flashinfer_replay.FlashinferReplay}
    out: list[Any] = [by_key[k]() for k in PEERS if k in args.peer_keys]
    if args.wyjit:
        out += [wy.WyjitReplay(layout, addr) for addr in args.addressing for layout in args.layout]
        if args.classic:
            out += [wy.WyjitClassic(layout) for layout in args.layout]
    return out


def point_info(p: Point, runners_: list[Any]) -> dict[str, Any]:
    """What the points entries of the JSON carry besides bytes: wyjit's run (fold fraction,
    mean len) and per runner its own run's fold fraction and its memory per sequence and
    layer (None where it does not run the point)."""
    t = wyjit_trajectory(p)
    info: dict[str, Any] = {"fold_fraction": t.fold_fraction, "mean_len": t.mean_len,
                            "memory_classic": memory_classic(p), "folds": {}, "memory": {},
                            "labels": {}}
    for r in runners_:
        if r.skip_reason(p):
            continue
        info["labels"][r.key] = r.label
        info["memory"][r.key] = r.memory_bytes(p)
        rule = r.rule(p)
        info["folds"][r.key] = None if rule is None else trajectory(p, rule).fold_fraction
    return info


def notes_md(points_: list[dict[str, Any]]) -> list[str]:
    """Markdown after the tables: memory per sequence and layer, and each runner's folds."""
    lines: list[str] = []
    groups = list(dict.fromkeys(pt["group"] for pt in points_))
    for group in groups:
        pts = [pt for pt in points_ if pt["group"] == group]
        keys = list(dict.fromkeys(k for pt in pts for k in pt["labels"]))
        labels = {k: v for pt in pts for k, v in pt["labels"].items()}
        head = "| " + " | ".join(["K", "L", "classic (state + K-1)"] + [labels[k] for k in keys])
        lines += ["", f"## Memory per sequence and layer, bytes ({group})", "", head + " |",
                  "|" + "---|" * (3 + len(keys))]
        seen = set()
        for pt in pts:
            if pt["k"] in seen:
                continue
            seen.add(pt["k"])
            row = [str(pt["k"]), str(pt["point"]["L"]), f"{pt['memory_classic']:,}"]
            row += [f"{pt['memory'][k]:,}" if k in pt["memory"] else "-" for k in keys]
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", f"Folds per sequence and step, each kernel's own cursor rule on the same "
                  f"draws ({group}):", "", "| K | N | mean len (wyjit) | " +
                  " | ".join(labels[k] for k in keys) + " |", "|" + "---|" * (3 + len(keys))]
        for pt in pts:
            cells = [f"{100 * pt['folds'][k]:.1f}%" if pt["folds"].get(k) is not None else "-"
                     for k in keys]
            lines.append(f"| {pt['k']} | {pt['n']} | {pt['mean_len']:.2f} | "
                         + " | ".join(cells) + " |")
    return lines


# ---- inputs and reference (torch) ----

@dataclasses.dataclass
class Inputs(gv.Inputs):
    """One buffer set: gdn_verify's token rows and checkpoint (state [N, HV, dv, dk], vk) and a
    logical log history each runner lays out in its own format: hist_k [N, R, HK, dk]
    (L2-normalised), hist_u [N, R, HV, dv], hist_g [N, R, HV] (per-token log-decay, fp32),
    R = max(32, L).
    The seed and device make the --check episode."""

    hist_k: Any = None
    hist_u: Any = None
    hist_g: Any = None
    seed: int = 0
    device: str = "cuda"


def make_inputs(p: Point, seed: int, device: str = "cuda") -> Inputs:
    """gdn_verify's random tokens and state, and a history: decays drawn as the tokens' g are,
    u of the size a real correction has (beta * (v - S^T k) with |v| ~ 0.5)."""
    import torch

    base = gv.make_inputs(p.classic(), seed, device)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed + 7_919)
    rows = (p.n, max(HISTORY_ROWS, p.L))
    k = torch.randn(*rows, p.hk, p.dk, generator=gen, device=device)
    u = torch.randn(*rows, p.hv, p.dv, generator=gen, device=device) * 0.3
    a = torch.randn(*rows, p.hv, generator=gen, device=device) * 0.5
    a = a + torch.empty(p.hv, device=device).uniform_(-1.0, 1.0, generator=gen)
    a_log = torch.empty(p.hv, device=device).uniform_(-2.0, 0.5, generator=gen)
    g = -torch.exp(a_log) * torch.nn.functional.softplus(a)
    return Inputs(**{f.name: getattr(base, f.name) for f in dataclasses.fields(gv.Inputs)},
                  hist_k=k / k.norm(dim=-1, keepdim=True), hist_u=u, hist_g=g.contiguous(),
                  seed=seed, device=device)


def check_steps(p: Point) -> int:
    """Steps of the --check episode: enough for a few folds at every K."""
    return max(8, 3 * p.L // p.k)


@dataclasses.dataclass
class Episode:
    tokens: list  # per step a gv.Inputs with the step's rows (state None)
    accepted: list  # per step [N] ints, 1..K


def episode(p: Point, x: Inputs) -> Episode:
    """The --check run from an empty log: fresh tokens each step, accepted counts drawn like the
    benchmark's (seeded by the inputs' seed)."""
    steps = check_steps(p)
    d = cursors.draw(p.n, p.k, steps, p.accept, x.seed, warmup=0)
    toks = []
    for s in range(steps):
        t = gv.make_inputs(p.classic(), x.seed * 1009 + s + 1, x.device)
        t.state = None
        toks.append(t)
    return Episode(toks, [list(a) for a in d.accepted])


def reference(p: Point, x: Inputs) -> dict[str, Any]:
    """The sequential recurrence in float64 over the episode: `out` [steps, N*K, HV*dv] (each
    step's K tokens from S_cur) and `state` [N, HV, dv, dk], S_cur after the last commit."""
    import torch

    ep = episode(p, x)
    s = x.state.double()
    outs = []
    for t, acc in zip(ep.tokens, ep.accepted, strict=True):
        res = gv.reference(p.classic(), dataclasses.replace(t, state=s))
        outs.append(res["out"])
        pick = torch.tensor([a - 1 for a in acc], device=s.device)
        s = res["states"][torch.arange(p.n, device=s.device), pick]
    return {"out": torch.stack(outs), "state": s}


def tolerance(p: Point, key: str) -> float:
    """wyjit's contract: fp32 log and fold, one rounding to the checkpoint dtype."""
    dtype = p.io if key == "out" else p.state
    return 1e-4 if dtype == "f32" else 2e-2


def peer_tolerance(p: Point, key: str) -> float:
    """The peers keep 16-bit logs (and some fold through bf16): their error is reported
    against 2e-2, the bound of a 16-bit state, whatever the checkpoint dtype."""
    return 2e-2
