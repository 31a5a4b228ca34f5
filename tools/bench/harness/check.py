# SPDX-License-Identifier: Apache-2.0
"""--check: every runner once on the same inputs at each point; its outputs and written states
against the float64 sequential reference and against wyjit's first runner (max abs and
max |x - ref| / max |ref|). Exits non-zero if any runner fails or exceeds the tolerance."""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import traceback
from types import ModuleType
from typing import Any, Optional

from . import envinfo, report
from .context import Context
from .core import Unavailable


def compare(x: Any, ref: Any) -> tuple[float, float]:
    """(max |x - ref|, that over max |ref|); inf when shapes differ or values are not finite."""
    if tuple(x.shape) != tuple(ref.shape):
        return math.inf, math.inf
    diff = (x.double() - ref.double()).abs().max().item()
    scale = ref.double().abs().max().item() or 1.0
    if not math.isfinite(diff):
        return math.inf, math.inf
    return diff, diff / scale


def with_final(res: dict[str, Any]) -> dict[str, Any]:
    """Adds `final` (the state after the last token) where a result has per-token `states`."""
    if "states" in res:
        res = {**res, "final": res["states"][:, -1]}
    return res


def run(args: argparse.Namespace, fam: ModuleType) -> int:
    import torch

    if not torch.cuda.is_available():
        print("harness: torch sees no CUDA device", file=sys.stderr)
        return 2
    ctx = Context(pathlib.Path(args.peers_dir), args.cache_dir)
    env = envinfo.environment(ctx)
    runners = fam.runners(args)
    checks: list[dict[str, Any]] = []
    failures = 0
    for p in fam.points(args):
        x = fam.make_inputs(p, args.seed)
        ref = with_final(fam.reference(p, x))
        results: list[tuple[Any, dict[str, Any]]] = []
        print(f"{p.group} K={p.k} N={p.n}:")
        for r in runners:
            why = r.skip_reason(p)
            if why:
                print(f"  {r.label}: skipped: {why}")
                continue
            try:
                bound = r.setup(p, ctx)
                bufs = bound.buffers(x)
                getattr(bound, "check_call", bound)(bufs)
                torch.cuda.synchronize()
                results.append((r, with_final(bound.readback(bufs))))
            except Exception as e:  # noqa: BLE001 - report every runner
                print(f"  {r.label}: {type(e).__name__}: {e}")
                if args.verbose:
                    traceback.print_exc()
                failures += not (isinstance(e, Unavailable)
                                 or type(e).__name__ == "InvalidSpecError")
        wy: Optional[dict[str, Any]] = next((res for r, res in results if r.kind == "wyjit"), None)
        for r, res in results:
            for key, val in res.items():
                a_ref, rel_ref = compare(val, ref[key])
                a_w = rel_w = None
                if wy is not None and res is not wy and key in wy:
                    a_w, rel_w = compare(val, wy[key])
                peer_tol = getattr(fam, "peer_tolerance", None)
                tol = peer_tol(p, key) if r.kind == "peer" and peer_tol else fam.tolerance(p, key)
                ok = rel_ref <= tol
                failures += not ok
                checks.append({"group": p.group, "k": p.k, "n": p.n, "runner": r.key,
                               "label": r.label, "key": key, "abs_vs_ref": a_ref,
                               "rel_vs_ref": rel_ref, "abs_vs_wyjit": a_w,
                               "rel_vs_wyjit": rel_w, "tolerance": tol, "ok": ok})
                vs_w = "" if rel_w is None else f"  vs wyjit abs {a_w:.3e} rel {rel_w:.3e}"
                print(f"  {r.label:<22} {key:<12} vs float64 abs {a_ref:.3e} rel {rel_ref:.3e}"
                      f"{vs_w}  {'ok' if ok else 'EXCEEDS ' + format(tol, '.0e')}")
        del x, ref, results
        torch.cuda.empty_cache()
    doc = report.document(fam.NAME, args.command, env, {}, {"replays": 0, "footprint_mib": 0,
                          "min_calls": 0, "seed": args.seed}, [], [], checks)
    if args.json:
        pathlib.Path(args.json).write_text(report.to_json(doc))
    if args.md:
        pathlib.Path(args.md).write_text(report.markdown(doc))
    print(f"check: {sum(c['ok'] for c in checks)} ok, {failures} failed")
    return 1 if failures else 0
