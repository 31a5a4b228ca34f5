# SPDX-License-Identifier: Apache-2.0
"""Spec: one kernel variant, held as its canonical name, with its fields read from the library.

Python keeps no table of families or fields: the library describes them (wyjit_family_field),
builds names from field values (wyjit_spec_build) and reads a name's fields (wyjit_spec_field).
Each family's description and each spec are read once and cached, so that a launch never asks
the library about a spec again.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from typing import Any, Mapping, Optional, Union

from . import _errors, _lib

Value = Union[int, str, bool]

_KINDS = {_lib.FIELD_INTEGER: "integer", _lib.FIELD_CHOICE: "choice", _lib.FIELD_FLAG: "flag"}


def _text(p: Optional[bytes]) -> Optional[str]:
    return None if p is None else p.decode()


@dataclasses.dataclass(frozen=True)
class FieldInfo:
    """One field of a family's spec, as the library describes it (wyjit_field_info)."""

    name: str  #: identifier: "k", "io" (Spec.make's keyword, Spec's attribute)
    label: str  #: as messages name it: "K", "io dtype"
    kind: str  #: "integer", "choice" or "flag"
    spelling: str  #: how the canonical name spells it: a prefix ("k", "io_"), or a flag's word
    choices: tuple[str, ...]  #: choice: the allowed names
    min: int  #: integer: the smallest allowed value (when `allowed` is empty)
    max: int  #: integer: the largest allowed value (when `allowed` is empty)
    allowed: tuple[int, ...]  #: integer: the allowed values, when not a range
    default: Value  #: the value when not given (int, choice name, or bool)
    standard: Optional[str]  #: values in the standard matrix, as `--set` spells them
    merged_spelling: Optional[str]  #: integer: prefix when equal to the next field ("d")
    same_as: Optional[str]  #: choice: a field whose name stands for its value ("io")
    doc: str  #: one line

    @staticmethod
    def _from_c(c: _lib.FieldInfo) -> "FieldInfo":
        kind = _KINDS.get(c.kind)
        if kind is None:
            raise _errors.InternalError(
                _errors.INTERNAL, f"field {c.name!r} has kind {c.kind}, unknown to this package"
            )
        choices = tuple(c.choices[i].decode() for i in range(c.num_choices))
        default: Value = c.default_value
        if kind == "choice":
            default = choices[c.default_value]
        elif kind == "flag":
            default = bool(c.default_value)
        return FieldInfo(
            name=c.name.decode(),
            label=c.label.decode(),
            kind=kind,
            spelling=c.spelling.decode(),
            choices=choices,
            min=c.min,
            max=c.max,
            allowed=tuple(c.allowed[i] for i in range(c.num_allowed)),
            default=default,
            standard=_text(c.standard),
            merged_spelling=_text(c.merged_spelling),
            same_as=_text(c.same_as),
            doc=_text(c.doc) or "",
        )

    def parse(self, text: str) -> Value:
        """The Python value of this field from the library's text ("4", "bf16", "on")."""
        if self.kind == "integer":
            return int(text)
        if self.kind == "flag":
            return text == "on"
        return text

    def format(self, value: Any) -> str:
        """The library's text of a Python value; refuses a value of the wrong Python type (the
        library checks the value itself)."""
        if self.kind == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                raise _errors.InvalidSpecError(
                    _errors.INVALID_SPEC, f"Spec.{self.name} is {value!r}, must be an int"
                )
            return str(value)
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise _errors.InvalidSpecError(
                    _errors.INVALID_SPEC, f"Spec.{self.name} is {value!r}, must be True or False"
                )
            return "on" if value else "off"
        if not isinstance(value, str):
            raise _errors.InvalidSpecError(
                _errors.INVALID_SPEC, f"Spec.{self.name} is {value!r}, must be a str"
            )
        return value


# ---- what the library says, read once --------------------------------------------------------

_lock = threading.Lock()
_families: Optional[tuple[str, ...]] = None
_fields: dict[str, tuple[FieldInfo, ...]] = {}
_specs: dict[str, "Spec"] = {}


def _family_names() -> tuple[str, ...]:
    global _families
    if _families is None:
        lib = _lib.lib()
        count = lib.wyjit_family_count()
        _families = tuple(lib.wyjit_family_name(i).decode() for i in range(count))
    return _families


def _family_fields(family: str) -> tuple[FieldInfo, ...]:
    fields = _fields.get(family)
    if fields is None:
        lib = _lib.lib()
        count = ctypes.c_size_t(0)
        _lib.check(lib.wyjit_family_field_count(family.encode(), ctypes.byref(count)))
        read = []
        for i in range(count.value):
            c = _lib.FieldInfo(struct_size=ctypes.sizeof(_lib.FieldInfo))
            _lib.check(lib.wyjit_family_field(family.encode(), i, ctypes.byref(c)))
            read.append(FieldInfo._from_c(c))
        fields = tuple(read)
        with _lock:
            _fields.setdefault(family, fields)
    return fields


