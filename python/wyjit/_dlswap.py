# SPDX-License-Identifier: Apache-2.0
"""A prepared launch's swap in C (wyjit_array_swap_run, include/wyjit/array_swap.h): the arrays
of a call are read in the library through their framework's DLPack exchange API
(`type(x).__dlpack_c_exchange_api__`, PyTorch's since 2.10) and checked there against the ones
they replace, instead of reading dtype, shape, strides, device and data_ptr in Python.

NOTE: measured (tools/bench/python_host_cost.py, docs/host-cost.md): those
five reads cost about 1.5 us a torch tensor in Python on the CI-class machine, most of a
prepared launch; in C they cost a fraction of that. The Python path (_slots.py) stays for
everything else: other array types, raw pointers, a library without this entry point, and the
message of any array the C check refuses.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Optional

from ._probe import Placed
from ._slots import Slot

_c_int64_p = ctypes.POINTER(ctypes.c_int64)


class DLTensor(ctypes.Structure):
    """wyjit_dltensor: DLPack's DLTensor."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("dtype_code", ctypes.c_uint8),
        ("dtype_bits", ctypes.c_uint8),
        ("dtype_lanes", ctypes.c_uint16),
        ("shape", _c_int64_p),
        ("strides", _c_int64_p),
        ("byte_offset", ctypes.c_uint64),
    ]


class ArraySlot(ctypes.Structure):
    """wyjit_array_slot."""

    _fields_ = [("word", ctypes.c_size_t), ("expected", DLTensor)]


