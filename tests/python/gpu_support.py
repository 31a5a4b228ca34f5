# SPDX-License-Identifier: Apache-2.0
"""What the GPU tests of every family share (test_gpu.py runs them; gpu_conv1d.py holds
conv1d_update's cases): whether torch and a CUDA device are there, comparisons that say which
slices are wrong, storage identity, the manager they compile into.

Imports without torch (UNAVAILABLE then says why).
"""

import math
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import wyjit  # noqa: E402

torch = None
UNAVAILABLE = ""
try:
    import torch  # noqa: F811
except ImportError:
    UNAVAILABLE = "torch is not installed"
if not UNAVAILABLE and not torch.cuda.is_available():
    UNAVAILABLE = "torch sees no CUDA device"
if not UNAVAILABLE and wyjit.device_count() == 0:
    UNAVAILABLE = "wyjit sees no CUDA device: " + wyjit.device_unavailable_reason()


def dtype_of(name):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[name]


def assert_close(got, want, tol, what, dims=()):
    """Max-abs error relative to max |want|. `dims` names got's leading dims (e.g. ("b", "t",
    "head")): a failure then lists which of those slices are wrong, so one GPU run tells a wrong
    head or sequence from a wrong everything."""
    got = got.double()
    want = want.double()
    ref = max(want.abs().max().item(), 1e-30)
    diff = (got - want).abs()
    nan = torch.isnan(got)
    err = diff[~nan].max().item() if (~nan).any() else math.inf
    if not nan.any() and err / ref <= tol:
        return
    detail = f"relative error {err / ref:.3e} > {tol}" if not nan.any() else (
        f"{int(nan.sum())} of {nan.numel()} elements NaN (not written?)")
    if dims:
        per = torch.where(nan, torch.full_like(diff, math.inf), diff)
        per = per.flatten(len(dims)).amax(-1) / ref  # [leading dims]
        bad = (per > tol).nonzero().tolist()
        listed = ", ".join(
            " ".join(f"{d}={i}" for d, i in zip(dims, idx)) + f": {per[tuple(idx)].item():.2e}"
            for idx in bad[:16])
        detail += f"; wrong in {len(bad)} of {per.numel()} ({' x '.join(dims)}) slices: {listed}"
        if len(bad) > 16:
            detail += ", ..."
    raise AssertionError(f"{what}: {detail}")


def storage_address(t):
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return storage.data_ptr()


def new_jit():
    return wyjit.Jit(pathlib.Path(tempfile.gettempdir()) / "wyjit-python-gpu-test-cache")


def run_standalone(cases):
    """The runner without pytest: every (name, check, args) case against one Jit, each reported;
    exits 1 if any failed, 0 (with the reason) where there is no GPU or torch."""
    if UNAVAILABLE:
        print(f"SKIPPED: wyjit-gpu-unavailable: {UNAVAILABLE}")
        sys.exit(0)
    torch.zeros(1, device="cuda")  # makes torch's CUDA context current on this thread
    torch.cuda.synchronize()
    failed = 0
    with new_jit() as manager:
        for name, check, args in cases:
            try:
                check(manager, *args)
                print(f"PASSED {name}")
            except Exception as e:  # noqa: BLE001 - report every case
                failed += 1
                print(f"FAILED {name}: {type(e).__name__}: {e}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
