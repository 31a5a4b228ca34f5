# SPDX-License-Identifier: Apache-2.0
"""Where each pointer argument of a launch lands in its C argument struct.

A prepared launch (_prepared.py) swaps pointers in a kept struct, so it must know which 8-byte
words of the struct hold each argument's pointer (q -> args.q; state -> args.states.state;
log_slot -> args.log.read_slot ...). The family's builder is the one place that knows, so the
struct is built a second time while _tensors.array hands the builder a marker in place of
every pointer it reads: the words that differ from the real build are the argument's words.

NOTE: no list of fields per launch is kept here: it would be a second copy of what the
builders do, kept in sync by hand. The placement checks itself instead: every word that
differs between the two builds must hold one argument's marker in one and that argument's real
pointer in the other, or the prepare fails as an internal error.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from typing import Any, Callable

from . import _errors, _tensors
from ._tensors import Array

# NOTE: >= 2**63, so no size or stride a builder stores (int64 >= 0, int32) can equal a marker.
_MARKER = 0xC0DE_0000_0000_0000
_STEP = 256  # markers stay 256-byte aligned, like any device allocation

_lock = threading.Lock()  # one placement at a time: _tensors.probe is process-wide


class _Recorder:
    """What _tensors.array calls while a placement runs: records each array argument and
    returns it with its marker as pointer. Another thread's launches pass through untouched."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.arrays: dict[str, tuple[Any, Array, int]] = {}  # name -> (object, array, marker)

    def seen(self, a: Array, obj: Any) -> Array:
        if threading.get_ident() != self.thread:
            return a
        entry = self.arrays.get(a.name)
        if entry is None:
            entry = (obj, a, _MARKER + _STEP * len(self.arrays))
            self.arrays[a.name] = entry
        return dataclasses.replace(a, ptr=entry[2])


@dataclasses.dataclass(frozen=True)
class Placed:
    """One pointer argument of a prepared launch."""

    name: str  #: the launch's keyword
    obj: Any  #: what was passed (a tensor, a raw pointer...)
    array: Array  #: as the builder read it
    words: tuple[int, ...]  #: the struct's 8-byte words that hold its pointer


def _words(struct: ctypes.Structure) -> "ctypes.Array[ctypes.c_uint64]":
    size = ctypes.sizeof(struct)
    if size % 8:
        raise _errors.InternalError(
            _errors.INTERNAL, f"{type(struct).__name__} is {size} bytes, not whole 8-byte words"
        )
    return (ctypes.c_uint64 * (size // 8)).from_buffer_copy(struct)


def place(build: Callable[[], ctypes.Structure], real: ctypes.Structure) -> list[Placed]:
    """The pointer arguments of `real` (what build() returned for the real arguments) and
    their words, from one more build() with markers."""
    recorder = _Recorder()
    with _lock:
        _tensors.probe = recorder
        try:
            marked = build()
        finally:
            _tensors.probe = None
    got, mark = _words(real), _words(marked)
    by_marker = {m: name for name, (_, _, m) in recorder.arrays.items()}
    found: dict[str, list[int]] = {name: [] for name in recorder.arrays}
    for i, (g, m) in enumerate(zip(got, mark)):
        if g == m:
            continue
        name = by_marker.get(m)
        if name is None or g != recorder.arrays[name][1].ptr:
            raise _errors.InternalError(
                _errors.INTERNAL,
                f"{type(real).__name__}: byte {8 * i} differs between two builds of the same "
                "arguments and holds no argument's pointer (a builder that reads something "
                "besides shapes and strides?)",
            )
        found[name].append(i)
    placed = []
    for name, (obj, a, _) in recorder.arrays.items():
        if not found[name]:
            raise _errors.InternalError(
                _errors.INTERNAL, f"{type(real).__name__}: {name} is read but its pointer is in "
                "no field (a builder bug)"
            )
        placed.append(Placed(name, obj, a, tuple(found[name])))
    return placed
