# SPDX-License-Identifier: Apache-2.0
"""conv1d_update: checked launches of the K-token causal depthwise conv1d update on tensors or
pointers (the math, both rollback forms and the tile contract: include/wyjit/conv1d_update.hpp).
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from . import _errors, _lib
from ._args import family_spec, fresh, positive_int
from ._jit import Kernel, stream_handle
from ._prepared import Launch, PreparedLaunch
from ._spec import Spec
from ._states import StateRefs, fill_state_refs, refuse
from ._tensors import Array, array, check_dtype, describe, rows, same_device

_FAMILY = "conv1d_update"

# wyjit_conv1d_path
PATHS = {"auto": 0, "wide": 1, "narrow": 2}


class Conv1dUpdateArgs(ctypes.Structure):
    """wyjit_conv1d_update_args."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("batch", ctypes.c_int32),
        ("channels", ctypes.c_int32),
        ("k", ctypes.c_int32),
        ("width", ctypes.c_int32),
        ("x", ctypes.c_void_p),
        ("y", ctypes.c_void_p),
        ("x_stride", ctypes.c_int64),
        ("y_stride", ctypes.c_int64),
        ("weight", ctypes.c_void_p),
        ("bias", ctypes.c_void_p),
        ("state_cols", ctypes.c_int64),
        ("state_channel_stride", ctypes.c_int64),
        ("state_col_stride", ctypes.c_int64),
        ("states", StateRefs),
        ("window_offset", ctypes.c_void_p),
        ("path", ctypes.c_int32),
    ]


_lib.declare_family(_FAMILY, Conv1dUpdateArgs)
_GEOMETRY = ("state_cols", "state_channel_stride", "state_col_stride")


class Conv1dTile:
    """A conv state tile in a tensor's last two dims: [channels, cols] or [cols, channels], any
    strides (the library wants one of the two to be 1). Every tile of a launch has one geometry
    (state_cols, state_channel_stride, state_col_stride): the first tensor read sets it (or the
    explicit values), the others must agree."""

    __slots__ = ("channels", "geometry", "source")

    def __init__(self, channels: int, explicit: tuple[Optional[int], Optional[int], Optional[int]]):
        self.channels = channels
        self.geometry = list(explicit)
        self.source: Optional[str] = None  # the tensor the geometry came from

    def _read(self, a: Array, lead: int, expected: str) -> None:
        shape, strides = a.shape[lead:], a.strides[lead:]  # type: ignore[index]
        c = self.channels
        options = []
        if len(shape) == 2:
            if shape[0] == c:  # [channels, cols]
                options.append((shape[1], strides[0], strides[1]))
            if shape[1] == c:  # [cols, channels]
                options.append((shape[0], strides[1], strides[0]))
        if not options:
            raise _errors.invalid_argument(
                f"{describe(a)}: expected {expected} with channels = {c}"
            )
        # NOTE: when cols == channels both readings fit; the explicit (or first) geometry picks
        # one, else [channels, cols] (dim 1 is channels, as torch and vLLM name the dims).
        chosen = next((o for o in options if all(g is None or g == v
                                                 for g, v in zip(self.geometry, o))), options[0])
        for i, (name, want, got) in enumerate(zip(_GEOMETRY, self.geometry, chosen)):
            if want is not None and want != got:
                if self.source is None:
                    raise _errors.invalid_argument(f"{name} is {want} but {describe(a)} has {got}")
                raise _errors.invalid_argument(
                    f"{describe(a)} has {name} {got}, {self.source} has {want}: every state tile "
                    "of a launch has one geometry"
                )
            self.geometry[i] = got
        if self.source is None:
            self.source = a.name

    def leading(self, a: Array, count: int, stride: Optional[int], stride_name: str) -> int:
        if not a.described:
            if stride is None:
                raise _errors.invalid_argument(f"{a.name} is a raw pointer: pass {stride_name}")
            return stride
        if len(a.shape) != 3 or a.shape[0] != count:  # type: ignore[arg-type,index]
            raise _errors.invalid_argument(
                f"{describe(a)}: expected [{count}, channels, cols] or [{count}, cols, channels]"
            )
        self._read(a, 1, f"[{count}, channels, cols] or [{count}, cols, channels]")
        got = a.strides[0]  # type: ignore[index]
        if stride is not None and stride != got:
            raise _errors.invalid_argument(f"{stride_name} is {stride} but {describe(a)} has {got}")
        return got

    def pairs(self, a: Array, outer: int, inner: int,
              strides: tuple[Optional[int], Optional[int]]) -> tuple[int, int]:
        names = ("inter_seq_stride", "inter_tok_stride")
        if not a.described:
            if strides[0] is None or strides[1] is None:
                raise _errors.invalid_argument(
                    f"{a.name} is a raw pointer: pass {names[0]} and {names[1]}"
                )
            return strides[0], strides[1]
        expected = f"[{outer}, {inner}, channels, cols] or [{outer}, {inner}, cols, channels]"
        shape = a.shape
        if len(shape) != 4 or shape[0] != outer or shape[1] != inner:  # type: ignore[arg-type]
            raise _errors.invalid_argument(f"{describe(a)}: expected {expected}")
        self._read(a, 2, expected)
        got = a.strides
        assert got is not None
        for i in range(2):
            if strides[i] is not None and strides[i] != got[i]:
                raise _errors.invalid_argument(
                    f"{names[i]} is {strides[i]} but {describe(a)} has {got[i]}"
                )
        return got[0], got[1]


