# SPDX-License-Identifier: Apache-2.0
"""gdn_verify: checked launches of the gated-delta-rule verify kernel on tensors or pointers."""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from . import _lib
from ._args import family_spec, fresh, positive_int
from ._gdn_tokens import GDN_TOKEN_FIELDS, fill_gdn_tokens
from ._jit import Kernel, stream_handle
from ._prepared import Launch, PreparedLaunch
from ._spec import Spec
from ._states import ContiguousTile, StateRefs, fill_state_refs
from ._tensors import Array, same_device

_FAMILY = "gdn_verify"


class GdnVerifyArgs(ctypes.Structure):
    """wyjit_gdn_verify_args."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        *GDN_TOKEN_FIELDS,
        ("states", StateRefs),
    ]


_lib.declare_family(_FAMILY, GdnVerifyArgs)


def build_args(
    spec: "Spec | str",
    *,
    batch: int,
    num_k_heads: int,
    num_v_heads: int,
    q: Any,
    k: Any,
    v: Any,
    out: Any,
    g: Any = None,
    beta: Any = None,
    a: Any = None,
    b: Any = None,
    a_log: Any = None,
    dt_bias: Any = None,
    state: Any = None,
    inter: Any = None,
    tables: Any = None,
    read_slot: Any = None,
    write_slot: Any = None,
    scale: Optional[float] = None,
    qk_stride: Optional[int] = None,
    v_stride: Optional[int] = None,
    gb_stride: Optional[int] = None,
    o_stride: Optional[int] = None,
    state_seq_stride: Optional[int] = None,
    inter_seq_stride: Optional[int] = None,
    inter_tok_stride: Optional[int] = None,
    slab_stride: Optional[int] = None,
    slot_stride: Optional[int] = None,
    num_slots: Optional[int] = None,
    write_slot_stride: Optional[int] = None,
) -> GdnVerifyArgs:
    """The C argument struct (wyjit_gdn_verify_args) of one launch, after checking every array's
    dtype, shape, contiguity and strides against the variant (see gdn_verify)."""
    spec = family_spec(spec, _FAMILY, "gdn_verify")
    batch = positive_int("batch", batch)
    hk = positive_int("num_k_heads", num_k_heads)
    hv = positive_int("num_v_heads", num_v_heads)
    arrays: list[Array] = []
    c = fresh(GdnVerifyArgs, "wyjit_gdn_verify_args_init")
    fill_gdn_tokens(
        c, spec, arrays, batch=batch, hk=hk, hv=hv, q=q, k=k, v=v, out=out, g=g, beta=beta,
        a=a, b=b, a_log=a_log, dt_bias=dt_bias, scale=scale, qk_stride=qk_stride,
        v_stride=v_stride, gb_stride=gb_stride, o_stride=o_stride,
    )
    K = spec.k
    tile = hv * spec.dk * spec.dv  # elements of one sequence's state

    # ---- states: K writes a sequence, the state after each token ----
    fill_state_refs(
        c.states, spec_name=spec.name, addressing=spec.addressing, writes=K,
        tile=ContiguousTile(tile), batch=batch, dtype=spec.state, arrays=arrays,
        state=state, inter=inter, tables=tables, read_slot=read_slot, write_slot=write_slot,
        state_seq_stride=state_seq_stride, inter_seq_stride=inter_seq_stride,
        inter_tok_stride=inter_tok_stride, slab_stride=slab_stride, slot_stride=slot_stride,
        num_slots=num_slots, write_slot_stride=write_slot_stride,
    )
    same_device(arrays)
    return c


def check_gdn_verify(spec: "Spec | str", **arguments: Any) -> None:
    """Runs every check of gdn_verify (Python's and the library's) without launching: no GPU
    needed. Raises InvalidArgumentError naming the argument and its value."""
    spec = family_spec(spec, _FAMILY, "check_gdn_verify")
    c = build_args(spec, **arguments)
    _lib.check(_lib.lib().wyjit_check_gdn_verify(spec.name.encode(), ctypes.byref(c)))


def gdn_verify(kernel: Kernel, *, stream: Any = None, **arguments: Any) -> None:
    """Launches a gdn_verify kernel on `stream` (None: the legacy default stream; an int; or a
    torch.cuda.Stream). Allocates and copies nothing, never synchronises: it can be captured in
    a CUDA graph.

    Arguments (tensors or raw device pointers; strides in elements, derived from tensors; any
    strided view whose rows are evenly spaced works, e.g. q/k/v sliced out of a packed
    projection):
      batch, num_k_heads, num_v_heads: sizes (K, dk, dv come from the variant)
      q, k: [batch*K, HK*dk] rows of the io dtype (any shape that views as that: [batch, K,
            HK, dk] works); v, out: [batch*K, HV*dv]
      g, beta: fp32 [batch*K, HV]; or with `gating` a, b (io) and a_log, dt_bias fp32 [HV]
      strided: state [batch, ...] (HV*dk*dv per sequence, the variant's layout),
               inter [batch, K-1, ...]
      table:   tables=TableStager(K, max_batch)
      slot:    state [num_slots, ...] pool, read_slot int32 [batch], write_slot int32
               [batch, >= K]
      scale: default 1/sqrt(dk)
      raw pointers need their strides: qk_stride, v_stride, gb_stride, o_stride,
      state_seq_stride, inter_seq_stride, inter_tok_stride, slab_stride, num_slots, slot_stride,
      write_slot_stride
    """
    c = build_args(kernel.spec, **arguments)
    _lib.check(_lib.lib().wyjit_launch_gdn_verify(kernel.handle, ctypes.byref(c),
                                                  stream_handle(stream)))


_PREPARED = Launch("gdn_verify", _FAMILY, build_args)


def prepare_gdn_verify(kernel: "Kernel | Spec | str", **arguments: Any) -> PreparedLaunch:
    """gdn_verify checked once, for launches that only swap arrays (the arguments are
    gdn_verify's, stream aside). Call the result each step with the arrays that changed:
    `prepared(stream=s, q=q, k=k, v=v, g=g, beta=beta, out=out)`; each must have the dtype,
    shape, strides and device of the one it replaces. Prepared from a Spec it can only check()."""
    return PreparedLaunch(_PREPARED, kernel, arguments)