class ArraySwap(ctypes.Structure):
    """wyjit_array_swap."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("args", ctypes.c_void_p),
        ("args_size", ctypes.c_size_t),
        ("slots", ctypes.POINTER(ArraySlot)),
        ("num_slots", ctypes.c_size_t),
        ("from_object", ctypes.c_void_p),
        ("which", ctypes.POINTER(ctypes.c_int32)),
        ("objects", ctypes.POINTER(ctypes.c_void_p)),
        ("previous", ctypes.POINTER(ctypes.c_uint64)),
        ("capacity", ctypes.c_size_t),
        ("refused", ctypes.c_size_t),
    ]


# NOTE: PYFUNCTYPE keeps the GIL: the exchange API reads Python objects. The launch after a swap
# goes through a prototype that releases it.
_RUN = ctypes.PYFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t)
_FROM_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
_CAPSULE_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
# DLPackExchangeAPI: a header {DLPackVersion version; prev_api*} (16 bytes), then the function
# pointers managed_tensor_allocator, managed_tensor_from_py_object_no_sync,
# managed_tensor_to_py_object_no_sync, dltensor_from_py_object_no_sync, current_work_stream.
_DLTENSOR_FROM_OBJECT = 40  # byte offset
_MINOR_WITH_EXCHANGE_API = 2

_exchange: dict[type, int] = {}  # class -> its dltensor_from_py_object_no_sync (0: none)


def exchange_function(cls: type) -> int:
    """The address of `cls`'s DLPack dltensor_from_py_object_no_sync, 0 when it has none (or
    one of a DLPack ABI this package does not know)."""
    address = _exchange.get(cls)
    if address is None:
        address = 0
        capsule = getattr(cls, "__dlpack_c_exchange_api__", None)
        if capsule is not None:
            try:
                api = _CAPSULE_POINTER(capsule, b"dlpack_exchange_api") or 0
            except Exception:  # noqa: BLE001 - not such a capsule: no exchange API
                api = 0
            if api:
                major = ctypes.c_uint32.from_address(api).value
                minor = ctypes.c_uint32.from_address(api + 4).value
                if major == 1 and minor >= _MINOR_WITH_EXCHANGE_API:
                    address = ctypes.c_void_p.from_address(api + _DLTENSOR_FROM_OBJECT).value or 0
        _exchange[cls] = address
    return address


def _describe(obj: Any, from_object: Any) -> Optional[DLTensor]:
    d = DLTensor()
    try:
        if from_object(obj, ctypes.byref(d)) != 0:
            return None
    except Exception:  # noqa: BLE001 - the framework cannot describe it: the Python path
        return None
    return d


class CSwap:
    """The arrays of one prepared launch that the library swaps, and the buffers of a call."""

    def __init__(self, cls: type, run: int, args: ctypes.Structure, slots: list):
        n = len(slots)
        self.cls = cls
        self.index = {slot.name: i for i, (slot, _) in enumerate(slots)}
        self.words = [slot.word for slot, _ in slots]
        self.table = (ArraySlot * n)(*[e for _, e in slots])
        self._keep = [e._keep for _, e in slots]  # the shapes and strides the table points to
        self.which = (ctypes.c_int32 * n)()
        # NOTE: the arrays' addresses (id(), CPython's object address), not references: a
        # py_object array costs twice as much a store and would keep the last call's arrays
        # alive. The caller's keywords hold the objects for the duration of the call.
        self.objects = (ctypes.c_void_p * n)()
        self.previous = (ctypes.c_uint64 * n)()
        self.swap = ArraySwap(ctypes.sizeof(ArraySwap), ctypes.addressof(args),
                              ctypes.sizeof(args), self.table, n, exchange_function(cls),
                              self.which, self.objects, self.previous, n, 0)
        self.address = ctypes.addressof(self.swap)
        self.run = _RUN(run)

    def restore(self, words: Any, count: int) -> None:
        """Undoes a run of `count` arrays (the launch after it failed)."""
        for i in reversed(range(count)):
            words[self.words[self.which[i]]] = self.previous[i]


def make(placed: list[Placed], slots: dict[str, Slot], args: ctypes.Structure,
         run: int) -> Optional[CSwap]:
    """A CSwap for the tensor arguments of one class with an exchange API, each described by it
    exactly as the Python checks read it; None when there are none (or no `run`)."""
    if not run or sys.implementation.name != "cpython":  # id() is the address in CPython only
        return None
    chosen: list = []
    cls: Optional[type] = None
    for p in placed:
        slot = slots[p.name]
        if slot.cls is None or (cls is not None and slot.cls is not cls):
            continue
        address = exchange_function(slot.cls)
        if not address:
            continue
        d = _describe(p.obj, _FROM_OBJECT(address))
        a = p.array
        if d is None or a.shape is None or a.strides is None or d.ndim != len(a.shape):
            continue
        shape = tuple(d.shape[i] for i in range(d.ndim))
        strides = (tuple(d.strides[i] for i in range(d.ndim)) if d.strides
                   else tuple(_compact(shape)))
        # NOTE: a framework may describe the stride of a size-1 dim as it likes (torch makes
        # some canonical); such a dim is never stepped along, so a new array that differs from
        # the prepared one only there addresses the same memory. Described otherwise here, the
        # argument stays on the Python path.
        if (d.data or 0) + d.byte_offset != a.ptr or shape != a.shape or strides != a.strides:
            continue
        kept_shape = (ctypes.c_int64 * max(1, d.ndim))(*shape)
        kept_strides = (ctypes.c_int64 * max(1, d.ndim))(*strides)
        expected = DLTensor(None, d.device_type, d.device_id, d.ndim, d.dtype_code,
                            d.dtype_bits, d.dtype_lanes,
                            ctypes.cast(kept_shape, _c_int64_p),
                            ctypes.cast(kept_strides, _c_int64_p), 0)
        entry = ArraySlot(slot.word, expected)
        entry._keep = (kept_shape, kept_strides)  # type: ignore[attr-defined]
        chosen.append((slot, entry))
        cls = slot.cls
    if not chosen or any(s.more for s, _ in chosen):
        return None
    return CSwap(cls, run, args, chosen)  # type: ignore[arg-type]


def _compact(shape: tuple) -> list:
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return strides
