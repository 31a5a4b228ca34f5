# SPDX-License-Identifier: Apache-2.0
"""What runners share in one process: the repository's paths, the wyjit package and its Jit
manager (created once, after torch has made a CUDA context current), the peers directory."""

from __future__ import annotations

import dataclasses
import importlib
import pathlib
import sys
from types import ModuleType
from typing import Any, Optional

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]


def import_wyjit(repo_root: pathlib.Path = REPO_ROOT) -> ModuleType:
    """The wyjit package: the installed one, else the checkout's python/ folder (which finds
    libwyjit.so in build/lib, or where $WYJIT_LIBRARY says)."""
    try:
        return importlib.import_module("wyjit")
    except ImportError:
        sys.path.insert(0, str(repo_root / "python"))
        return importlib.import_module("wyjit")


@dataclasses.dataclass
class Context:
    peers_dir: pathlib.Path
    cache_dir: Optional[str] = None  # None: wyjit's default ($WYJIT_CACHE_DIR or XDG)
    repo_root: pathlib.Path = REPO_ROOT
    _wyjit: Optional[ModuleType] = None
    _jit: Any = None

    def wyjit(self) -> ModuleType:
        if self._wyjit is None:
            self._wyjit = import_wyjit(self.repo_root)
        return self._wyjit

    def jit(self) -> Any:
        if self._jit is None:
            import torch

            # NOTE: Jit.kernel loads on the current CUDA context; torch makes the primary
            # context current once it has touched the device.
            torch.empty(1, device="cuda")
            self._jit = self.wyjit().Jit(self.cache_dir)
        return self._jit
