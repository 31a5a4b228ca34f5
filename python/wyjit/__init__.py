# SPDX-License-Identifier: Apache-2.0
"""wyjit for Python: run-time compiled CUDA kernels for Gated DeltaNet speculative verify.

Loads libwyjit.so with ctypes (no build step): from $WYJIT_LIBRARY, else the one installed in
this package (`pip install` of the wheel), else the repository's build/lib, else the system's
library path. NVRTC comes from $WYJIT_NVRTC, else NVIDIA's nvidia-cuda-nvrtc wheel when it is
installed (`pip install 'wyjit[nvrtc]'`), else a CUDA toolkit; nvrtc_info() says which and why.

Variants are canonical names; the library describes each family's fields, so this package
keeps no copy of them:

    wyjit.Spec.families()                       # ("gdn_verify", "conv1d_update")
    wyjit.Spec.field_info("conv1d_update")      # name, kind, choices, range, default, doc
    spec = wyjit.Spec.make("gdn_verify", k=4, l2norm=True, gating=True)
    spec.name, spec.k, spec.gating              # "gdn_verify.k4....l2norm.gating", 4, True

Launches take torch tensors (or raw device pointers), write into the outputs given, accept
strided views and allocate nothing:

    import torch, wyjit
    jit = wyjit.Jit()
    kernel = jit.kernel("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128")
    wyjit.gdn_verify(kernel, batch=B, num_k_heads=HK, num_v_heads=HV, q=q, k=k, v=v, g=g,
                     beta=beta, out=out, state=state, inter=inter,
                     stream=torch.cuda.current_stream())
    conv = jit.kernel("conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu")
    wyjit.conv1d_update(conv, batch=B, channels=C, x=x, y=y, weight=w, state=pool,
                        read_slot=read, write_slot=write, window_offset=accepted,
                        stream=torch.cuda.current_stream())

Replay mode (a checkpoint and a short log per sequence and layer, docs/replay.md) is three
launches: gdn_replay_verify per layer, one gdn_replay_commit per step, gdn_replay_materialize
when an engine wants S_cur.

check_<launch> (check_gdn_verify, check_conv1d_update, check_gdn_replay_verify, ...) run every
check (Python's and the library's) without a GPU; TableStager(writes, max_batch) keeps the
pointer tables of table addressing at a fixed address for CUDA graphs.

The fast path for an engine's step loop: prepare_<launch> runs those checks once and returns a
PreparedLaunch; calling it swaps in only the arrays given (same dtype, shape, strides and
device as before) and launches, the library's guards included:

    step = wyjit.prepare_gdn_verify(kernel, batch=B, ..., state=pool, read_slot=r, write_slot=w)
    step(stream=s, q=q, k=k, v=v, g=g, beta=beta, out=out)   # each step
"""

from ._conv1d import (
    build_conv1d_update_args,
    check_conv1d_update,
    conv1d_update,
    prepare_conv1d_update,
)
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
from ._nvrtc import nvrtc_info
from ._replay import (
    build_gdn_replay_commit_args,
    build_gdn_replay_materialize_args,
    build_gdn_replay_verify_args,
    check_gdn_replay_commit,
    check_gdn_replay_materialize,
    check_gdn_replay_verify,
    gdn_replay_commit,
    gdn_replay_log_floats,
    gdn_replay_materialize,
    gdn_replay_verify,
    prepare_gdn_replay_commit,
    prepare_gdn_replay_materialize,
    prepare_gdn_replay_verify,
)
from ._spec import FieldInfo, Spec
from ._prepared import PreparedLaunch
from ._verify import build_args, check_gdn_verify, gdn_verify, prepare_gdn_verify

__version__ = "0.2.0"

#: build_args is gdn_verify's; this name says so next to build_conv1d_update_args.
build_gdn_verify_args = build_args

__all__ = [
    "CacheError",
    "CompileError",
    "DriverError",
    "Error",
    "FieldInfo",
    "InternalError",
    "InvalidArgumentError",
    "InvalidSpecError",
    "Jit",
    "Kernel",
    "NoJitMissError",
    "NvrtcError",
    "PreparedLaunch",
    "Spec",
    "TableStager",
    "build_args",
    "build_conv1d_update_args",
    "build_gdn_replay_commit_args",
    "build_gdn_replay_materialize_args",
    "build_gdn_replay_verify_args",
    "build_gdn_verify_args",
    "check_conv1d_update",
    "check_gdn_replay_commit",
    "check_gdn_replay_materialize",
    "check_gdn_replay_verify",
    "check_gdn_verify",
    "conv1d_update",
    "device_count",
    "device_unavailable_reason",
    "gdn_replay_commit",
    "gdn_replay_log_floats",
    "gdn_replay_materialize",
    "gdn_replay_verify",
    "gdn_verify",
    "library_path",
    "nvrtc_info",
    "prepare_conv1d_update",
    "prepare_gdn_replay_commit",
    "prepare_gdn_replay_materialize",
    "prepare_gdn_replay_verify",
    "prepare_gdn_verify",
    "set_log_level",
    "version",
]
