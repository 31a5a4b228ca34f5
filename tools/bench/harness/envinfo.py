# SPDX-License-Identifier: Apache-2.0
"""The machine and software a run measured on: device, driver, CUDA, torch, triton, wyjit, date."""

from __future__ import annotations

import ctypes
import datetime
import pathlib
import platform
import subprocess
from typing import Any, Optional

from .context import Context


def _driver_version() -> Optional[str]:
    """The NVIDIA driver's version (e.g. 580.159.04)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        text = pathlib.Path("/proc/driver/nvidia/version").read_text()
        for word in text.split():
            if word.count(".") >= 1 and word.replace(".", "").isdigit():
                return word
    except OSError:
        pass
    return None


def _cuda_driver_api() -> Optional[str]:
    """The CUDA version the driver supports (cuDriverGetVersion), e.g. 13.0."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except OSError:
        pass
    return None


def _git_head(root: pathlib.Path) -> Optional[str]:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def environment(ctx: Context) -> dict[str, Any]:
    import torch

    env: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "driver": _driver_version(),
        "cuda_driver_api": _cuda_driver_api(),
        "wyjit_commit": _git_head(ctx.repo_root),
    }
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env.update({
            "device": p.name,
            "sm": f"sm_{p.major}{p.minor}",
            "sms": p.multi_processor_count,
            "l2_mib": round(getattr(p, "L2_cache_size", 0) / (1 << 20), 1),
            "memory_gib": round(p.total_memory / (1 << 30), 1),
        })
    try:
        import triton

        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    try:
        w = ctx.wyjit()
        env["wyjit"] = w.version()
        env["wyjit_library"] = w.library_path()
    except Exception as e:  # noqa: BLE001 - the header reports what it could not find
        env["wyjit"] = f"unavailable: {e}"
    return env
