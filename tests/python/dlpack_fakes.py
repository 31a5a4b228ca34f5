# SPDX-License-Identifier: Apache-2.0
"""A tensor stand-in with a DLPack exchange API (what torch.Tensor has), written in Python: the
CPU tests drive the library's swap (wyjit_array_swap_run) through it without torch."""

import ctypes

from fakes import FakeTensor
from wyjit._dlswap import DLTensor

# DLDataType (code, bits) of the dtypes the launches read; kDLInt 0, kDLFloat 2, kDLBfloat 4
_DTYPES = {"float32": (2, 32), "float16": (2, 16), "bfloat16": (4, 16), "int32": (0, 32),
           "int64": (0, 64)}
_KDLCUDA, _KDLCPU = 2, 1

_calls = []  # one entry per object described (the tests count them)
_kept = []  # the shape and strides of the last description (valid until control returns)


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
def _from_object(address, out):
    obj = ctypes.cast(address, ctypes.py_object).value
    _calls.append(obj)
    if getattr(obj, "undescribable", False):
        return -1
    code, bits = _DTYPES[obj.dtype.split(".")[-1]]
    n = len(obj.shape)
    shape = (ctypes.c_int64 * max(1, n))(*obj.shape)
    strides = (ctypes.c_int64 * max(1, n))(*obj.stride())
    _kept[:] = [shape, strides]
    d = out[0]
    d.data = obj.data_ptr()
    d.device_type = _KDLCUDA if obj.device.startswith("cuda") else _KDLCPU
    d.device_id = obj.get_device() if obj.device.startswith("cuda") else 0
    d.ndim = n
    d.dtype_code, d.dtype_bits, d.dtype_lanes = code, bits, 1
    d.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    d.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    d.byte_offset = 0
    return 0


# DLPackExchangeAPI: {version {major 1, minor 3}, prev_api}, then five function pointers of which
# the fourth is dltensor_from_py_object_no_sync.
_API = (ctypes.c_uint64 * 7)(1 | (3 << 32), 0, 0, 0, 0,
                             ctypes.cast(_from_object, ctypes.c_void_p).value, 0)
_NAME = ctypes.create_string_buffer(b"dlpack_exchange_api")  # a capsule keeps the pointer
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))


class DlTensor(FakeTensor):
    """A FakeTensor whose class has a DLPack exchange API, like torch.Tensor."""

    __dlpack_c_exchange_api__ = _new_capsule(ctypes.addressof(_API),
                                             ctypes.cast(_NAME, ctypes.c_char_p), None)
    undescribable = False


def described():
    """How many objects the exchange API has described, and forgets them."""
    n = len(_calls)
    _calls.clear()
    return n
