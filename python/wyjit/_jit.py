# SPDX-License-Identifier: Apache-2.0
"""Jit (the manager), Kernel, TableStager and the device helpers."""

from __future__ import annotations

import ctypes
import os
from typing import Any, Iterable, Optional, Sequence

from . import _errors, _lib
from ._spec import Spec, as_spec
from ._tensors import array

_LOG_LEVELS = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "warning": 3, "error": 4,
               "critical": 5, "off": 6}


def _log_level(level: Any) -> int:
    if level is None:
        return -1
    if isinstance(level, str) and level.lower() in _LOG_LEVELS:
        return _LOG_LEVELS[level.lower()]
    if isinstance(level, int) and not isinstance(level, bool) and 0 <= level <= 6:
        return level
    raise _errors.invalid_argument(
        f"log_level is {level!r}, allowed: None, 0..6 or one of {', '.join(_LOG_LEVELS)}"
    )


def set_log_level(level: "str | int") -> None:
    """Sets the process-wide "wyjit" logger's level ("trace" .. "off")."""
    _lib.check(_lib.lib().wyjit_set_log_level(_log_level(level)))


def stream_handle(stream: Any) -> Optional[int]:
    """A CUstream from None (the legacy default stream), an int, or an object with a
    `cuda_stream` attribute (torch.cuda.Stream)."""
    if stream is None:
        return None
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream or None
    handle = getattr(stream, "cuda_stream", None)
    if isinstance(handle, int):
        return handle or None
    raise _errors.invalid_argument(
        f"stream is a {type(stream).__name__}: pass None, a CUstream (int) or a torch.cuda.Stream"
    )


class Kernel:
    """A loaded kernel variant; valid while its Jit is open."""

    def __init__(self, handle: int, spec: Spec, jit: "Jit"):
        self._handle = handle
        self.spec = spec
        self._jit = jit  # keeps the manager (which owns the handle) alive

    @property
    def name(self) -> str:
        """The variant's canonical name."""
        return self.spec.name

    @property
    def handle(self) -> int:
        if self._jit._handle is None:
            raise _errors.invalid_argument(f"the Jit of kernel {self.spec.name} is closed")
        return self._handle

    def __repr__(self) -> str:
        return f"wyjit.Kernel({self.spec.name!r})"