def build_conv1d_update_args(
    spec: "Spec | str",
    *,
    batch: int,
    channels: int,
    x: Any,
    y: Any,
    weight: Any,
    bias: Any = None,
    state: Any = None,
    inter: Any = None,
    tables: Any = None,
    read_slot: Any = None,
    write_slot: Any = None,
    window_offset: Any = None,
    state_cols: Optional[int] = None,
    path: str = "auto",
    x_stride: Optional[int] = None,
    y_stride: Optional[int] = None,
    state_channel_stride: Optional[int] = None,
    state_col_stride: Optional[int] = None,
    state_seq_stride: Optional[int] = None,
    inter_seq_stride: Optional[int] = None,
    inter_tok_stride: Optional[int] = None,
    slab_stride: Optional[int] = None,
    slot_stride: Optional[int] = None,
    num_slots: Optional[int] = None,
    write_slot_stride: Optional[int] = None,
) -> Conv1dUpdateArgs:
    """The C argument struct (wyjit_conv1d_update_args) of one launch, after checking every
    array's dtype, shape and strides against the variant (see conv1d_update)."""
    spec = family_spec(spec, _FAMILY, "conv1d_update")
    K, W = spec.k, spec.width
    window = spec.rollback == "window"
    batch = positive_int("batch", batch)
    channels = positive_int("channels", channels)
    arrays: list[Array] = []

    def arr(name: str, obj: Any, dtype: str, what: str = "") -> Array:
        a = array(name, obj)
        if a is None:
            raise _errors.invalid_argument(f"{name} is required by {spec.name}{what}")
        check_dtype(a, dtype)
        arrays.append(a)
        return a

    path_code = PATHS.get(path) if isinstance(path, str) else None
    if path_code is None:
        raise _errors.invalid_argument(
            f"path is {path!r}, allowed: {', '.join(PATHS)}"
        )

    c = fresh(Conv1dUpdateArgs, "wyjit_conv1d_update_args_init")
    c.batch, c.channels, c.k, c.width, c.path = batch, channels, K, W, path_code

    # ---- x, y: [batch*K, stride] rows of channels (e.g. a slice of a packed projection) ----
    xx, xy = arr("x", x, spec.io), arr("y", y, spec.io)
    c.x_stride = rows(xx, batch * K, channels, x_stride, "x_stride")
    c.y_stride = rows(xy, batch * K, channels, y_stride, "y_stride")
    c.x, c.y = xx.ptr, xy.ptr

    # ---- weight [channels, W] contiguous (nn.Conv1d's [channels, 1, W] too), bias [channels] --
    xw = arr("weight", weight, spec.weight)
    if xw.described and rows(xw, channels, W, None, "weight stride") != W:
        raise _errors.invalid_argument(f"{describe(xw)}: must be contiguous [channels, W={W}]")
    c.weight = xw.ptr
    if spec.bias:
        xb = arr("bias", bias, spec.weight)
        if xb.described:
            rows(xb, 1, channels, None, "bias stride")
        c.bias = xb.ptr
    else:
        refuse(spec.name, "no bias", {"bias": bias})
    if window:
        xo = arr("window_offset", window_offset, "i32",
                 ": int32 [batch], the first history column of each sequence")
        if rows(xo, batch, 1, 1 if not xo.described else None, "window_offset stride") != 1:
            raise _errors.invalid_argument(
                f"window_offset must be contiguous [batch], got {xo.strides}"
            )
        c.window_offset = xo.ptr
    else:
        refuse(spec.name, "the intermediate form", {"window_offset": window_offset})

    # ---- states: the intermediate form writes K tiles a sequence, the window form one ----
    tile = Conv1dTile(channels, (state_cols, state_channel_stride, state_col_stride))
    fill_state_refs(
        c.states, spec_name=spec.name, addressing=spec.addressing, writes=1 if window else K,
        tile=tile, batch=batch, dtype=spec.io, arrays=arrays,
        state=state, inter=inter, tables=tables, read_slot=read_slot, write_slot=write_slot,
        state_seq_stride=state_seq_stride, inter_seq_stride=inter_seq_stride,
        inter_tok_stride=inter_tok_stride, slab_stride=slab_stride, slot_stride=slot_stride,
        num_slots=num_slots, write_slot_stride=write_slot_stride,
    )
    if None in tile.geometry:
        missing = [n for n, v in zip(_GEOMETRY, tile.geometry) if v is None]
        why = ("table addressing has no state tensor" if spec.addressing == "table"
               else "state is a raw pointer")
        raise _errors.invalid_argument(f"{why}: pass {', '.join(missing)}")
    c.state_cols, c.state_channel_stride, c.state_col_stride = tile.geometry
    same_device(arrays)
    return c


