# SPDX-License-Identifier: Apache-2.0
"""Loads libwyjit.so with ctypes and declares the C API of include/wyjit/wyjit.h.

The structs below are the C structs field for field (tests/python/test_declarations.py reads
the headers and compares). Variants cross as canonical names, so no spec struct is mirrored
here: the families' fields are read from the library (_spec.py). Each family's module declares
its own launch arguments and entry points (declare_family); the state references they share
are _states.StateRefs.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import threading
from typing import Callable, Optional

from . import _errors, _nvrtc

__all__ = ["lib", "library_path", "check", "text_out", "declare_family", "FieldInfo",
           "JitOptions", "Counters", "NvrtcInfo", "VERSION"]

# The library version this package is written against (wyjit.h's WYJIT_VERSION_*).
VERSION = (0, 2, 0)

c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p
c_char_p = ctypes.c_char_p
_P = ctypes.POINTER


class FieldInfo(ctypes.Structure):
    """wyjit_field_info."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("name", c_char_p),
        ("label", c_char_p),
        ("kind", c_int32),
        ("spelling", c_char_p),
        ("choices", _P(c_char_p)),
        ("num_choices", c_size_t),
        ("min", c_int32),
        ("max", c_int32),
        ("allowed", _P(c_int32)),
        ("num_allowed", c_size_t),
        ("default_value", c_int32),
        ("standard", c_char_p),
        ("merged_spelling", c_char_p),
        ("same_as", c_char_p),
        ("doc", c_char_p),
    ]


# wyjit_field_info.kind
FIELD_INTEGER = 0
FIELD_CHOICE = 1
FIELD_FLAG = 2


class JitOptions(ctypes.Structure):
    """wyjit_jit_options."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("cache_dir", c_char_p),
        ("read_only_dirs", _P(c_char_p)),
        ("num_read_only_dirs", c_size_t),
        ("no_jit", c_int32),
        ("disk_cache", c_int32),
        ("log_level", c_int32),
    ]


class Counters(ctypes.Structure):
    """wyjit_counters."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("memory_hits", ctypes.c_uint64),
        ("ro_disk_hits", ctypes.c_uint64),
        ("disk_hits", ctypes.c_uint64),
        ("misses", ctypes.c_uint64),
        ("compiles", ctypes.c_uint64),
        ("corrupt_entries", ctypes.c_uint64),
        ("evictions", ctypes.c_uint64),
        ("write_failures", ctypes.c_uint64),
        ("lock_waits", ctypes.c_uint64),
        ("lock_timeouts", ctypes.c_uint64),
        ("loads", ctypes.c_uint64),
        ("compile_ms_total", ctypes.c_double),
        ("disk_read_ms_total", ctypes.c_double),
        ("lock_wait_ms_total", ctypes.c_double),
        ("load_ms_total", ctypes.c_double),
    ]


