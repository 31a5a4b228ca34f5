# SPDX-License-Identifier: Apache-2.0
"""State references (wyjit_state_refs) for every family: one component that reads the state
arguments of a launch — tensors or raw pointers — for the three addressing modes.

Per sequence b a launch reads one tile S_b and writes `writes` tiles (include/wyjit/state_refs.h):

- strided: state [batch, <tile>] (S_b; the last write goes over it) and, when writes > 1,
  inter [batch, writes-1, <tile>] (the other writes);
- table: tables = a TableStager made for `writes` (or a raw device pointer and slab_stride);
- slot: state [num_slots, <tile>] (the pool), read_slot int32 [batch], write_slot int32
  [batch, >= writes] ([batch] when writes == 1).

What <tile> is belongs to the family: a Tile reads it from a tensor's trailing dims.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Protocol

from . import _errors
from ._tensors import Array, array, check_dtype, rows, tile_pairs


class StateRefs(ctypes.Structure):
    """wyjit_state_refs: where a launch finds each sequence's state tiles (every family's
    launch arguments hold one, as `states`)."""

    _fields_ = [
        ("state", ctypes.c_void_p),
        ("state_seq_stride", ctypes.c_int64),
        ("inter", ctypes.c_void_p),
        ("inter_seq_stride", ctypes.c_int64),
        ("inter_tok_stride", ctypes.c_int64),
        ("tables", ctypes.c_void_p),
        ("slab_stride", ctypes.c_int64),
        ("slot_stride", ctypes.c_int64),
        ("num_slots", ctypes.c_int32),
        ("read_slot", ctypes.c_void_p),
        ("write_slot", ctypes.c_void_p),
        ("write_slot_stride", ctypes.c_int64),
    ]


class Tile(Protocol):
    """How one family's state tile sits in a tensor's trailing dims."""

    def leading(self, a: Array, count: int, stride: Optional[int], stride_name: str) -> int:
        """`a` seen as [count, <tile>]: the stride (elements) between its tiles. Raises
        InvalidArgumentError naming `a` when its dims are not that; `stride` (explicit, may be
        None) must agree with the tensor and is needed for a raw pointer."""
        ...

    def pairs(self, a: Array, outer: int, inner: int,
              strides: tuple[Optional[int], Optional[int]]) -> tuple[int, int]:
        """`a` seen as [outer, inner, <tile>]: the strides of its two leading dims (the explicit
        inter_seq_stride and inter_tok_stride must agree; needed for a raw pointer)."""
        ...


class ContiguousTile:
    """A tile of `elements` contiguous elements, in any trailing dims (gdn_verify's
    [HV, dv, dk] per sequence)."""

    __slots__ = ("elements",)

    def __init__(self, elements: int):
        self.elements = elements

    def leading(self, a: Array, count: int, stride: Optional[int], stride_name: str) -> int:
        return rows(a, count, self.elements, stride, stride_name)

    def pairs(self, a: Array, outer: int, inner: int,
              strides: tuple[Optional[int], Optional[int]]) -> tuple[int, int]:
        return tile_pairs(a, outer, inner, self.elements, strides)


def refuse(spec_name: str, why: str, given: dict[str, Any]) -> None:
    """Refuses arguments the variant does not read (so that a mistaken mode fails loudly)."""
    for name, value in given.items():
        if value is not None:
            raise _errors.invalid_argument(
                f"{name} is given but {spec_name} does not use it ({why})"
            )


def _required(spec_name: str, name: str, a: Optional[Array], what: str = "") -> Array:
    if a is None:
        raise _errors.invalid_argument(f"{name} is required by {spec_name}{what}")
    return a


def _int32(name: str, value: Optional[int]) -> Optional[int]:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                              or not 0 <= value < 2**31):
        raise _errors.invalid_argument(f"{name} is {value!r}, must be an int in [0, 2^31)")
    return value


def fill_state_refs(
    refs: StateRefs,
    *,
    spec_name: str,
    addressing: str,
    writes: int,
    tile: Tile,
    batch: int,
    dtype: str,
    arrays: list,
    state: Any,
    inter: Any,
    tables: Any,
    read_slot: Any,
    write_slot: Any,
    state_seq_stride: Optional[int],
    inter_seq_stride: Optional[int],
    inter_tok_stride: Optional[int],
    slab_stride: Optional[int],
    slot_stride: Optional[int],
    num_slots: Optional[int],
    write_slot_stride: Optional[int],
    reads: bool = True,
    names: Optional[dict[str, str]] = None,
) -> None:
    """Fills `refs` for a launch of `batch` sequences that writes `writes` tiles a sequence
    (0: it reads S_b only, or updates it in place) and reads S_b unless `reads` is False, after
    checking every state argument (dtype `dtype`, shapes, strides). `names` maps the argument
    names above to the caller's keywords (a launch with several references: "state" may be
    "log"), for the messages. Appends the arrays it read to `arrays` (the caller checks they
    share a device)."""
    names = names or {}

    def nm(name: str) -> str:
        return names.get(name, name)

    def arr(name: str, obj: Any, expected: Optional[str]) -> Optional[Array]:
        x = array(nm(name), obj)
        if x is not None:
            if expected is not None:
                check_dtype(x, expected)
            arrays.append(x)
        return x

    def given(**values: Any) -> dict[str, Any]:
        return {nm(k): v for k, v in values.items()}

    if addressing == "strided":
        refuse(spec_name, "strided addressing",
               given(tables=tables, read_slot=read_slot, write_slot=write_slot))
        xs = _required(spec_name, nm("state"), arr("state", state, dtype))
        refs.state = xs.ptr
        refs.state_seq_stride = tile.leading(xs, batch, state_seq_stride, nm("state_seq_stride"))
        if writes > 1:
            xi = _required(spec_name, nm("inter"), arr("inter", inter, dtype),
                           f": [batch, {writes - 1}, ...] intermediate states")
            refs.inter = xi.ptr
            refs.inter_seq_stride, refs.inter_tok_stride = tile.pairs(
                xi, batch, writes - 1, (inter_seq_stride, inter_tok_stride)
            )
        else:
            refuse(spec_name, "strided addressing with one write a sequence",
                   given(inter=inter))
        return

    if addressing == "table":
        refuse(spec_name, "table addressing", given(state=state, inter=inter,
                                                    read_slot=read_slot, write_slot=write_slot))
        stager_writes = getattr(tables, "writes", None)
        want = max(writes, 1)  # a tile updated in place: a stager of one tile a sequence
        if stager_writes is not None:  # a TableStager
            if stager_writes != want:
                raise _errors.invalid_argument(
                    f"{nm('tables')} is a TableStager for {stager_writes} writes a sequence, "
                    f"{spec_name} writes {want}: make it with TableStager({want}, max_batch)"
                )
            if batch > tables.max_batch:
                raise _errors.invalid_argument(
                    f"batch is {batch}, the TableStager holds max_batch={tables.max_batch}"
                    + ("" if nm("tables") == "tables" else f" ({nm('tables')})")
                )
            refs.tables, refs.slab_stride = tables.tables, tables.slab_stride
            return
        xt = _required(spec_name, nm("tables"), arr("tables", tables, None), " (a TableStager)")
        if slab_stride is None and writes > 1:
            raise _errors.invalid_argument(
                f"{nm('tables')} is a raw pointer: pass {nm('slab_stride')}"
            )
        refs.tables, refs.slab_stride = xt.ptr, slab_stride or 0
        return

    if addressing != "slot":
        raise _errors.InternalError(
            _errors.INTERNAL, f"{spec_name} has addressing {addressing!r}, unknown to this package"
        )
    refuse(spec_name, "slot addressing", given(inter=inter, tables=tables))
    xs = _required(spec_name, nm("state"), arr("state", state, dtype), " (the slot pool)")
    num_slots = _int32(nm("num_slots"), num_slots)
    if xs.described:
        slots = xs.shape[0] if xs.shape else 0  # type: ignore[index]
        if num_slots is not None and num_slots != slots:
            raise _errors.invalid_argument(
                f"{nm('num_slots')} is {num_slots} but {nm('state')} has {slots} slots (dim 0)"
            )
        num_slots = slots
    elif num_slots is None:
        raise _errors.invalid_argument(
            f"{nm('state')} is a raw pointer: pass {nm('num_slots')} and {nm('slot_stride')}"
        )
    refs.state = xs.ptr
    refs.num_slots = num_slots
    refs.slot_stride = tile.leading(xs, num_slots, slot_stride, nm("slot_stride"))
    if reads:
        xr = _required(spec_name, nm("read_slot"), arr("read_slot", read_slot, "i32"))
        if rows(xr, batch, 1, 1 if not xr.described else None,
                nm("read_slot") + " stride") != 1:
            raise _errors.invalid_argument(
                f"{nm('read_slot')} must be contiguous [batch], got {xr.strides}"
            )
        refs.read_slot = xr.ptr
    else:
        refuse(spec_name, "a launch that only writes these tiles", given(read_slot=read_slot))
    if writes == 0:
        refuse(spec_name, "tiles read or updated in place", given(write_slot=write_slot))
        return
    xw = _required(spec_name, nm("write_slot"), arr("write_slot", write_slot, "i32"))
    if xw.described:
        shape = xw.shape
        assert shape is not None
        if writes == 1 and len(shape) == 1 and shape[0] == batch:
            write_slot_stride = rows(xw, batch, 1, write_slot_stride, nm("write_slot_stride"))
        elif len(shape) != 2 or shape[0] != batch or shape[1] < writes:
            raise _errors.invalid_argument(
                f"{nm('write_slot')} has shape {list(shape)}, expected [{batch}, >= {writes}]"
                + (f" or [{batch}]" if writes == 1 else "")
            )
        else:
            write_slot_stride = rows(xw, batch, shape[1], write_slot_stride,
                                     nm("write_slot_stride"))
    elif write_slot_stride is None:
        raise _errors.invalid_argument(
            f"{nm('write_slot')} is a raw pointer: pass {nm('write_slot_stride')}"
        )
    refs.write_slot, refs.write_slot_stride = xw.ptr, write_slot_stride
