# SPDX-License-Identifier: Apache-2.0
"""Command line: the axes, the peers, the timing knobs, and the modes (benchmark, --check,
--dry-run, --selftest)."""

from __future__ import annotations

import argparse
import pathlib
import shlex
import sys
from typing import Optional, Sequence

from . import families
from .core import MIB, point_plan
from .context import REPO_ROOT

HERE = pathlib.Path(__file__).resolve().parent

EXAMPLES = """examples (from the repository root):
  python3 tools/bench/harness --family gdn_verify --k 2,4,8,16 --n 1,8,32,128 --peers all --json out.json
  python3 tools/bench/harness --family gdn_verify --addressing strided,slot --layout vk,kv --md out.md
  python3 tools/bench/harness --family gdn_verify --hk 2 --hv 8             # a TP-sharded layer
  python3 tools/bench/harness --family gdn_verify --check --k 2,4 --n 1,3    # same results?
  python3 tools/bench/harness --family gdn_replay --k 2,4,8,16 --n 1,8,32,128 --peers all --json out.json
  python3 tools/bench/harness --family FAMILY --help                      # its axes
  python3 tools/bench/harness --dry-run                                     # the plan, no GPU
  python3 tools/bench/harness --selftest                                    # CPU tests
"""


def int_list(text: str) -> list[int]:
    try:
        values = [int(t) for t in text.split(",") if t]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive integers like 1,8,32")
    return values


def build_parser(family: Optional[str]) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python3 tools/bench/harness", epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="wyjit's kernels and the peers' on the same inputs in one process: "
                    "graph-replayed per-call time on rotated buffers against the copy floor "
                    "measured in the same run.")
    ap.add_argument("--family", choices=families.NAMES, default="gdn_verify")
    ap.add_argument("--k", type=int_list, default=None,
                    help="K list, tokens per sequence (default 2,4,8,16; --check: 1,4,16)")
    ap.add_argument("--n", type=int_list, default=None,
                    help="N list, sequences (default 1,8,32,128; --check: 1,3)")
    ap.add_argument("--hk", type=int, default=16, help="key heads (Qwen3-Next: 16)")
    ap.add_argument("--hv", type=int, default=32, help="value heads (Qwen3-Next: 32)")
    ap.add_argument("--peers", default="all", help="all, none, or a comma list of peer keys")
    ap.add_argument("--no-wyjit", dest="wyjit", action="store_false", help="peers only")
    ap.add_argument("--json", help="write the JSON document here")
    ap.add_argument("--md", help="write the Markdown tables here (they are printed anyway)")
    t = ap.add_argument_group("timing")
    t.add_argument("--replays", type=int, default=25, help="timed graph replays (default 25)")
    t.add_argument("--warmup", type=int, default=3, help="untimed replays first")
    t.add_argument("--footprint-mib", type=int, default=512,
                   help="distinct bytes one cycle through the buffer sets touches (>> 60 MiB L2)")
    t.add_argument("--min-calls", type=int, default=16, help="least calls in one graph")
    t.add_argument("--max-sets", type=int, default=4096, help="most buffer sets at a point")
    t.add_argument("--copy-gib", type=float, default=4.0, help="size of the floor's copy, each way")
    t.add_argument("--copy-replays", type=int, default=10)
    t.add_argument("--seed", type=int, default=1234)
    m = ap.add_argument_group("modes and paths")
    m.add_argument("--check", action="store_true",
                   help="compare every runner's outputs and states with float64 and with wyjit")
    m.add_argument("--dry-run", action="store_true", help="print points, bytes, plans, runners")
    m.add_argument("--selftest", action="store_true", help="run the CPU tests (pytest)")
    m.add_argument("--peers-dir", default=str(REPO_ROOT / ".peers"))
    m.add_argument("--cache-dir", default=None, help="wyjit's cache root (default: its own)")
    m.add_argument("--verbose", action="store_true", help="tracebacks for failed runners")
    if family is not None:
        families.load(family).add_arguments(ap)
    return ap


def resolve_peers(text: str, available: Sequence[str]) -> list[str]:
    if text == "all":
        return list(available)
    if text == "none":
        return []
    keys = [k for k in text.split(",") if k]
    bad = [k for k in keys if k not in available]
    if bad:
        raise ValueError(f"--peers {text!r}: {', '.join(bad)} not a peer of this family "
                         f"(peers: {', '.join(available)})")
    return keys


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--family", choices=families.NAMES, default="gdn_verify")
    known, _ = pre.parse_known_args(argv)
    ap = build_parser(known.family)
    args = ap.parse_args(argv)
    fam = families.load(args.family)
    if args.k is None:
        args.k = [1, 4, 16] if args.check else [2, 4, 8, 16]
    if args.n is None:
        args.n = [1, 3] if args.check else [1, 8, 32, 128]
    if args.hk < 1 or args.hv < 1 or args.hv % args.hk:
        ap.error(f"--hk {args.hk} --hv {args.hv}: HV must be a positive multiple of HK")
    if any(k > 32 for k in args.k):
        ap.error("--k: at most 32 tokens per sequence")
    if args.replays < 1 or args.min_calls < 1 or args.max_sets < 1 or args.footprint_mib < 1:
        ap.error("--replays, --min-calls, --max-sets and --footprint-mib must be >= 1")
    try:
        args.peer_keys = resolve_peers(args.peers, fam.PEERS)
    except ValueError as e:
        ap.error(str(e))
    args.command = "python3 tools/bench/harness " + " ".join(shlex.quote(a) for a in argv)
    return args


def dry_run(args: argparse.Namespace) -> int:
    """Points, bytes, rotation plans and runners (with skip reasons): no GPU, no torch."""
    fam = families.load(args.family)
    runners = fam.runners(args)
    print(f"{args.family}: {len(runners)} runners: " + ", ".join(r.label for r in runners))
    for p in fam.points(args):
        nbytes = fam.bytes_moved(p)
        plan = point_plan(fam, p, args)
        skips = [f"{r.label} ({why})" for r in runners if (why := r.skip_reason(p))]
        print(f"{p.group} K={p.k} N={p.n}: {nbytes} bytes ({nbytes / MIB:.2f} MiB), "
              f"{plan.sets} sets x {plan.calls} calls, cycle {plan.footprint / MIB:.0f} MiB"
              + ("" if plan.l2_cold else " (capped by --max-sets)")
              + (f"; skipped: {'; '.join(skips)}" if skips else ""))
        if hasattr(fam, "point_info"):
            info = fam.point_info(p, runners)
            print("  " + _info_line(info))
    return 0


def _info_line(info: dict) -> str:
    """gdn_replay's dry-run line: wyjit's run, then each runner's folds and memory."""
    cells = [f"{info['labels'][k]}: folds {100 * f:.1f}%" if (f := info["folds"][k]) is not None
             else info["labels"][k] for k in info["labels"]]
    cells = [f"{c}, {info['memory'][k]:,} B" for c, k in zip(cells, info["labels"])]
    return (f"wyjit run: folds {100 * info['fold_fraction']:.1f}%, mean len "
            f"{info['mean_len']:.2f}; classic {info['memory_classic']:,} B per sequence and "
            f"layer; " + "; ".join(cells))


def selftest() -> int:
    import pytest

    return int(pytest.main([str(HERE / "tests"), "-q"]))


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.selftest:
        return selftest()
    if args.dry_run:
        return dry_run(args)
    fam = families.load(args.family)
    if args.check:
        from . import check

        return check.run(args, fam)
    from . import run

    return run.run(args, fam)