class Spec:
    """One kernel variant: its canonical name (e.g. "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128")
    and its fields, typed by their kind (int, str or bool) and readable as attributes
    (`spec.k`, `spec.io`, `spec.l2norm`) or as a dict (`spec.fields`).

    Build one with Spec.parse(name) or Spec.make(family, **fields); a Spec is always valid.
    Specs compare and hash by name. Which fields a family has is the library's to say:
    Spec.families() and Spec.field_info(family).
    """

    __slots__ = ("name", "family", "_values", "__dict__")

    # NOTE: a field whose name is one of these is reachable only through spec.fields (an
    # attribute of that name would hide the method).
    _RESERVED = frozenset(("name", "family", "fields", "parse", "make", "families", "field_info",
                           "replace"))

    name: str
    family: str
    _values: dict[str, Value]

    def __init__(self, name: str):
        """Reads the variant `name` (a canonical name) from the library; prefer Spec.parse,
        which caches."""
        if not isinstance(name, str):
            raise _errors.InvalidSpecError(
                _errors.INVALID_SPEC, f"a spec name must be a str, got {name!r}"
            )
        lib = _lib.lib()
        encoded = name.encode()
        _lib.check(lib.wyjit_spec_validate(encoded))
        family = _lib.text_out(lib.wyjit_spec_field, encoded, b"family")
        values = {
            f.name: f.parse(_lib.text_out(lib.wyjit_spec_field, encoded, f.name.encode()))
            for f in _family_fields(family)
        }
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "_values", values)
        for field, value in values.items():
            if field not in Spec._RESERVED:
                self.__dict__[field] = value

    @staticmethod
    def parse(name: str) -> "Spec":
        """The variant of canonical name `name`; raises InvalidSpecError (the library's message:
        the field, its value, what is allowed) for anything else."""
        spec = _specs.get(name) if isinstance(name, str) else None
        if spec is None:
            spec = Spec(name)
            with _lock:
                spec = _specs.setdefault(name, spec)
        return spec

    @staticmethod
    def make(family: str, **fields: Value) -> "Spec":
        """The variant of `family` with the given fields (Python values: int, str, bool) and
        every other field at its default. Raises InvalidSpecError naming a bad field or value."""
        if not isinstance(family, str):
            raise _errors.InvalidSpecError(
                _errors.INVALID_SPEC, f"a family name must be a str, got {family!r}"
            )
        known = {f.name: f for f in _family_fields(family)}
        names, texts = [], []
        for field, value in fields.items():
            info = known.get(field)
            # NOTE: an unknown field goes to the library as text, so that its message (which
            # lists the family's fields) is the one the user sees.
            text = info.format(value) if info is not None else _generic_text(value)
            names.append(field.encode())
            texts.append(text.encode())
        array = ctypes.c_char_p * max(1, len(names))
        name = _lib.text_out(_lib.lib().wyjit_spec_build, family.encode(), array(*names),
                             array(*texts), len(names))
        return Spec.parse(name)

    def replace(self, **fields: Value) -> "Spec":
        """This variant with the given fields changed."""
        return Spec.make(self.family, **{**self._values, **fields})

    @property
    def fields(self) -> dict[str, Value]:
        """Every field of the variant's family and its value (a new dict)."""
        return dict(self._values)

    @staticmethod
    def families() -> tuple[str, ...]:
        """The families this library builds, as the library lists them."""
        return _family_names()

    @staticmethod
    def field_info(family: str) -> tuple[FieldInfo, ...]:
        """The fields of `family`, in the order its names spell them."""
        if not isinstance(family, str):
            raise _errors.InvalidSpecError(
                _errors.INVALID_SPEC, f"a family name must be a str, got {family!r}"
            )
        return _family_fields(family)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"wyjit.Spec is immutable: use spec.replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("wyjit.Spec is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"wyjit.Spec({self.name!r})"

    def __reduce__(self) -> tuple:
        return (Spec.parse, (self.name,))


def _generic_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (int, str)):
        return str(value)
    raise _errors.InvalidSpecError(
        _errors.INVALID_SPEC, f"a field value must be an int, a str or a bool, got {value!r}"
    )


def as_spec(spec: "Spec | str") -> Spec:
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, str):
        return Spec.parse(spec)
    raise _errors.invalid_argument(f"spec must be a wyjit.Spec or a canonical name, got {spec!r}")


def values_of(spec: Spec) -> Mapping[str, Value]:
    """The spec's fields without a copy (for the launch modules' per-spec caches)."""
    return spec._values
