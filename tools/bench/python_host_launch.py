# SPDX-License-Identifier: Apache-2.0
"""Host time of real eager launches from Python, on a GPU: python_host_cost.py's cases on CUDA
tensors, launched back to back through the one-shot path and through a prepared launch (the
step's arrays passed anew each call, and none), host time per call.

NOTE: runs of RUN calls (fewer than the driver's launch queue holds, about 1,000), synchronised
between runs: a longer run of launches cheaper than the kernel would fill the queue and time
the kernel instead of the host. The best run counts, as in python_host_cost.py.

    WYJIT_LIBRARY=build/lib/libwyjit.so python3 tools/bench/python_host_launch.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

_REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_REPO / "python"), str(_REPO / "tests" / "python")]

import torch  # noqa: E402

import wyjit  # noqa: E402
from launch_cases import Case, Stager, cases, fresh_step  # noqa: E402

RUN = 256


def cuda_tensor(shape, dtype):
    """Content a launch may read: small floats, and zeros for the int32 slots, offsets,
    cursors and accepted counts (every write of a sequence goes to slot 0: in bounds)."""
    t = torch.zeros(shape, dtype=getattr(torch, dtype), device="cuda")
    if t.dtype.is_floating_point:
        t.normal_(0.0, 0.1)
    return t


def real_stagers(case: Case) -> list:
    """Each stand-in stager of `case` replaced by a TableStager over a zeroed pool."""
    made = []
    for name, value in list(case.arguments.items()):
        if not isinstance(value, Stager):
            continue
        tile = 8 * 1024 * 1024  # bytes: more than any tile of these cases
        pool = torch.zeros(value.max_batch * value.writes, tile // 4, device="cuda")
        stager = wyjit.TableStager(value.writes, value.max_batch)
        b = value.max_batch
        stager.stage([pool[i] for i in range(b)],
                     [[pool[b * (1 + t) + i] for i in range(b)] for t in range(value.writes - 1)]
                     or None)
        case.arguments[name] = stager
        made.append((stager, pool))
    return made


def host_us(fn, runs: int) -> float:
    """Best host time per call (us) over `runs` runs of RUN back-to-back calls."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(RUN):
            fn()
        best = min(best, (time.perf_counter() - t0) / RUN)
        torch.cuda.synchronize()
    return best * 1e6


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--only", default="")
    p.add_argument("--json")
    a = p.parse_args()
    jit = wyjit.Jit()
    stream = torch.cuda.current_stream().cuda_stream
    results = {}
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, RUN {RUN} calls")
    print("| launch | step arrays | one-shot | prepared, step arrays | prepared, none |")
    print("|---|---|---|---|---|")
    for case in cases(cuda_tensor):
        if a.only not in case.label:
            continue
        keep = real_stagers(case)
        kernel = jit.kernel(case.spec)
        one_shot = getattr(wyjit, case.launch)
        prepared = getattr(wyjit, f"prepare_{case.launch}")(kernel, **case.arguments)
        step = fresh_step(case, cuda_tensor)
        t = {
            "one-shot": host_us(lambda: one_shot(kernel, stream=stream, **case.arguments),
                                a.runs),
            "prepared": host_us(lambda: prepared(stream=stream, **step), a.runs),
            "prepared, none": host_us(lambda: prepared(stream=stream), a.runs),
        }
        results[case.label] = t
        print(f"| {case.label} | {len(step)} | {t['one-shot']:.1f} | {t['prepared']:.1f} | "
              f"{t['prepared, none']:.1f} |")
        for stager, _ in keep:
            stager.close()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
