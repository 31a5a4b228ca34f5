# SPDX-License-Identifier: Apache-2.0
"""Prepared launches: every check run once, then launches that only swap pointers.

An engine calls the same launch every step with new tensors of the same shapes. The one-shot
launch (wyjit.gdn_verify(...)) reads and checks every argument each time, which costs far more
host time than the kernel takes at small batches. A prepared launch runs all of the one-shot
checks (Python's and the library's) once, keeps the C argument struct, and per call:

- checks each array it is given against the one it replaces (dtype, shape, strides, device)
  and writes its pointer into the struct (the words found by _probe.py): in the library, in
  one call, for tensors whose framework has a DLPack exchange API (_dlswap.py: torch), else in
  Python (_slots.py);
- calls the C launch, whose guards still run on every launch (so nothing the library would
  refuse is ever launched: a new pointer can be null or misaligned), and which is the only
  ctypes call.

Arguments left out keep the pointer they had; sizes, strides, the scale, a TableStager cannot
change (prepare another launch for another batch size). A refused call changes nothing.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Optional

from . import _dlswap, _errors, _lib, _probe
from ._args import family_spec
from ._jit import Kernel, TableStager, stream_handle
from ._slots import Slot
from ._spec import Spec


# NOTE: the struct crosses as its address (an int) through a c_void_p prototype of the same C
# function: ctypes converts that faster than a byref through the declared POINTER(args) type
# (0.32 against 0.45 us a call, tools/bench/python_host_cost.py's machine).
_CHECK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_char_p, ctypes.c_void_p)
_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def _address(fn: Any) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


class Launch:
    """One launch as prepared launches need it: its C entry points (wyjit_launch_<entry>,
    wyjit_check_<entry>), its family, and the builder of its one-shot path."""

    __slots__ = ("entry", "family", "build")

    def __init__(self, entry: str, family: str, build: Callable[..., ctypes.Structure]):
        self.entry = entry
        self.family = family
        self.build = build


class PreparedLaunch:
    """A launch checked once; calling it launches with the pointers given swapped in.

    `prepared(stream=None, **arrays)`: the arrays (tensors or raw pointers, by the launch's
    keywords) replace those the launch was prepared with; each must have the dtype, shape,
    strides and device of the one it replaces. `stream` as in the one-shot launch (None: the
    legacy default stream; an int is the cheapest). `check(**arrays)` does the same without a
    GPU, running the library's check instead of the launch.

    NOTE: one thread at a time: a call writes the kept struct (as an engine's step loop does;
    prepare one launch per thread otherwise).
    """

    def __init__(self, launch: Launch, target: "Kernel | Spec | str", arguments: dict):
        function = f"prepare_{launch.entry}"
        self._kernel: Optional[Kernel] = target if isinstance(target, Kernel) else None
        spec = family_spec(target.spec if self._kernel is not None else target,
                           launch.family, function)
        self.spec = spec
        self.entry = launch.entry
        self._name = spec.name.encode()
        if "stream" in arguments:
            raise _errors.invalid_argument(
                f"{function}: stream is given when the prepared launch is called, not prepared"
            )
        lib = _lib.lib()
        args = launch.build(spec, **arguments)  # every Python check of the one-shot launch
        check_fn = getattr(lib, f"wyjit_check_{launch.entry}")
        _lib.check(check_fn(self._name, ctypes.byref(args)))  # and the library's
        self._check_fn = _CHECK(_address(check_fn))
        placed = _probe.place(lambda: launch.build(spec, **arguments), args)
        self._args = args
        self._ref = ctypes.addressof(args)  # valid while self._args lives
        self._words = (ctypes.c_uint64 * (ctypes.sizeof(args) // 8)).from_buffer(args)
        self._slots = {p.name: Slot(p) for p in placed}
        self._c = _dlswap.make(placed, self._slots, args,
                               _address(getattr(lib, "wyjit_array_swap_run", None)))
        self._fixed = tuple(n for n, v in arguments.items() if n not in self._slots)
        # What must still be open at every call: the kernel's manager, the stagers.
        self._owners: tuple = tuple(v for v in arguments.values() if isinstance(v, TableStager))
        if self._kernel is not None:
            self._owners = (self._kernel._jit, *self._owners)
            self._handle: Optional[int] = self._kernel.handle
            self._launch_fn = _LAUNCH(_address(getattr(lib, f"wyjit_launch_{launch.entry}")))
        else:
            self._handle = None
            self._launch_fn = None

    @property
    def args(self) -> ctypes.Structure:
        """The kept C argument struct (what the next launch passes, less the arrays given to
        it). Read it, do not change it."""
        return self._args

    @property
    def arrays(self) -> tuple[str, ...]:
        """The keywords a call can swap."""
        return tuple(self._slots)

    def __call__(self, stream: Any = None, **arrays: Any) -> None:
        """Launches on `stream` with `arrays` swapped in. Allocates, copies and synchronises
        nothing: it can be captured in a CUDA graph like the one-shot launch."""
        fn = self._launch_fn
        if fn is None:
            raise _errors.invalid_argument(
                f"this {self.entry} launch was prepared from a spec ({self.spec.name}): it can "
                "check() but not launch; prepare it from a Kernel"
            )
        for owner in self._owners:
            if owner._handle is None:
                owner._open()  # raises, naming what is closed
        if stream is not None and stream.__class__ is not int:
            stream = stream_handle(stream)
        if not arrays:
            _lib.check(fn(self._handle, self._ref, stream))
            return
        c = self._c
        count = self._c_swap(c, arrays) if c is not None else -1
        if count < 0:
            taken = self._swap(arrays)
        status = fn(self._handle, self._ref, stream)
        if status:
            if count < 0:
                self._restore(taken)
            else:
                c.restore(self._words, count)  # type: ignore[union-attr]
            _lib.check(status)

    def check(self, **arrays: Any) -> None:
        """Swaps `arrays` in as a call would and runs the library's check of the struct (no GPU
        needed); on failure the struct is left as it was."""
        c = self._c
        count = self._c_swap(c, arrays) if c is not None and arrays else -1
        if count < 0:
            taken = self._swap(arrays)
        status = self._check_fn(self._name, self._ref)
        if status:
            if count < 0:
                self._restore(taken)
            else:
                c.restore(self._words, count)  # type: ignore[union-attr]
            _lib.check(status)

    @staticmethod
    def _c_swap(c: "_dlswap.CSwap", arrays: dict) -> int:
        """Swaps `arrays` in the library when it can take them all: how many it took, or -1
        for the Python path (an array it does not know, of another class, or refused: Python
        then names what differs, or takes it)."""
        index, which, objects, cls = c.index, c.which, c.objects, c.cls
        n = 0
        for name, obj in arrays.items():
            i = index.get(name)
            if i is None or obj.__class__ is not cls:
                return -1
            which[n] = i
            objects[n] = id(obj)
            n += 1
        try:
            status = c.run(c.address, n)
        except Exception:  # noqa: BLE001 - the framework raised describing one: Python's turn
            return -1
        return n if status == 0 else -1

    def _swap(self, arrays: dict) -> list:
        """Writes the pointer of every array into the struct, each after its check; returns
        what it overwrote. A refused array undoes the ones before it, so it changes nothing."""
        slots, words = self._slots, self._words
        done: list = []
        try:
            for name, obj in arrays.items():
                s = slots.get(name)
                if s is None:
                    raise self._not_swappable(name)
                # NOTE: Slot.take's tensor test, inlined: this loop is the hot path.
                if (obj.__class__ is s.cls and obj.dtype == s.dtype and obj.shape == s.shape
                        and obj.stride() == s.strides and obj.is_cuda
                        and obj.get_device() == s.index):
                    ptr = obj.data_ptr()
                else:
                    ptr = s.take(obj)
                w = s.word
                done.append((s, words[w]))
                words[w] = ptr
                for i in s.more:
                    words[i] = ptr
        except BaseException:
            self._restore(done)
            raise
        return done

    def _restore(self, done: list) -> None:
        words = self._words
        for s, ptr in reversed(done):
            words[s.word] = ptr
            for i in s.more:
                words[i] = ptr

    def _not_swappable(self, name: str) -> _errors.InvalidArgumentError:
        swappable = ", ".join(self._slots) or "none"
        if name in self._fixed:
            return _errors.invalid_argument(
                f"{name} cannot change in a prepared {self.entry} launch, which swaps arrays "
                f"only ({swappable}): prepare another launch for another {name}"
            )
        return _errors.invalid_argument(
            f"{name} is not an array this prepared {self.entry} launch was given (it swaps "
            f"{swappable})"
        )

    def __repr__(self) -> str:
        return f"wyjit.PreparedLaunch({self.entry}, {self.spec.name!r})"
