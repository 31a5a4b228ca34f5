# SPDX-License-Identifier: Apache-2.0
"""gdn_verify: checked launches of the WY gated-delta-rule verify kernel."""

from __future__ import annotations

import ctypes
import math
from typing import Any, Optional

from . import _errors, _lib
from ._jit import Kernel, TableStager, stream_handle
from ._spec import Spec, as_spec
from ._tensors import Array, array, check_dtype, rows, same_device, tile_pairs


def _positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value >= 2**31:
        raise _errors.invalid_argument(f"{name} is {value!r}, must be a positive int")
    return value


def _shared(name: str, strides: dict) -> Optional[int]:
    """The one stride several arrays share (C has one field for them)."""
    values = {v for v in strides.values() if v is not None}
    if len(values) > 1:
        listed = ", ".join(f"{n} {v}" for n, v in strides.items())
        raise _errors.invalid_argument(f"{listed}: these arrays must share one {name}")
    return values.pop() if values else None


def _refuse(spec: Spec, given: dict) -> None:
    for name, value in given.items():
        if value is not None:
            raise _errors.invalid_argument(
                f"{name} is given but {spec.name} does not use it ({spec.addressing} addressing"
                f"{', fused gating' if spec.fused_gating else ''})"
            )


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
) -> _lib.GdnVerifyArgs:
    """The C argument struct of one launch, after checking every array's dtype, shape,
    contiguity and strides against the variant (see gdn_verify)."""
    spec = as_spec(spec)
    K, dk, dv = spec.k, spec.dk, spec.dv
    batch = _positive_int("batch", batch)
    hk = _positive_int("num_k_heads", num_k_heads)
    hv = _positive_int("num_v_heads", num_v_heads)
    n = batch * K  # token rows
    tile = hv * dk * dv  # elements of one sequence's state

    arrays: dict[str, Optional[Array]] = {}

    def arr(name: str, obj: Any, dtype: Optional[str]) -> Optional[Array]:
        x = array(name, obj)
        if x is not None and dtype is not None:
            check_dtype(x, dtype)
        arrays[name] = x
        return x

    c = _lib.GdnVerifyArgs()
    _lib.lib().wyjit_gdn_verify_args_init(ctypes.byref(c))
    c.batch, c.num_k_heads, c.num_v_heads, c.k, c.dk, c.dv = batch, hk, hv, K, dk, dv
    c.scale = 1.0 / math.sqrt(dk) if scale is None else float(scale)

    # ---- token inputs and output: [batch*K, stride] rows ----
    def row_stride(name: str, x: Optional[Array], width: int, stride: Optional[int], sname: str):
        if x is None:
            raise _errors.invalid_argument(f"{name} is required by {spec.name}")
        return rows(x, n, width, stride, sname)

    xq, xk = arr("q", q, spec.io), arr("k", k, spec.io)
    xv, xo = arr("v", v, spec.io), arr("out", out, spec.io)
    c.qk_stride = _shared("qk_stride", {
        "q": row_stride("q", xq, hk * dk, qk_stride, "qk_stride"),
        "k": row_stride("k", xk, hk * dk, qk_stride, "qk_stride"),
    })
    c.v_stride = row_stride("v", xv, hv * dv, v_stride, "v_stride")
    c.o_stride = row_stride("out", xo, hv * dv, o_stride, "o_stride")
    c.q, c.k_in, c.v, c.out = xq.ptr, xk.ptr, xv.ptr, xo.ptr  # type: ignore[union-attr]

    if spec.fused_gating:
        _refuse(spec, {"g": g, "beta": beta})
        xa, xb = arr("a", a, spec.io), arr("b", b, spec.io)
        c.gb_stride = _shared("gb_stride", {
            "a": row_stride("a", xa, hv, gb_stride, "gb_stride"),
            "b": row_stride("b", xb, hv, gb_stride, "gb_stride"),
        })
        for name, obj in (("a_log", a_log), ("dt_bias", dt_bias)):
            x = arr(name, obj, "f32")
            if x is None:
                raise _errors.invalid_argument(f"{name} is required by {spec.name}")
            rows(x, 1, hv, None if x.described else hv, name + " stride")
            setattr(c, name, x.ptr)
        c.a, c.b = xa.ptr, xb.ptr  # type: ignore[union-attr]
    else:
        _refuse(spec, {"a": a, "b": b, "a_log": a_log, "dt_bias": dt_bias})
        xg, xbeta = arr("g", g, "f32"), arr("beta", beta, "f32")
        c.gb_stride = _shared("gb_stride", {
            "g": row_stride("g", xg, hv, gb_stride, "gb_stride"),
            "beta": row_stride("beta", xbeta, hv, gb_stride, "gb_stride"),
        })
        c.g, c.beta = xg.ptr, xbeta.ptr  # type: ignore[union-attr]

    # ---- states ----
    if spec.addressing == "strided":
        _refuse(spec, {"tables": tables, "read_slot": read_slot, "write_slot": write_slot})
        xs = arr("state", state, spec.state)
        if xs is None:
            raise _errors.invalid_argument(f"state is required by {spec.name}")
        c.state = xs.ptr
        c.state_seq_stride = rows(xs, batch, tile, state_seq_stride, "state_seq_stride")
        if K > 1:
            xi = arr("inter", inter, spec.state)
            if xi is None:
                raise _errors.invalid_argument(
                    f"inter is required by {spec.name}: [batch, K-1, ...] intermediate states"
                )
            c.inter = xi.ptr
            c.inter_seq_stride, c.inter_tok_stride = tile_pairs(
                xi, batch, K - 1, tile, (inter_seq_stride, inter_tok_stride)
            )
        else:
            _refuse(spec, {"inter": inter})
    elif spec.addressing == "table":
        _refuse(spec, {"state": state, "inter": inter, "read_slot": read_slot,
                       "write_slot": write_slot})
        if isinstance(tables, TableStager):
            if tables.k != K:
                raise _errors.invalid_argument(
                    f"tables is a TableStager for K={tables.k}, {spec.name} has K={K}"
                )
            if batch > tables.max_batch:
                raise _errors.invalid_argument(
                    f"batch is {batch}, the TableStager holds max_batch={tables.max_batch}"
                )
            c.tables, c.slab_stride = tables.tables, tables.slab_stride
        else:
            xt = arr("tables", tables, None)
            if xt is None:
                raise _errors.invalid_argument(f"tables is required by {spec.name} (a TableStager)")
            if slab_stride is None:
                raise _errors.invalid_argument("tables is a raw pointer: pass slab_stride")
            c.tables, c.slab_stride = xt.ptr, slab_stride
    else:  # slot
        _refuse(spec, {"inter": inter, "tables": tables})
        xs = arr("state", state, spec.state)
        if xs is None:
            raise _errors.invalid_argument(f"state is required by {spec.name} (the slot pool)")
        if xs.described:
            slots = xs.shape[0] if xs.shape else 0  # type: ignore[index]
            if num_slots is not None and num_slots != slots:
                raise _errors.invalid_argument(
                    f"num_slots is {num_slots} but state has {slots} slots (dim 0)"
                )
            num_slots = slots
        elif num_slots is None:
            raise _errors.invalid_argument("state is a raw pointer: pass num_slots and slot_stride")
        c.state = xs.ptr
        c.num_slots = num_slots
        c.slot_stride = rows(xs, num_slots, tile, slot_stride, "slot_stride")
        xr = arr("read_slot", read_slot, "i32")
        if xr is None:
            raise _errors.invalid_argument(f"read_slot is required by {spec.name}")
        if rows(xr, batch, 1, 1 if not xr.described else None, "read_slot stride") != 1:
            raise _errors.invalid_argument(f"read_slot must be contiguous [batch], got {xr.strides}")
        xw = arr("write_slot", write_slot, "i32")
        if xw is None:
            raise _errors.invalid_argument(f"write_slot is required by {spec.name}")
        if xw.described:
            if len(xw.shape) != 2 or xw.shape[0] != batch or xw.shape[1] < K:  # type: ignore
                raise _errors.invalid_argument(
                    f"write_slot has shape {list(xw.shape)}, expected [{batch}, >= {K}]"  # type: ignore
                )
            write_slot_stride = rows(xw, batch, xw.shape[1], write_slot_stride,  # type: ignore
                                     "write_slot_stride")
        elif write_slot_stride is None:
            raise _errors.invalid_argument("write_slot is a raw pointer: pass write_slot_stride")
        c.read_slot, c.write_slot, c.write_slot_stride = xr.ptr, xw.ptr, write_slot_stride
    same_device(list(arrays.values()))
    return c


