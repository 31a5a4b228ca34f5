# SPDX-License-Identifier: Apache-2.0
"""Where NVRTC comes from: NVIDIA's nvidia-cuda-nvrtc wheel when it is installed, found here and
passed to the library, which tries it after $WYJIT_NVRTC and before any CUDA toolkit
(include/wyjit/wyjit.h, "NVRTC"); nvrtc_info() says which NVRTC the library loaded and why."""

from __future__ import annotations

import importlib.metadata
import pathlib
import sys
from typing import Iterable, Optional

__all__ = ["find_wheel_dir", "nvrtc_info"]

# The distributions NVIDIA ships NVRTC in: "nvidia-cuda-nvrtc" from CUDA 13 on (files under
# nvidia/cu13/lib), "nvidia-cuda-nvrtc-cu12" before (nvidia/cuda_nvrtc/lib).
_DISTRIBUTIONS = ("nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu{major}")
_LAYOUTS = ("nvidia/cu{major}/lib", "nvidia/cuda_nvrtc/lib")


def _from_metadata(file_name: str, major: str) -> Optional[pathlib.Path]:
    for name in _DISTRIBUTIONS:
        try:
            dist = importlib.metadata.distribution(name.format(major=major))
        except importlib.metadata.PackageNotFoundError:
            continue
        for f in dist.files or ():
            if f.name == file_name:
                path = pathlib.Path(str(dist.locate_file(f)))
                if path.is_file():
                    return path.parent
    return None


def _from_path(file_name: str, major: str, roots: Iterable[str]) -> Optional[pathlib.Path]:
    # NOTE: for installs without a RECORD (e.g. `pip install --target`), the known layouts.
    for root in roots:
        for layout in _LAYOUTS:
            folder = pathlib.Path(root) / layout.format(major=major)
            if (folder / file_name).is_file():
                return folder
    return None


def find_wheel_dir(file_name: str, roots: Optional[Iterable[str]] = None) -> Optional[str]:
    """The folder of the nvidia-cuda-nvrtc wheel that holds `file_name` (the library's
    wyjit_nvrtc_file_name(), e.g. "libnvrtc.so.13"), or None when no such wheel is installed.
    `roots` defaults to sys.path."""
    major = file_name.rsplit(".", 1)[-1]
    found = _from_metadata(file_name, major) if roots is None else None
    if found is None:
        found = _from_path(file_name, major, sys.path if roots is None else roots)
    return str(found.resolve()) if found is not None else None


def nvrtc_info() -> dict:
    """Which NVRTC the library uses, loading it if needed: {"path", "rule", "tried", "version"}.
    "rule" says why (e.g. "nvidia-cuda-nvrtc wheel, found by the Python package"); "tried" lists
    each place passed over, with why. Raises NvrtcError, naming every place tried, when none
    loads."""
    from . import _lib  # NOTE: here, not at the top: _lib imports this module

    info = _lib.NvrtcInfo()
    cdll = _lib.lib()
    cdll.wyjit_nvrtc_info_init(info)
    _lib.check(cdll.wyjit_nvrtc_get_info(info))
    return {
        "path": info.path.decode(),
        "rule": info.rule.decode(),
        "tried": [line for line in info.tried.decode().split("\n") if line],
        "version": (info.version_major, info.version_minor),
    }
