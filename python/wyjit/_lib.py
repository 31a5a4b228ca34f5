# SPDX-License-Identifier: Apache-2.0
"""Loads libwyjit.so with ctypes and declares the C API of include/wyjit/wyjit.h."""

from __future__ import annotations

import ctypes
import os
import pathlib
import threading

from . import _errors

__all__ = ["lib", "library_path", "Spec", "JitOptions", "Counters", "GdnVerifyArgs"]

# The library version this package is written against (wyjit.h's WYJIT_VERSION_*).
VERSION = (0, 1, 0)

c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p
c_char_p = ctypes.c_char_p


class Spec(ctypes.Structure):
    """wyjit_spec."""

    _fields_ = [
        ("family", c_int32),
        ("k", c_int32),
        ("io", c_int32),
        ("state", c_int32),
        ("addressing", c_int32),
        ("layout", c_int32),
        ("dk", c_int32),
        ("dv", c_int32),
        ("l2norm_qk", c_int32),
        ("fused_gating", c_int32),
        ("width", c_int32),
        ("weight", c_int32),
        ("bias", c_int32),
        ("silu", c_int32),
        ("rollback", c_int32),
    ]


class JitOptions(ctypes.Structure):
    """wyjit_jit_options."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("cache_dir", c_char_p),
        ("read_only_dirs", ctypes.POINTER(c_char_p)),
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


class GdnVerifyArgs(ctypes.Structure):
    """wyjit_gdn_verify_args."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("batch", c_int32),
        ("num_k_heads", c_int32),
        ("num_v_heads", c_int32),
        ("k", c_int32),
        ("dk", c_int32),
        ("dv", c_int32),
        ("scale", ctypes.c_float),
        ("q", c_void_p),
        ("k_in", c_void_p),
        ("v", c_void_p),
        ("g", c_void_p),
        ("beta", c_void_p),
        ("a", c_void_p),
        ("b", c_void_p),
        ("a_log", c_void_p),
        ("dt_bias", c_void_p),
        ("out", c_void_p),
        ("qk_stride", c_int64),
        ("v_stride", c_int64),
        ("gb_stride", c_int64),
        ("o_stride", c_int64),
        ("state", c_void_p),
        ("state_seq_stride", c_int64),
        ("inter", c_void_p),
        ("inter_seq_stride", c_int64),
        ("inter_tok_stride", c_int64),
        ("tables", c_void_p),
        ("slab_stride", c_int64),
        ("slot_stride", c_int64),
        ("num_slots", c_int32),
        ("read_slot", c_void_p),
        ("write_slot", c_void_p),
        ("write_slot_stride", c_int64),
    ]


_status = c_int32
_P = ctypes.POINTER

# name: (restype, argtypes)
_FUNCTIONS = {
    "wyjit_status_name": (c_char_p, [_status]),
    "wyjit_last_error": (c_char_p, []),
    "wyjit_version": (ctypes.c_uint32, []),
    "wyjit_version_string": (c_char_p, []),
    "wyjit_set_log_level": (_status, [c_int32]),
    "wyjit_spec_init": (None, [_P(Spec)]),
    "wyjit_spec_parse": (_status, [c_char_p, _P(Spec)]),
    "wyjit_spec_format": (_status, [_P(Spec), ctypes.c_char_p, c_size_t, _P(c_size_t)]),
    "wyjit_spec_validate": (_status, [_P(Spec)]),
    "wyjit_jit_options_init": (None, [_P(JitOptions)]),
    "wyjit_jit_create": (_status, [_P(JitOptions), _P(c_void_p)]),
    "wyjit_jit_destroy": (None, [c_void_p]),
    "wyjit_jit_cache_dir": (c_char_p, [c_void_p]),
    "wyjit_counters_init": (None, [_P(Counters)]),
    "wyjit_jit_get_counters": (_status, [c_void_p, _P(Counters)]),
    "wyjit_precompile": (_status, [c_void_p, _P(Spec), c_size_t, c_char_p, c_int32, _P(_status)]),
    "wyjit_jit_get_kernel": (_status, [c_void_p, _P(Spec), _P(c_void_p)]),
    "wyjit_jit_get_kernel_by_name": (_status, [c_void_p, c_char_p, _P(c_void_p)]),
    "wyjit_kernel_get_spec": (_status, [c_void_p, _P(Spec)]),
    "wyjit_gdn_verify_args_init": (None, [_P(GdnVerifyArgs)]),
    "wyjit_check_gdn_verify": (_status, [_P(Spec), _P(GdnVerifyArgs)]),
    "wyjit_launch_gdn_verify": (_status, [c_void_p, _P(GdnVerifyArgs), c_void_p]),
    "wyjit_table_stager_create": (_status, [c_int32, c_int32, _P(c_void_p)]),
    "wyjit_table_stager_destroy": (None, [c_void_p]),
    "wyjit_table_stager_stage": (_status, [c_void_p, _P(c_void_p), _P(_P(c_void_p)), c_int32, c_void_p]),
    "wyjit_table_stager_tables": (c_void_p, [c_void_p]),
    "wyjit_table_stager_slab_stride": (c_int64, [c_void_p]),
    "wyjit_device_count": (_status, [_P(c_int32)]),
    "wyjit_device_unavailable_reason": (c_char_p, []),
    "wyjit_device_make_current": (_status, [c_int32]),
    "wyjit_device_synchronize": (_status, []),
    "wyjit_mem_alloc": (_status, [c_size_t, _P(c_void_p)]),
    "wyjit_mem_free": (_status, [c_void_p]),
    "wyjit_memcpy_htod": (_status, [c_void_p, c_void_p, c_size_t]),
    "wyjit_memcpy_dtoh": (_status, [c_void_p, c_void_p, c_size_t]),
}


def _candidates() -> list[pathlib.Path]:
    """Where libwyjit.so is looked for, in order (WYJIT_LIBRARY is handled separately)."""
    here = pathlib.Path(__file__).resolve().parent
    found = sorted(here.glob("libwyjit.so*"))
    # NOTE: only build/ (tools/setup-deps.sh's tree): other trees may be sanitizer builds, which
    # abort a process they are loaded into. Set WYJIT_LIBRARY to use one of those.
    lib = here.parent.parent / "build" / "lib" / "libwyjit.so"  # python/wyjit -> the repository
    if lib.exists():
        found.append(lib)
    return found


_lock = threading.Lock()
_loaded: tuple[ctypes.CDLL, str] | None = None


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


def _declare(cdll: ctypes.CDLL, path: str) -> None:
    for name, (restype, argtypes) in _FUNCTIONS.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError:
            raise _errors.error_for(
                _errors.INTERNAL, f"{path} has no {name}: it is not the libwyjit this package needs"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes
    got = cdll.wyjit_version()
    major, minor = got // 1000000, got // 1000 % 1000
    if (major, minor) != VERSION[:2]:
        raise _errors.error_for(
            _errors.INTERNAL,
            f"{path} is wyjit {major}.{minor}.{got % 1000}; this package needs "
            f"{VERSION[0]}.{VERSION[1]}.x",
        )


def lib() -> ctypes.CDLL:
    """The loaded library (loaded and checked on first use)."""
    global _loaded
    with _lock:
        if _loaded is None:
            cdll, path = _load()
            _declare(cdll, path)
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
