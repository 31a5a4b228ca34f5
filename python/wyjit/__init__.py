# SPDX-License-Identifier: Apache-2.0
"""wyjit for Python: run-time compiled CUDA kernels for Gated DeltaNet speculative verify.

Loads libwyjit.so with ctypes (no build step): from $WYJIT_LIBRARY, else next to this package,
else the repository's build/lib, else the system's library path.

    import torch, wyjit
    jit = wyjit.Jit()
    kernel = jit.kernel("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128")
    wyjit.gdn_verify(kernel, batch=B, num_k_heads=HK, num_v_heads=HV, q=q, k=k, v=v, g=g,
                     beta=beta, out=out, state=state, inter=inter,
                     stream=torch.cuda.current_stream())
"""

from ._errors import (
    CacheError,
    CompileError,
    DriverError,
    Error,
    InternalError,
    InvalidArgumentError,
    InvalidSpecError,
    NoJitMissError,
    NvrtcError,
)
from ._jit import (
    Jit,
    Kernel,
    TableStager,
    device_count,
    device_unavailable_reason,
    set_log_level,
    version,
)
from ._lib import library_path
from ._spec import Spec
from ._verify import build_args, check_gdn_verify, gdn_verify

__version__ = "0.1.0"

__all__ = [
    "CacheError",
    "CompileError",
    "DriverError",
    "Error",
    "InternalError",
    "InvalidArgumentError",
    "InvalidSpecError",
    "Jit",
    "Kernel",
    "NoJitMissError",
    "NvrtcError",
    "Spec",
    "TableStager",
    "build_args",
    "check_gdn_verify",
    "device_count",
    "device_unavailable_reason",
    "gdn_verify",
    "library_path",
    "set_log_level",
    "version",
]
