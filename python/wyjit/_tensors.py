# SPDX-License-Identifier: Apache-2.0
"""Device arrays as wyjit sees them: a raw pointer (int), or any object with data_ptr() (torch
tensors), whose dtype, shape, strides and device are checked when it has them."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Sequence

from ._errors import invalid_argument

# dtype names as torch / numpy print them -> wyjit's names.
_DTYPE_NAMES = {
    "float32": "f32",
    "float": "f32",
    "float16": "f16",
    "half": "f16",
    "bfloat16": "bf16",
    "int32": "i32",
    "int": "i32",
}


def dtype_name(dtype: Any) -> Optional[str]:
    """wyjit's name of a torch/numpy dtype ("f32", "f16", "bf16", "i32"), the raw text for any
    other dtype, or None when there is none."""
    if dtype is None:
        return None
    text = str(dtype)
    text = text.split(".")[-1]  # "torch.float32" -> "float32"
    return _DTYPE_NAMES.get(text, text)


@dataclasses.dataclass
class Array:
    """What is known of one device array argument."""

    name: str
    ptr: int
    dtype: Optional[str] = None  # wyjit dtype name, None for raw pointers
    shape: Optional[tuple] = None
    strides: Optional[tuple] = None  # in elements
    device: Optional[str] = None

    @property
    def described(self) -> bool:
        return self.shape is not None and self.strides is not None


#: Set only while a prepared launch finds where its arguments land (_probe.py): it then sees
#: every array a builder reads. None on every other path, so a launch pays one global read.
probe: Any = None


def array(name: str, obj: Any) -> Optional[Array]:
    """Adapts an argument; None stays None."""
    if obj is None:
        return None
    if isinstance(obj, bool):
        raise invalid_argument(f"{name} is {obj!r}: pass a device pointer (int) or a tensor")
    if isinstance(obj, int):
        if obj < 0 or obj >= 2**64:
            raise invalid_argument(f"{name} is {obj}, not a 64-bit device address")
        a = Array(name, obj)
        p = probe  # NOTE: read once: a prepare on another thread may clear it meanwhile
        return a if p is None else p.seen(a, obj)
    data_ptr = getattr(obj, "data_ptr", None)
    if not callable(data_ptr):
        raise invalid_argument(
            f"{name} is a {type(obj).__name__}: pass a device pointer (int) or an object with "
            "data_ptr() (a torch tensor)"
        )
    if getattr(obj, "is_cuda", True) is False:
        raise invalid_argument(f"{name} is on {getattr(obj, 'device', 'the host')}: it must be a CUDA tensor")
    shape = getattr(obj, "shape", None)
    stride = getattr(obj, "stride", None)
    strides = tuple(int(s) for s in stride()) if callable(stride) else None
    device = getattr(obj, "device", None)
    a = Array(
        name,
        int(data_ptr()),
        dtype_name(getattr(obj, "dtype", None)),
        tuple(int(d) for d in shape) if shape is not None else None,
        strides,
        str(device) if device is not None else None,
    )
    p = probe
    return a if p is None else p.seen(a, obj)


def check_dtype(a: Array, expected: str) -> None:
    if a.dtype is not None and a.dtype != expected:
        raise invalid_argument(f"{a.name} has dtype {a.dtype}, the variant needs {expected}")


def _contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def describe(a: Array) -> str:
    """How messages name an array: its name, shape and strides."""
    return f"{a.name} (shape {list(a.shape or ())}, strides {list(a.strides or ())})"


def rows(a: Array, count: int, width: int, stride: Optional[int], stride_name: str) -> int:
    """Row stride (elements) of `a` seen as `count` rows of `width` contiguous elements.

    A described array must have dims that split into leading dims of product `count` (rows,
    any uniform stride) and trailing dims of product `width` (contiguous). A raw pointer needs
    the stride given explicitly.
    """
    if not a.described:
        if stride is None:
            raise invalid_argument(
                f"{a.name} is a raw pointer: pass {stride_name} (elements between rows)"
            )
        return stride
    shape, strides = a.shape, a.strides
    assert shape is not None and strides is not None
    for split in range(len(shape) + 1):
        lead, trail = shape[:split], shape[split:]
        if math.prod(lead) != count or math.prod(trail) != width:
            continue
        if not _contiguous(trail, strides[split:]):
            raise invalid_argument(
                f"{describe(a)}: the last dims (a row of {width} elements) must be contiguous"
            )
        lead_strides = [s for d, s in zip(lead, strides[:split]) if d != 1]
        lead_sizes = [d for d in lead if d != 1]
        for i in range(len(lead_sizes) - 1):
            if lead_strides[i] != lead_strides[i + 1] * lead_sizes[i + 1]:
                raise invalid_argument(
                    f"{describe(a)}: the leading dims cannot be viewed as {count} rows with "
                    "one stride"
                )
        got = lead_strides[-1] if lead_strides else width
        if stride is not None and stride != got:
            raise invalid_argument(f"{stride_name} is {stride} but {describe(a)} has {got}")
        return got
    raise invalid_argument(
        f"{describe(a)}: expected {count} rows of {width} elements ({count * width} in all)"
    )


def tile_pairs(a: Array, outer: int, inner: int, width: int, strides: tuple) -> tuple:
    """Strides (elements) of dims 0 and 1 of `a`, shaped [outer, inner, ...] with each
    [outer, inner] element a contiguous tile of `width` elements. `strides` are explicit
    values (or None) for dims 0 and 1, needed for raw pointers."""
    names = ("inter_seq_stride", "inter_tok_stride")
    if not a.described:
        if strides[0] is None or strides[1] is None:
            raise invalid_argument(f"{a.name} is a raw pointer: pass {names[0]} and {names[1]}")
        return strides
    shape, st = a.shape, a.strides
    assert shape is not None and st is not None
    if len(shape) < 2 or shape[0] != outer or shape[1] != inner or math.prod(shape[2:]) != width:
        raise invalid_argument(
            f"{describe(a)}: expected [{outer}, {inner}, ...] with {width} elements per "
            f"[{outer}, {inner}] entry"
        )
    if not _contiguous(shape[2:], st[2:]):
        raise invalid_argument(f"{describe(a)}: each state tile (dims 2..) must be contiguous")
    for i in range(2):
        if strides[i] is not None and strides[i] != st[i]:
            raise invalid_argument(f"{names[i]} is {strides[i]} but {describe(a)} has {st[i]}")
    return st[0], st[1]


def same_device(arrays: Sequence[Optional[Array]]) -> None:
    devices = {a.device: a.name for a in arrays if a is not None and a.device is not None}
    if len(devices) > 1:
        listed = ", ".join(f"{name} on {device}" for device, name in devices.items())
        raise invalid_argument(f"the tensors are on different devices: {listed}")