class NvrtcInfo(ctypes.Structure):
    """wyjit_nvrtc_info."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("path", c_char_p),
        ("rule", c_char_p),
        ("tried", c_char_p),
        ("version_major", c_int32),
        ("version_minor", c_int32),
    ]


_status = c_int32
_text = (c_char_p, c_size_t, _P(c_size_t))  # the (buffer, size, length) of text out

# name: (restype, argtypes)
_FUNCTIONS = {
    "wyjit_status_name": (c_char_p, [_status]),
    "wyjit_last_error": (c_char_p, []),
    "wyjit_version": (ctypes.c_uint32, []),
    "wyjit_version_string": (c_char_p, []),
    "wyjit_set_log_level": (_status, [c_int32]),
    "wyjit_family_count": (c_size_t, []),
    "wyjit_family_name": (c_char_p, [c_size_t]),
    "wyjit_family_field_count": (_status, [c_char_p, _P(c_size_t)]),
    "wyjit_family_field": (_status, [c_char_p, c_size_t, _P(FieldInfo)]),
    "wyjit_spec_build": (_status, [c_char_p, _P(c_char_p), _P(c_char_p), c_size_t, *_text]),
    "wyjit_spec_validate": (_status, [c_char_p]),
    "wyjit_spec_field": (_status, [c_char_p, c_char_p, *_text]),
    "wyjit_jit_options_init": (None, [_P(JitOptions)]),
    "wyjit_jit_create": (_status, [_P(JitOptions), _P(c_void_p)]),
    "wyjit_jit_destroy": (None, [c_void_p]),
    "wyjit_jit_cache_dir": (c_char_p, [c_void_p]),
    "wyjit_counters_init": (None, [_P(Counters)]),
    "wyjit_jit_get_counters": (_status, [c_void_p, _P(Counters)]),
    "wyjit_precompile": (_status, [c_void_p, _P(c_char_p), c_size_t, c_char_p, c_int32, _P(_status)]),
    "wyjit_jit_get_kernel": (_status, [c_void_p, c_char_p, _P(c_void_p)]),
    "wyjit_kernel_name": (_status, [c_void_p, *_text]),
    "wyjit_table_stager_create": (_status, [c_int32, c_int32, _P(c_void_p)]),
    "wyjit_table_stager_destroy": (None, [c_void_p]),
    "wyjit_table_stager_stage": (_status, [c_void_p, _P(c_void_p), _P(_P(c_void_p)), c_int32, c_void_p]),
    "wyjit_table_stager_tables": (c_void_p, [c_void_p]),
    "wyjit_table_stager_slab_stride": (c_int64, [c_void_p]),
    "wyjit_nvrtc_file_name": (c_char_p, []),
    "wyjit_nvrtc_set_wheel_dir": (_status, [c_char_p]),
    "wyjit_nvrtc_info_init": (None, [_P(NvrtcInfo)]),
    "wyjit_nvrtc_get_info": (_status, [_P(NvrtcInfo)]),
    "wyjit_device_count": (_status, [_P(c_int32)]),
    "wyjit_device_unavailable_reason": (c_char_p, []),
    "wyjit_device_make_current": (_status, [c_int32]),
    "wyjit_device_synchronize": (_status, []),
    "wyjit_mem_alloc": (_status, [c_size_t, _P(c_void_p)]),
    "wyjit_mem_free": (_status, [c_void_p]),
    "wyjit_memcpy_htod": (_status, [c_void_p, c_void_p, c_size_t]),
    "wyjit_memcpy_dtoh": (_status, [c_void_p, c_void_p, c_size_t]),
}

# The structs the library initialises (their *_init sets struct_size): each is checked against
# the library's size when it is loaded, so a header/package mismatch fails at load, not as a
# corrupted launch. The families add theirs (declare_family).
_INITIALISED: dict[str, type] = {
    "wyjit_jit_options_init": JitOptions,
    "wyjit_counters_init": Counters,
    "wyjit_nvrtc_info_init": NvrtcInfo,
}


def declare_family(family: str, args: type[ctypes.Structure]) -> None:
    """Declares the three C entry points of a family whose launch arguments are `args`
    (WYJIT_C_FAMILY makes them alike: wyjit_<family>_args_init, wyjit_check_<family>,
    wyjit_launch_<family>)."""
    functions = {
        f"wyjit_{family}_args_init": (None, [_P(args)]),
        f"wyjit_check_{family}": (_status, [c_char_p, _P(args)]),
        f"wyjit_launch_{family}": (_status, [c_void_p, _P(args), c_void_p]),
    }
    with _lock:
        _FUNCTIONS.update(functions)
        _INITIALISED[f"wyjit_{family}_args_init"] = args
        if _loaded is not None:  # declared after the library was loaded: declare them now
            _declare_functions(_loaded[0], _loaded[1], functions)
            _check_size(_loaded[0], _loaded[1], f"wyjit_{family}_args_init", args)


def _candidates() -> list[pathlib.Path]:
    """Where libwyjit.so is looked for, in order (WYJIT_LIBRARY is handled separately): the one
    installed in the package (by the wheel), then the repository's build tree."""
    here = pathlib.Path(__file__).resolve().parent
    found = sorted(here.glob("libwyjit.so*"))
    # NOTE: only build/ (tools/setup-deps.sh's tree): other trees may be sanitizer builds, which
    # abort a process they are loaded into. Set WYJIT_LIBRARY to use one of those.
    lib = here.parent.parent / "build" / "lib" / "libwyjit.so"  # python/wyjit -> the repository
    if lib.exists():
        found.append(lib)
    return found


_lock = threading.Lock()
_loaded: Optional[tuple[ctypes.CDLL, str]] = None


