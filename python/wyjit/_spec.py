# SPDX-License-Identifier: Apache-2.0
"""Spec: every compile-time choice of a kernel variant, with its canonical name."""

from __future__ import annotations

import ctypes
import dataclasses

from . import _errors, _lib

_FAMILIES = {"gdn_verify": 0, "conv1d_update": 1}
_DTYPES = {"f32": 0, "f16": 1, "bf16": 2}
_ADDRESSING = {"strided": 0, "table": 1, "slot": 2}
_LAYOUTS = {"vk": 0, "kv": 1}
_ROLLBACKS = {"intermediate": 0, "window": 1}


def _code(field: str, value: object, table: dict[str, int]) -> int:
    if value not in table:
        raise _errors.InvalidSpecError(
            _errors.INVALID_SPEC,
            f"Spec.{field} is {value!r}, allowed: {', '.join(table)}",
        )
    return table[value]


def _name(field: str, code: int, table: dict[str, int]) -> str:
    for name, value in table.items():
        if value == code:
            return name
    raise _errors.InternalError(_errors.INTERNAL, f"the library returned {field} = {code}")


@dataclasses.dataclass(frozen=True)
class Spec:
    """One kernel variant (mirrors wyjit::KernelSpec). `Spec.parse(name)` and `spec.name`
    convert to and from the canonical name, e.g. "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128".
    Each family uses some of the fields; the others keep their defaults.
    """

    family: str = "gdn_verify"
    k: int = 4  #: tokens verified per sequence, 1..32
    io: str = "bf16"  #: q, k, v, out dtype: f32, f16, bf16
    state: str = "f32"  #: state dtype: f32, f16, bf16
    addressing: str = "strided"  #: strided, table, slot
    layout: str = "vk"  #: vk ([dv][dk], dk contiguous) or kv ([dk][dv])
    dk: int = 128
    dv: int = 128
    l2norm_qk: bool = False
    fused_gating: bool = False
    width: int = 4  #: conv1d_update: filter width W, 2..8
    weight: str = "f32"  #: conv1d_update: weight and bias dtype
    bias: bool = False  #: conv1d_update: add a per-channel bias
    silu: bool = False  #: conv1d_update: SiLU on the output
    rollback: str = "intermediate"  #: conv1d_update: intermediate or window

    @staticmethod
    def parse(name: str) -> "Spec":
        c = _lib.Spec()
        _lib.check(_lib.lib().wyjit_spec_parse(name.encode(), ctypes.byref(c)))
        return Spec._from_c(c)

    @property
    def name(self) -> str:
        """The canonical name."""
        c = self._to_c()
        length = ctypes.c_size_t(0)
        f = _lib.lib().wyjit_spec_format
        _lib.check(f(ctypes.byref(c), None, 0, ctypes.byref(length)))
        buffer = ctypes.create_string_buffer(length.value + 1)
        _lib.check(f(ctypes.byref(c), buffer, len(buffer), None))
        return buffer.value.decode()

    def validate(self) -> None:
        """Raises InvalidSpecError when this build does not support the variant."""
        c = self._to_c()
        _lib.check(_lib.lib().wyjit_spec_validate(ctypes.byref(c)))

    def __str__(self) -> str:
        return self.name

    def _to_c(self) -> _lib.Spec:
        for field in _INTS:
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool):
                raise _errors.InvalidSpecError(
                    _errors.INVALID_SPEC, f"Spec.{field} is {value!r}, must be an int"
                )
            if not -(2**31) <= value < 2**31:
                raise _errors.InvalidSpecError(
                    _errors.INVALID_SPEC, f"Spec.{field} is {value}, out of the int32 range"
                )
        for field in _BOOLS:
            if not isinstance(getattr(self, field), bool):
                raise _errors.InvalidSpecError(
                    _errors.INVALID_SPEC,
                    f"Spec.{field} is {getattr(self, field)!r}, must be True or False",
                )
        return _lib.Spec(**{
            field: _code(field, getattr(self, field), _ENUMS[field]) if field in _ENUMS
            else int(getattr(self, field))
            for field in _FIELDS
        })

    @staticmethod
    def _from_c(c: _lib.Spec) -> "Spec":
        return Spec(**{
            field: _name(field, getattr(c, field), _ENUMS[field]) if field in _ENUMS
            else bool(getattr(c, field)) if field in _BOOLS
            else getattr(c, field)
            for field in _FIELDS
        })


# How each field crosses the C API (wyjit_spec holds every one as an int32): an enumeration by
# name, an int, or a bool.
_ENUMS = {"family": _FAMILIES, "io": _DTYPES, "state": _DTYPES, "addressing": _ADDRESSING,
          "layout": _LAYOUTS, "weight": _DTYPES, "rollback": _ROLLBACKS}
_INTS = ("k", "dk", "dv", "width")
_BOOLS = ("l2norm_qk", "fused_gating", "bias", "silu")
_FIELDS = tuple(f.name for f in dataclasses.fields(Spec))
assert set(_FIELDS) == {name for name, _ in _lib.Spec._fields_} == {*_ENUMS, *_INTS, *_BOOLS}


def as_spec(spec: "Spec | str") -> Spec:
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, str):
        return Spec.parse(spec)
    raise _errors.invalid_argument(f"spec must be a wyjit.Spec or a canonical name, got {spec!r}")