def check_conv1d_update(spec: "Spec | str", **arguments: Any) -> None:
    """Runs every check of conv1d_update (Python's and the library's) without launching: no GPU
    needed. Raises InvalidArgumentError naming the argument and its value."""
    spec = family_spec(spec, _FAMILY, "check_conv1d_update")
    c = build_conv1d_update_args(spec, **arguments)
    _lib.check(_lib.lib().wyjit_check_conv1d_update(spec.name.encode(), ctypes.byref(c)))


def conv1d_update(kernel: Kernel, *, stream: Any = None, **arguments: Any) -> None:
    """Launches a conv1d_update kernel on `stream` (None: the legacy default stream; an int; or
    a torch.cuda.Stream). Allocates and copies nothing, never synchronises: it can be captured
    in a CUDA graph.

    Arguments (tensors or raw device pointers; strides in elements, derived from tensors):
      batch, channels: sizes (K and W come from the variant)
      x, y: [batch*K, channels] rows of the io dtype, any row stride (x may be a slice of a
            packed projection); [batch, K, channels] works
      weight: [channels, W] contiguous ([channels, 1, W] works), the variant's weight dtype;
              bias [channels] with `bias`
      a state tile is one sequence's conv state, io dtype, [channels, cols] or
      [cols, channels] with any strides one of which is 1; state_cols is its cols (>= W-1;
      window form >= W-1+K)
      strided: state [batch, <tile>]; intermediate form: inter [batch, K-1, <tile>] (the state
               after tokens 0..K-2; the final one goes over state)
      table:   tables=TableStager(K or 1 for the window form, max_batch), and state_cols,
               state_channel_stride, state_col_stride
      slot:    state [num_slots, <tile>] pool, read_slot int32 [batch], write_slot int32
               [batch, >= K] (window form: [batch] or [batch, >= 1])
      window form: window_offset int32 [batch] (device), the first history column per sequence
      path: "auto", "wide" or "narrow" (the two kernels compute the same bits)
      raw pointers need their strides: x_stride, y_stride, state_cols, state_channel_stride,
      state_col_stride, state_seq_stride, inter_seq_stride, inter_tok_stride, slab_stride,
      num_slots, slot_stride, write_slot_stride
    """
    c = build_conv1d_update_args(kernel.spec, **arguments)
    _lib.check(_lib.lib().wyjit_launch_conv1d_update(kernel.handle, ctypes.byref(c),
                                                     stream_handle(stream)))


_PREPARED = Launch("conv1d_update", _FAMILY, build_conv1d_update_args)


def prepare_conv1d_update(kernel: "Kernel | Spec | str", **arguments: Any) -> PreparedLaunch:
    """conv1d_update checked once, for launches that only swap arrays (the arguments are
    conv1d_update's, stream aside): `prepared(stream=s, x=x, y=y, read_slot=r, write_slot=w)`.
    Prepared from a Spec it can only check()."""
    return PreparedLaunch(_PREPARED, kernel, arguments)
