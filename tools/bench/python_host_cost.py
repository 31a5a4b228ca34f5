# SPDX-License-Identifier: Apache-2.0
"""Host time of one Python launch, on the CPU: no GPU, no driver call.

For each launch and addressing mode (tests/python/launch_cases.py), on tensor stand-ins
(tests/python/fakes.py) and, where torch is installed, on torch CPU tensors standing in for
device ones, it times the parts of a launch's host path:

  reads     _tensors.array of every array argument (data_ptr, dtype, shape, stride, device)
  build     the one-shot builder (wyjit.build_<launch>_args): reads + every Python check + the
            ctypes struct
  C check   the library's check of that struct through ctypes (wyjit_check_<launch>), less
            parsing the variant's name (wyjit_spec_validate, timed alone): what the C launch runs
            before the driver (its guards), plus the ctypes call
  one-shot  build + C check: a one-shot launch's host time up to the driver
  swap py   a prepared launch taking the step's arrays in Python (_slots.py: per-array checks
            and writes)
  swap C    the same in the library (_dlswap.py, wyjit_array_swap_run: tensors of a framework
            with a DLPack exchange API, i.e. torch; "nan" for stand-ins)
  prepared  swap + C check: a prepared launch's host time up to the driver, by each path (the
            step's arrays given anew; "idle": none given)

and the options measured against them (--options): what each torch accessor costs, DLPack's
__dlpack__, and a TVM-FFI call passing the same tensors (where apache-tvm-ffi is installed).
Not included anywhere: cuLaunchKernel itself (a few microseconds on the H200's host).

Every figure is the best of --repeats means over about --target-ms of back-to-back calls, in
microseconds: on a shared machine the best is the least disturbed. Not a test: it asserts no
time.

    WYJIT_LIBRARY=build-dev/lib/libwyjit.so python3 tools/bench/python_host_cost.py \\
        [--tensors fake,torch] [--options] [--json out.json]
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import os
import pathlib
import platform
import sys
import time
from typing import Any, Callable, Optional

_REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_REPO / "python"), str(_REPO / "tests" / "python")]

import wyjit  # noqa: E402
from wyjit import _lib, _tensors  # noqa: E402
from launch_cases import Case, Make, cases, fresh_step  # noqa: E402

def _builder(launch: str) -> Callable[..., Any]:
    """wyjit.build_<launch>_args: every launch's argument builder, found by its name."""
    return getattr(wyjit, f"build_{launch}_args")


def _run_size(fn: Callable[[], Any], target_ms: float) -> int:
    """How many back-to-back calls of fn take about target_ms."""
    fn()
    n, spent = 1, 0.0
    while spent < target_ms / 1e3 / 4:
        n *= 2
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        spent = time.perf_counter() - t0
    return max(1, int(n * target_ms / 1e3 / spent))


def per_call(fns: dict[str, Callable[[], Any]], repeats: int, target_ms: float) -> dict:
    """Best mean (us) of each fn over `repeats` runs of back-to-back calls.

    NOTE: the runs of all fns take turns, so that a burst of load on a shared machine lands on
    all of them alike: the differences taken below (a check less the parse inside it) stay
    meaningful."""
    sizes = {k: _run_size(fn, target_ms) for k, fn in fns.items()}
    best = {k: float("inf") for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            n = sizes[k]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / n)
    return {k: v * 1e6 for k, v in best.items()}


def one(fn: Callable[[], Any], repeats: int, target_ms: float) -> float:
    return per_call({"": fn}, repeats, target_ms)[""]


def fake_maker() -> Make:
    from fakes import FakeTensor

    return lambda shape, dtype: FakeTensor(shape, dtype)


def torch_maker() -> Optional[Make]:
    try:
        import torch
    except ImportError:
        return None
    # NOTE: wyjit refuses host tensors; these CPU tensors stand in for device ones, so is_cuda
    # is torch's own is_cpu getter here (the same C-level cost as the real attribute).
    torch.Tensor.is_cuda = torch._C.TensorBase.is_cpu
    return lambda shape, dtype: torch.empty(shape, dtype=getattr(torch, dtype))


def time_case(case: Case, make: Make, repeats: int, target_ms: float) -> dict:
    lib = _lib.lib()
    spec, arguments = case.spec, case.arguments
    build = _builder(case.launch)
    name = spec.name.encode()
    check_fn = getattr(lib, f"wyjit_check_{case.launch}")
    c = build(spec, **arguments)
    ref = ctypes.byref(c)
    arrays = [(n, v) for n, v in arguments.items() if hasattr(v, "data_ptr")]
    array = _tensors.array
    prepared = getattr(wyjit, f"prepare_{case.launch}")(spec, **arguments)
    step = fresh_step(case, make)

    def reads() -> None:
        for n, v in arrays:
            array(n, v)

    c_swap = prepared._c
    python_only = getattr(wyjit, f"prepare_{case.launch}")(spec, **arguments)
    python_only._c = None
    fns = {
        "reads": reads,
        "build": lambda: build(spec, **arguments),
        "parse": lambda: lib.wyjit_spec_validate(name),
        "check": lambda: check_fn(name, ref),
        "swap py": lambda: python_only._swap(step),
        "prepared py": lambda: python_only.check(**step),
        "idle": lambda: prepared.check(),
    }
    if c_swap is not None and step and prepared._c_swap(c_swap, step) >= 0:
        fns["swap C"] = lambda: prepared._c_swap(c_swap, step)
        fns["prepared C"] = lambda: prepared.check(**step)
    t = per_call(fns, repeats, target_ms)
    parse = t.pop("parse")
    t["C check"] = t.pop("check") - parse
    t["one-shot"] = t["build"] + t["C check"]
    for k in ("prepared py", "prepared C", "idle"):
        t[k] = t.get(k, float("nan")) - parse
    t.setdefault("swap C", float("nan"))
    t["arrays"] = len(arrays)
    t["step arrays"] = len(step)
    return t


