# SPDX-License-Identifier: Apache-2.0
"""The benchmark: the copy floor, then for every point one rotation plan, one set of inputs,
one rotated copy, and every runner timed on them."""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys
import traceback
from types import ModuleType
from typing import Any

from . import envinfo, report, timing
from .context import Context
from .core import MIB, Plan, Record, Unavailable, point_plan


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {"replays": args.replays, "warmup": args.warmup, "footprint_mib": args.footprint_mib,
            "min_calls": args.min_calls, "max_sets": args.max_sets, "copy_gib": args.copy_gib,
            "seed": args.seed, "peers": args.peer_keys, "wyjit": args.wyjit}


def _skip_status(e: Exception) -> str:
    """A runner that cannot exist here is skipped; one that broke has failed."""
    # NOTE: wyjit's InvalidSpecError: this build does not support the variant.
    unsupported = isinstance(e, Unavailable) or type(e).__name__ == "InvalidSpecError"
    return "skipped" if unsupported else "failed"


def measure(runner: Any, point: Any, plan: Plan, inputs: list, ctx: Context,
            args: argparse.Namespace, base: Record) -> Record:
    import torch

    why = runner.skip_reason(point)
    if why:
        base.status, base.note = "skipped", why
        return base
    bufs: list = []
    try:
        bound = runner.setup(point, ctx)
        base.variant, base.note = bound.variant, bound.note
        bufs = [bound.buffers(x) for x in inputs]
        bound(bufs[0])  # compiles (Triton) or loads (wyjit) outside the graph
        torch.cuda.synchronize()
        bind = getattr(bound, "bind", None)
        calls = [bind(bufs[i % plan.sets], i) if bind
                 else functools.partial(bound, bufs[i % plan.sets]) for i in range(plan.calls)]
        t = timing.graph_time(calls, args.replays, args.warmup)
        base.us, base.us_min, base.us_max = t.median_us, t.min_us, t.max_us
        base.spread_pct, base.replays = t.spread_pct, len(t.samples_us)
        if hasattr(bound, "step_calls"):
            _add_per_step(bound, base, t, args)
    except Exception as e:  # noqa: BLE001 - one runner's failure must not end the run
        base.status = _skip_status(e)
        base.note = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if args.verbose:
            traceback.print_exc()
    finally:
        del bufs
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return base


def _add_per_step(bound: Any, base: Record, verify: Any, args: argparse.Namespace) -> None:
    """Adds the launches a step makes once for all layers (timed in their own graph over the
    run, one call a step) divided by the layers to the per-layer time."""
    import torch

    steps = bound.step_calls()
    steps[0]()  # compiles outside the graph (it moves that graph's cursors one step: harmless)
    torch.cuda.synchronize()
    t = timing.graph_time(steps, args.replays, args.warmup)
    share = t.median_us / bound.layers
    base.us, base.us_min, base.us_max = (x + share for x in (base.us, base.us_min, base.us_max))
    base.parts = {"verify_us": verify.median_us, "step_us": t.median_us, "layers": bound.layers,
                  "step_spread_pct": t.spread_pct}
    traj = getattr(bound, "traj", None)
    if traj is not None:
        base.parts.update(fold_fraction=traj.fold_fraction, mean_len=traj.mean_len)
    del steps


def _line(r: Record) -> str:
    if r.us is None:
        return f"  {r.label:<24} {r.status}: {r.note}"
    xc = f" x{r.x_copy:.2f} copy" if r.x_copy else ""
    parts = (f"  (verify {r.parts['verify_us']:.2f} + step {r.parts['step_us']:.2f}/"
             f"{r.parts['layers']})" if r.parts else "")
    return (f"  {r.label:<24} {r.us:9.2f} us  {r.pct_of_floor:5.1f}% of floor{xc}  "
            f"spread {r.spread_pct:.1f}%{parts}")


def _write(args: argparse.Namespace, doc: dict[str, Any]) -> None:
    if args.json:
        pathlib.Path(args.json).write_text(report.to_json(doc))
    if args.md:
        pathlib.Path(args.md).write_text(report.markdown(doc))


def _document(fam: ModuleType, args: argparse.Namespace, env: dict, copy: dict, points: list,
              records: list) -> dict[str, Any]:
    doc = report.document(fam.NAME, args.command, env, copy, _config(args), points, records)
    if hasattr(fam, "notes_md"):
        doc["notes_md"] = fam.notes_md(points)
    return doc


def run(args: argparse.Namespace, fam: ModuleType) -> int:
    import torch

    if not torch.cuda.is_available():
        print("harness: torch sees no CUDA device", file=sys.stderr)
        return 2
    ctx = Context(pathlib.Path(args.peers_dir), args.cache_dir)
    env = envinfo.environment(ctx)
    print(f"{env.get('device')} | driver {env.get('driver')} | torch {env.get('torch')} "
          f"| triton {env.get('triton')} | wyjit {env.get('wyjit')}", flush=True)
    floor = timing.measure_copy_floor(args.copy_gib, args.copy_replays)
    copy = {"bytes": floor.bytes, "torch_gbs": floor.torch_gbs, "triton_gbs": floor.triton_gbs,
            "floor_gbs": floor.best_gbs}
    print(f"copy {floor.bytes / (1 << 30):.0f} GiB each way: torch copy_ {floor.torch_gbs:.0f} "
          f"GB/s, Triton {floor.triton_gbs or 0:.0f} GB/s -> floor {floor.best_gbs:.0f} GB/s",
          flush=True)
    runners = fam.runners(args)
    records: list[Record] = []
    points: list[dict[str, Any]] = []
    for p in fam.points(args):
        nbytes = fam.bytes_moved(p)
        plan = point_plan(fam, p, args)
        inputs = [fam.make_inputs(p, args.seed + i) for i in range(plan.sets)]
        rc = timing.rotated_copy(plan, args.replays)
        floor_us = floor.floor_us(nbytes)
        points.append({"group": p.group, "k": p.k, "n": p.n, "point": p.fields(), "bytes": nbytes,
                       "floor_us": floor_us, "sets": plan.sets, "calls": plan.calls,
                       "footprint": plan.footprint, "l2_cold": plan.l2_cold,
                       "copy_us": rc.best_us, "copy_torch_us": rc.torch_us,
                       "copy_triton_us": rc.triton_us,
                       **(fam.point_info(p, runners) if hasattr(fam, "point_info") else {})})
        print(f"{p.group} K={p.k} N={p.n}: {nbytes / MIB:.2f} MiB, floor {floor_us:.2f} us, "
              f"copy {rc.best_us:.2f} us, {plan.sets} sets x {plan.calls} calls", flush=True)
        for r in runners:
            base = Record(fam.NAME, r.key, r.label, r.kind, "", p.fields(), p.group, p.k, p.n,
                          nbytes, floor_us, rc.best_us, plan.sets, plan.calls)
            records.append(measure(r, p, plan, inputs, ctx, args, base))
            print(_line(records[-1]), flush=True)
        del inputs
        torch.cuda.empty_cache()
        # NOTE: written after every point, so a run cut short still leaves its results.
        _write(args, _document(fam, args, env, copy, points, records))
    doc = _document(fam, args, env, copy, points, records)
    _write(args, doc)
    print()
    print(report.markdown(doc))
    return 0 if all(r.status != "failed" for r in records) else 1
