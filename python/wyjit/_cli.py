# SPDX-License-Identifier: Apache-2.0
"""The `wyjit` console script of an installed wheel: runs the C++ CLI the wheel installs next to
this package (wyjit/bin/wyjit) in place of this process, handing it the folder of the
nvidia-cuda-nvrtc wheel when one is installed (WYJIT_NVRTC_WHEEL_DIR; the CLI tries it after
$WYJIT_NVRTC and before any CUDA toolkit)."""

from __future__ import annotations

import os
import pathlib
import sys

from . import _lib, _nvrtc


def main() -> None:
    exe = pathlib.Path(__file__).resolve().parent / "bin" / "wyjit"
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"wyjit: {exe} is missing: this copy of the package was not installed from a wheel "
            "(`pip install .` builds one); a build tree's CLI is build/bin/wyjit\n"
        )
        sys.exit(1)
    env = dict(os.environ)
    folder = _nvrtc.find_wheel_dir(_lib.lib().wyjit_nvrtc_file_name().decode())
    if folder is not None:
        env.setdefault("WYJIT_NVRTC_WHEEL_DIR", folder)
    sys.stdout.flush()
    os.execve(str(exe), ["wyjit", *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