def time_floor(repeats: int, target_ms: float) -> dict:
    """What any ctypes call into the library costs here (the scale of this machine)."""
    lib = _lib.lib()
    scratch = ctypes.create_string_buffer(4096)
    init = lib.wyjit_gdn_verify_args_init
    ptr = ctypes.cast(scratch, ctypes.POINTER(wyjit._verify.GdnVerifyArgs))
    return per_call({
        "ctypes call, no arguments (wyjit_version)": lib.wyjit_version,
        "ctypes call, one struct pointer (wyjit_gdn_verify_args_init)": lambda: init(ptr),
        "an empty Python call": lambda: None,
    }, repeats, target_ms)


def time_options(make: Make, repeats: int, target_ms: float) -> dict:
    """Per-tensor costs of a torch tensor, DLPack, and a TVM-FFI call with the same tensors."""
    x = make((4, 16 * 128), "bfloat16")
    shape, strides, dtype = tuple(x.shape), x.stride(), x.dtype
    out = per_call({
        "x.data_ptr()": lambda: x.data_ptr(),
        "x.shape == s": lambda: x.shape == shape,
        "x.stride() == s": lambda: x.stride() == strides,
        "x.dtype == d": lambda: x.dtype == dtype,
        "x.device": lambda: x.device,
        "x.is_cuda and x.get_device()": lambda: x.is_cuda and x.get_device(),
    }, repeats, target_ms)
    if hasattr(x, "__dlpack__"):
        out["x.__dlpack__()"] = one(lambda: x.__dlpack__(), repeats, target_ms)
    try:
        import tvm_ffi
    except ImportError:
        return out
    nop = tvm_ffi.get_global_func("testing.nop")
    xs = [make((4, 16 * 128), "bfloat16") for _ in range(8)]
    out.update(per_call({"tvm_ffi testing.nop()": lambda: nop(),
                         "tvm_ffi testing.nop(8 tensors)": lambda: nop(*xs)},
                        repeats, target_ms))
    return out


def machine() -> dict:
    model = platform.processor()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "date": datetime.date.today().isoformat(), "library": wyjit.library_path()}
    if hasattr(os, "getloadavg"):
        info["load average before"] = round(os.getloadavg()[0], 2)
    try:
        import torch
        info["torch"] = torch.__version__
    except ImportError:
        pass
    return info


_COLUMNS = ("reads", "build", "C check", "one-shot", "swap py", "prepared py", "swap C",
            "prepared C", "idle")


def table(results: dict[str, dict]) -> str:
    lines = ["| launch | arrays (step) | " + " | ".join(_COLUMNS) + " |",
             "|---|---|" + "---|" * len(_COLUMNS)]
    for label, t in results.items():
        cells = " | ".join(f"{t[c]:.1f}" for c in _COLUMNS)
        lines.append(f"| {label} | {t['arrays']} ({t['step arrays']}) | {cells} |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tensors", default="fake,torch", help="fake, torch or both (comma list)")
    p.add_argument("--only", default="", help="time only launches whose label contains this")
    p.add_argument("--options", action="store_true", help="also time the binding options")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--target-ms", type=float, default=5.0)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    report: dict[str, Any] = {"machine": machine(), "command": " ".join(sys.argv)}
    print("machine: " + ", ".join(f"{k} {v}" for k, v in report["machine"].items()))
    report["floor"] = time_floor(a.repeats, a.target_ms)
    for what, us in report["floor"].items():
        print(f"{what}: {us:.2f} us")
    makers = {"fake": fake_maker, "torch": torch_maker}
    for kind in a.tensors.split(","):
        make = makers[kind]()
        if make is None:
            print(f"\n{kind}: skipped (torch is not installed)")
            continue
        results = {c.label: time_case(c, make, a.repeats, a.target_ms)
                   for c in cases(make) if a.only in c.label}
        report[kind] = results
        print(f"\n{kind} tensors, us per launch:\n" + table(results))
        if a.options and kind == "torch":
            report["options"] = time_options(make, a.repeats, a.target_ms)
            print("\noptions, us:")
            for what, us in report["options"].items():
                print(f"  {what}: {us:.3f}")
    if hasattr(os, "getloadavg"):
        report["machine"]["load average after"] = round(os.getloadavg()[0], 2)
        print(f"\nload average after: {report['machine']['load average after']}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