class _Owned:
    """An object of the library owned through a handle (Jit, TableStager): closed by close(),
    a with block, or the finaliser; a closed one refuses every use."""

    _handle: Optional[int] = None
    _destroy = ""  # the C function that frees the handle

    def close(self) -> None:
        if self._handle is not None:
            getattr(_lib.lib(), self._destroy)(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def _open(self) -> int:
        if self._handle is None:
            raise _errors.invalid_argument(f"this {type(self).__name__} is closed")
        return self._handle


class Jit(_Owned):
    """The manager: stamps, compiles (NVRTC), caches on disk and loads kernel variants.

    Every argument left as None comes from the environment (WYJIT_CACHE_DIR,
    WYJIT_CACHE_RO_DIRS, WYJIT_NO_JIT, WYJIT_LOG_LEVEL) as in the C++ JitOptions::from_env.
    """

    def __init__(
        self,
        cache_dir: "str | os.PathLike[str] | None" = None,
        *,
        read_only_dirs: "Iterable[str | os.PathLike[str]] | None" = None,
        no_jit: Optional[bool] = None,
        disk_cache: bool = True,
        log_level: "str | int | None" = None,
    ):
        self._handle: Optional[int] = None
        lib = _lib.lib()
        options = _lib.JitOptions()
        lib.wyjit_jit_options_init(ctypes.byref(options))
        keep = []
        if cache_dir is not None:
            options.cache_dir = os.fsencode(cache_dir)
        if read_only_dirs is not None:
            dirs = [os.fsencode(d) for d in read_only_dirs]
            array_type = ctypes.c_char_p * max(1, len(dirs))
            keep.append(array_type(*dirs))
            options.read_only_dirs = ctypes.cast(keep[-1], ctypes.POINTER(ctypes.c_char_p))
            options.num_read_only_dirs = len(dirs)
        if no_jit is not None:
            options.no_jit = 1 if no_jit else 0
        options.disk_cache = 1 if disk_cache else 0
        options.log_level = _log_level(log_level)
        handle = ctypes.c_void_p()
        _lib.check(lib.wyjit_jit_create(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle.value

    _destroy = "wyjit_jit_destroy"  # close() destroys the manager; its kernels become invalid

    @property
    def cache_dir(self) -> str:
        """The writable cache root ("" when the disk cache is off)."""
        return os.fsdecode(_lib.lib().wyjit_jit_cache_dir(self._open()))

    def counters(self) -> dict:
        """Counters since the manager was created, as a dict."""
        c = _lib.Counters()
        _lib.lib().wyjit_counters_init(ctypes.byref(c))
        _lib.check(_lib.lib().wyjit_jit_get_counters(self._open(), ctypes.byref(c)))
        return {name: getattr(c, name) for name, _ in _lib.Counters._fields_ if name != "struct_size"}

    def precompile(self, specs: "Iterable[Spec | str]", target: str = "sm_90", jobs: int = 0) -> None:
        """Compiles every variant (a Spec or a canonical name) for `target` (sm_XX, sm_XXa or
        compute_XX) into the caches, on `jobs` threads (0: all cores). Needs no GPU. Every name
        is checked before anything is compiled; raises with every failure listed."""
        names = [_name_of(f"specs[{i}]", s) for i, s in enumerate(specs)]
        c_names = (ctypes.c_char_p * max(1, len(names)))(*names)
        _lib.check(
            _lib.lib().wyjit_precompile(
                self._open(), c_names, len(names), target.encode(), int(jobs), None
            )
        )

    def kernel(self, spec: "Spec | str") -> Kernel:
        """The kernel of `spec` (a Spec or a canonical name) on the current CUDA context's
        device (torch makes one current once it has touched the GPU), compiling or loading it
        as needed. Call it once per variant and device, before capturing a graph."""
        s = as_spec(spec)
        handle = ctypes.c_void_p()
        _lib.check(_lib.lib().wyjit_jit_get_kernel(self._open(), s.name.encode(),
                                                   ctypes.byref(handle)))
        return Kernel(int(handle.value or 0), s, self)


def _name_of(what: str, spec: "Spec | str") -> bytes:
    """A variant's name for the C API; a name is passed as given, for the library to check."""
    if isinstance(spec, Spec):
        return spec.name.encode()
    if isinstance(spec, str):
        return spec.encode()
    raise _errors.invalid_argument(f"{what} is {spec!r}: pass a wyjit.Spec or a canonical name")


def _entry(name: str, obj: Any) -> Optional[int]:
    """A table entry: a device address, or None for None and 0 (a null entry: padding)."""
    a = array(name, obj)
    return None if a is None or a.ptr == 0 else a.ptr


class TableStager(_Owned):
    """The fixed device buffer of table addressing (wyjit::TableStager), allocated in the
    current CUDA context, for launches that write `writes` tiles a sequence (each family's
    launcher documents its count: K for gdn_verify). Pass it as `tables=`; stage()
    new pointers between launches (or graph replays) on the launch stream."""

    _destroy = "wyjit_table_stager_destroy"

    def __init__(self, writes: int, max_batch: int):
        self._handle: Optional[int] = None
        handle = ctypes.c_void_p()
        _lib.check(_lib.lib().wyjit_table_stager_create(int(writes), int(max_batch),
                                                        ctypes.byref(handle)))
        self._handle = handle.value
        self.writes = int(writes)
        self.max_batch = int(max_batch)
        self._staged: list = []
        # NOTE: the buffer never moves (that is its point), so a launch reads these two numbers
        # here instead of asking the library each time.
        self._tables = int(_lib.lib().wyjit_table_stager_tables(self._handle) or 0)
        self._slab_stride = int(_lib.lib().wyjit_table_stager_slab_stride(self._handle))

    @property
    def tables(self) -> int:
        """Device address of the tables."""
        self._open()
        return self._tables

    @property
    def slab_stride(self) -> int:
        """Entries per slab."""
        self._open()
        return self._slab_stride

    def stage(self, states: Sequence[Any], inter: Optional[Sequence[Sequence[Any]]] = None,
              stream: Any = None) -> None:
        """Stages S_b = states[b] and write t of sequence b = inter[t][b] (t = 0..writes-2) for
        b < len(states); later entries become null (padding). Pointers are ints or tensors
        (data_ptr()).

        None (or 0) is a null entry, allowed anywhere: states[b] None pads sequence b (the
        kernel skips it whole; its inter entries are ignored), inter[t][b] None skips writing
        that tile of a live sequence. `inter` is needed when writes > 1 (rows of None skip them
        all)."""
        batch = len(states)
        row_type = ctypes.c_void_p * max(1, batch)
        c_states = row_type(*[_entry(f"states[{b}]", s) for b, s in enumerate(states)])
        c_inter = None
        rows = []
        if inter is not None:
            if len(inter) != self.writes - 1:
                raise _errors.invalid_argument(
                    f"inter has {len(inter)} rows, a stager for {self.writes} writes a sequence "
                    f"needs writes-1 = {self.writes - 1}"
                )
            for t, row in enumerate(inter):
                if len(row) != batch:
                    raise _errors.invalid_argument(
                        f"inter[{t}] has {len(row)} pointers, states has {batch}"
                    )
                rows.append(row_type(*[_entry(f"inter[{t}][{b}]", p) for b, p in enumerate(row)]))
            if rows:
                c_inter = (ctypes.POINTER(ctypes.c_void_p) * len(rows))(
                    *[ctypes.cast(r, ctypes.POINTER(ctypes.c_void_p)) for r in rows]
                )
        _lib.check(
            _lib.lib().wyjit_table_stager_stage(
                self._open(), c_states, c_inter, batch, stream_handle(stream)
            )
        )
        # NOTE: the host arrays must outlive the asynchronous copy: keep them until the next stage.
        self._staged = [c_states, c_inter, rows]


def device_count() -> int:
    """CUDA devices visible to the driver; 0 without a driver or device."""
    n = ctypes.c_int32(0)
    _lib.check(_lib.lib().wyjit_device_count(ctypes.byref(n)))
    return n.value


def device_unavailable_reason() -> str:
    """Why device_count() is 0 ("" when a device is usable)."""
    return _lib.lib().wyjit_device_unavailable_reason().decode("utf-8", "replace")


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.lib().wyjit_version_string().decode()
