# SPDX-License-Identifier: Apache-2.0
"""What every family's launch shares in Python: its argument struct made from the library's
defaults, the spec checked to be of the family, sizes and shared strides."""

from __future__ import annotations

import ctypes
from typing import Any, Optional, TypeVar

from . import _errors, _lib
from ._spec import Spec, as_spec

S = TypeVar("S", bound=ctypes.Structure)

_templates: dict[type, bytes] = {}


def fresh(struct: type[S], init: str) -> S:
    """A launch argument struct holding the library's defaults (its *_init), read once: a launch
    then copies bytes instead of calling into the library."""
    template = _templates.get(struct)
    if template is None:
        c = struct()
        getattr(_lib.lib(), init)(ctypes.byref(c))
        template = _templates.setdefault(struct, bytes(c))
    return struct.from_buffer_copy(template)


def family_spec(spec: "Spec | str", family: str, function: str) -> Spec:
    """`spec` as a Spec, which must be of `family`."""
    s = as_spec(spec)
    if s.family != family:
        raise _errors.invalid_argument(
            f"{function}: {s.name} is a {s.family} variant, not {family}"
        )
    return s


def positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value >= 2**31:
        raise _errors.invalid_argument(f"{name} is {value!r}, must be a positive int")
    return value


def shared(name: str, strides: dict[str, Optional[int]]) -> Optional[int]:
    """The one stride several arrays share (C has one field for them)."""
    values = {v for v in strides.values() if v is not None}
    if len(values) > 1:
        listed = ", ".join(f"{n} {v}" for n, v in strides.items())
        raise _errors.invalid_argument(f"{listed}: these arrays must share one {name}")
    return values.pop() if values else None
