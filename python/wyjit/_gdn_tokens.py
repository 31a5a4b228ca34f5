# SPDX-License-Identifier: Apache-2.0
"""The token inputs and outputs both GDN families read the same way (q, k, v, out, and g/beta or
the fused gating's a, b, a_log, dt_bias), checked and set on either family's argument struct:
the C structs name these fields alike."""

from __future__ import annotations

import ctypes
import math
from typing import Any, Optional

from . import _errors
from ._args import shared
from ._spec import Spec
from ._states import refuse
from ._tensors import Array, array, check_dtype, rows


#: The fields after struct_size that wyjit_gdn_verify_args and wyjit_gdn_replay_verify_args share,
#: in the order of their C declarations (tests/python/test_declarations.py checks both).
GDN_TOKEN_FIELDS = [
    ("batch", ctypes.c_int32),
    ("num_k_heads", ctypes.c_int32),
    ("num_v_heads", ctypes.c_int32),
    ("k", ctypes.c_int32),
    ("dk", ctypes.c_int32),
    ("dv", ctypes.c_int32),
    ("scale", ctypes.c_float),
    ("q", ctypes.c_void_p),
    ("k_in", ctypes.c_void_p),
    ("v", ctypes.c_void_p),
    ("g", ctypes.c_void_p),
    ("beta", ctypes.c_void_p),
    ("a", ctypes.c_void_p),
    ("b", ctypes.c_void_p),
    ("a_log", ctypes.c_void_p),
    ("dt_bias", ctypes.c_void_p),
    ("out", ctypes.c_void_p),
    ("qk_stride", ctypes.c_int64),
    ("v_stride", ctypes.c_int64),
    ("gb_stride", ctypes.c_int64),
    ("o_stride", ctypes.c_int64),
]


def fill_gdn_tokens(
    c: ctypes.Structure,
    spec: Spec,
    arrays: list,
    *,
    batch: int,
    hk: int,
    hv: int,
    q: Any,
    k: Any,
    v: Any,
    out: Any,
    g: Any,
    beta: Any,
    a: Any,
    b: Any,
    a_log: Any,
    dt_bias: Any,
    scale: Optional[float],
    qk_stride: Optional[int],
    v_stride: Optional[int],
    gb_stride: Optional[int],
    o_stride: Optional[int],
) -> None:
    """Sets the sizes, the scale and the token rows ([batch*K, stride]) of `c`, after checking
    every array's dtype, shape and strides against `spec`; appends the arrays to `arrays`."""
    K, dk, dv = spec.k, spec.dk, spec.dv
    n = batch * K  # token rows

    def arr(name: str, obj: Any, dtype: str) -> Optional[Array]:
        x = array(name, obj)
        if x is not None:
            check_dtype(x, dtype)
            arrays.append(x)
        return x

    def row_stride(name: str, x: Optional[Array], width: int, stride: Optional[int],
                   stride_name: str) -> int:
        if x is None:
            raise _errors.invalid_argument(f"{name} is required by {spec.name}")
        return rows(x, n, width, stride, stride_name)

    c.batch, c.num_k_heads, c.num_v_heads, c.k, c.dk, c.dv = batch, hk, hv, K, dk, dv
    c.scale = 1.0 / math.sqrt(dk) if scale is None else float(scale)

    xq, xk = arr("q", q, spec.io), arr("k", k, spec.io)
    xv, xo = arr("v", v, spec.io), arr("out", out, spec.io)
    c.qk_stride = shared("qk_stride", {
        "q": row_stride("q", xq, hk * dk, qk_stride, "qk_stride"),
        "k": row_stride("k", xk, hk * dk, qk_stride, "qk_stride"),
    })
    c.v_stride = row_stride("v", xv, hv * dv, v_stride, "v_stride")
    c.o_stride = row_stride("out", xo, hv * dv, o_stride, "o_stride")
    c.q, c.k_in, c.v, c.out = xq.ptr, xk.ptr, xv.ptr, xo.ptr  # type: ignore[union-attr]

    if spec.gating:
        refuse(spec.name, "gating: a, b, a_log, dt_bias", {"g": g, "beta": beta})
        xa, xb = arr("a", a, spec.io), arr("b", b, spec.io)
        c.gb_stride = shared("gb_stride", {
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
        refuse(spec.name, "no gating: g and beta", {"a": a, "b": b, "a_log": a_log,
                                                    "dt_bias": dt_bias})
        xg, xbeta = arr("g", g, "f32"), arr("beta", beta, "f32")
        c.gb_stride = shared("gb_stride", {
            "g": row_stride("g", xg, hv, gb_stride, "gb_stride"),
            "beta": row_stride("beta", xbeta, hv, gb_stride, "gb_stride"),
        })
        c.g, c.beta = xg.ptr, xbeta.ptr  # type: ignore[union-attr]
