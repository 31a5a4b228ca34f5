# SPDX-License-Identifier: Apache-2.0
"""One pointer argument of a prepared launch: what a new value must match to take its place.

A prepared launch ran every check once, on the arrays it was given. A new array that has the
same dtype, shape, strides and device as the one it replaces would pass the same checks and
give the same struct except for its pointer, so that is all that is checked (the library's
guards still run on every launch, and check what depends on the pointer itself: null,
alignment).

NOTE: the fast test reads what a torch tensor has cheapest (measured in
tools/bench/python_host_cost.py: x.is_cuda and x.get_device() cost a third of x.device, which
builds a torch.device each time); anything that fails it goes through _tensors.array and a
field-by-field comparison, which either names what differs or accepts it (a subclass, a
stand-in with the same description).
"""

from __future__ import annotations

from typing import Any, Optional

from ._errors import invalid_argument
from ._probe import Placed
from ._tensors import Array, array

_FAST = ("data_ptr", "dtype", "shape", "stride", "is_cuda", "get_device")


def _kind(a: Array) -> str:
    return "a tensor" if a.described else "a raw pointer"


def _text(value: Any) -> str:
    return str(list(value)) if isinstance(value, tuple) else str(value)


class Slot:
    """Checks a new value for one argument and returns its pointer (take)."""

    __slots__ = ("name", "word", "more", "array", "cls", "dtype", "shape", "strides", "index",
                 "raw")

    def __init__(self, placed: Placed):
        self.name = placed.name
        self.word = placed.words[0]  # the struct's 8-byte word that holds the pointer
        self.more = placed.words[1:]  # any other (none in today's launches)
        self.array = placed.array
        obj = placed.obj
        self.raw = obj.__class__ is int
        self.cls: Optional[type] = None  # the class the fast test applies to, if any
        if placed.array.described and all(hasattr(obj, n) for n in _FAST):
            index = obj.get_device()
            if obj.is_cuda and isinstance(index, int):
                self.cls = obj.__class__
                self.dtype = obj.dtype
                self.shape = tuple(obj.shape)
                self.strides = tuple(obj.stride())
                self.index = index

    def take(self, obj: Any) -> int:
        """The pointer of `obj` if it may replace this argument; else InvalidArgumentError
        naming the argument, what it has and what the launch was prepared with.

        NOTE: PreparedLaunch._swap inlines the tensor test (a method call per array is a tenth
        of the cost of a swap); this is the rest of it."""
        if obj.__class__ is self.cls:
            if (obj.dtype == self.dtype and obj.shape == self.shape
                    and obj.stride() == self.strides and obj.is_cuda
                    and obj.get_device() == self.index):
                return obj.data_ptr()
        elif self.raw and obj.__class__ is int and 0 <= obj < 2**64:
            return obj
        return self.compare(obj)

    def compare(self, obj: Any) -> int:
        """take() without the shortcut: the one-shot path's reading of `obj`, then every field
        of its description against the prepared one."""
        name, want = self.name, self.array
        got = array(name, obj)  # refuses what a one-shot launch refuses, in its words
        if got is None:
            raise invalid_argument(
                f"{name} is None: a prepared launch keeps every array it was prepared with "
                f"(leave {name} out to keep its pointer)"
            )
        if got.described != want.described:
            raise invalid_argument(
                f"{name} is {_kind(got)}, the launch was prepared with {_kind(want)} for it: "
                "pass the same kind"
            )
        for what, have, prepared in (("dtype", got.dtype, want.dtype),
                                     ("shape", got.shape, want.shape),
                                     ("strides", got.strides, want.strides),
                                     ("device", got.device, want.device)):
            if have != prepared:
                said = (f"is on {have}, the launch was prepared on {prepared}" if what == "device"
                        else f"has {what} {_text(have)}, the launch was prepared with "
                        f"{_text(prepared)}")
                raise invalid_argument(
                    f"{name} {said}: a prepared launch swaps pointers only (prepare another "
                    "launch for these arrays)"
                )
        return got.ptr