def check_gdn_verify(spec: "Spec | str", **arguments: Any) -> None:
    """Runs every check of gdn_verify (Python's and the library's) without launching: no GPU
    needed. Raises InvalidArgumentError naming the argument and its value."""
    spec = as_spec(spec)
    c = build_args(spec, **arguments)
    c_spec = spec._to_c()
    _lib.check(_lib.lib().wyjit_check_gdn_verify(ctypes.byref(c_spec), ctypes.byref(c)))


def gdn_verify(kernel: Kernel, *, stream: Any = None, **arguments: Any) -> None:
    """Launches a gdn_verify kernel on `stream` (None: the legacy default stream; an int; or a
    torch.cuda.Stream). Never synchronises, so it can be captured in a CUDA graph.

    Arguments (tensors or raw device pointers; strides in elements, derived from tensors):
      batch, num_k_heads, num_v_heads: sizes (K, dk, dv come from the variant)
      q, k: [batch*K, HK*dk] rows of the io dtype (any shape that views as that: [batch, K,
            HK, dk] works); v, out: [batch*K, HV*dv]
      g, beta: fp32 [batch*K, HV]; or with fused gating a, b (io) and a_log, dt_bias fp32 [HV]
      strided: state [batch, ...] (HV*dk*dv per sequence, the variant's layout),
               inter [batch, K-1, ...]
      table:   tables=TableStager
      slot:    state [num_slots, ...] pool, read_slot int32 [batch], write_slot int32
               [batch, >= K]
      scale: default 1/sqrt(dk)
    """
    c = build_args(kernel.spec, **arguments)
    _lib.check(_lib.lib().wyjit_launch_gdn_verify(kernel.handle, ctypes.byref(c),
                                                  stream_handle(stream)))