def _load() -> tuple[ctypes.CDLL, str]:
    tried = []
    explicit = os.environ.get("WYJIT_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit), explicit
        except OSError as e:
            raise _errors.error_for(
                _errors.INTERNAL, f"cannot load WYJIT_LIBRARY={explicit!r}: {e}"
            ) from None
    for path in _candidates():
        try:
            return ctypes.CDLL(str(path)), str(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    for name in ("libwyjit.so", "libwyjit.so.%d.%d" % VERSION[:2]):
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            tried.append(f"{name} ({e})")
    raise _errors.error_for(
        _errors.INTERNAL,
        "cannot find libwyjit.so: set WYJIT_LIBRARY to its path, or build the repository "
        "(build/lib/libwyjit.so). Tried: " + "; ".join(tried),
    )


def _declare_functions(cdll: ctypes.CDLL, path: str, functions: dict) -> None:
    for name, (restype, argtypes) in functions.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError:
            raise _errors.error_for(
                _errors.INTERNAL, f"{path} has no {name}: it is not the libwyjit this package needs"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes


def _check_size(cdll: ctypes.CDLL, path: str, init: str, struct: type) -> None:
    # NOTE: into a buffer larger than any struct, so a library struct larger than ours is
    # reported instead of written past the end.
    scratch = ctypes.create_string_buffer(4096)
    getattr(cdll, init)(ctypes.cast(scratch, _P(struct)))
    size = c_size_t.from_buffer(scratch).value
    if size != ctypes.sizeof(struct):
        raise _errors.error_for(
            _errors.INTERNAL,
            f"{path}: {init} makes a {size}-byte struct, this package declares "
            f"{ctypes.sizeof(struct)} bytes ({struct.__name__}): they are different versions",
        )


def _declare(cdll: ctypes.CDLL, path: str) -> None:
    _declare_functions(cdll, path, _FUNCTIONS)
    got = cdll.wyjit_version()
    major, minor = got // 1000000, got // 1000 % 1000
    if (major, minor) != VERSION[:2]:
        raise _errors.error_for(
            _errors.INTERNAL,
            f"{path} is wyjit {major}.{minor}.{got % 1000}; this package needs "
            f"{VERSION[0]}.{VERSION[1]}.x",
        )
    for init, struct in _INITIALISED.items():
        _check_size(cdll, path, init, struct)


def _use_nvrtc_wheel(cdll: ctypes.CDLL) -> None:
    """Hands the library the nvidia-cuda-nvrtc wheel's folder, when one is installed, before
    anything can load NVRTC (wyjit.h, "NVRTC")."""
    folder = _nvrtc.find_wheel_dir(cdll.wyjit_nvrtc_file_name().decode())
    if folder is not None:
        # NOTE: refused only when NVRTC is loaded already (something else in the process used
        # the library first); it then stays as it is, and nvrtc_info() says which it is.
        cdll.wyjit_nvrtc_set_wheel_dir(folder.encode())


def lib() -> ctypes.CDLL:
    """The loaded library (loaded and checked on first use)."""
    global _loaded
    loaded = _loaded
    if loaded is not None:  # NOTE: the launch path: no lock once loaded
        return loaded[0]
    with _lock:
        if _loaded is None:
            cdll, path = _load()
            _declare(cdll, path)
            _use_nvrtc_wheel(cdll)
            _loaded = (cdll, path)
        return _loaded[0]


def library_path() -> str:
    """Path (or name) libwyjit was loaded from."""
    lib()
    assert _loaded is not None
    return _loaded[1]


def check(status: int) -> None:
    """Raises the wyjit error of a non-zero status with the thread's last-error message."""
    if status != 0:
        message = lib().wyjit_last_error().decode("utf-8", "replace")
        raise _errors.error_for(status, message)


def text_out(function: Callable[..., int], *arguments: object) -> str:
    """Calls a C function that returns text (its last three parameters: buffer, size, length)
    and returns the text."""
    length = c_size_t(0)
    buffer = ctypes.create_string_buffer(256)
    if function(*arguments, buffer, len(buffer), ctypes.byref(length)) == 0:
        return buffer.value.decode()
    # Too small, or an error: ask for the length alone, which reports the error if there is one.
    check(function(*arguments, None, 0, ctypes.byref(length)))
    buffer = ctypes.create_string_buffer(length.value + 1)
    check(function(*arguments, buffer, len(buffer), None))
    return buffer.value.decode()
