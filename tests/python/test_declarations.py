# SPDX-License-Identifier: Apache-2.0
"""The ctypes structs of python/wyjit/_lib.py against the C headers: the same fields in the same
order, each of a matching kind (a pointer for a pointer, an int of the same width...), and the
same size as the library's *_init makes (checked when the library is loaded)."""

import ctypes
import re

import pytest

from wyjit import _conv1d, _dlswap, _lib, _replay, _states, _verify

STRUCTS = {
    "wyjit_field_info": ("wyjit.h", _lib.FieldInfo),
    "wyjit_jit_options": ("wyjit.h", _lib.JitOptions),
    "wyjit_counters": ("wyjit.h", _lib.Counters),
    "wyjit_nvrtc_info": ("wyjit.h", _lib.NvrtcInfo),
    "wyjit_state_refs": ("state_refs.h", _states.StateRefs),
    "wyjit_gdn_verify_args": ("gdn_verify.h", _verify.GdnVerifyArgs),
    "wyjit_conv1d_update_args": ("conv1d_update.h", _conv1d.Conv1dUpdateArgs),
    "wyjit_gdn_replay_verify_args": ("gdn_replay.h", _replay.GdnReplayVerifyArgs),
    "wyjit_gdn_replay_commit_args": ("gdn_replay.h", _replay.GdnReplayCommitArgs),
    "wyjit_gdn_replay_materialize_args": ("gdn_replay.h", _replay.GdnReplayMaterializeArgs),
    "wyjit_dltensor": ("array_swap.h", _dlswap.DLTensor),
    "wyjit_array_slot": ("array_swap.h", _dlswap.ArraySlot),
    "wyjit_array_swap": ("array_swap.h", _dlswap.ArraySwap),
}

_SCALARS = {
    "size_t": ctypes.c_size_t,
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "uint8_t": ctypes.c_uint8,
    "uint16_t": ctypes.c_uint16,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
}


def header_fields(text, name):
    """(type, field) of every member of `typedef struct name { ... } name;`."""
    body = re.search(rf"typedef struct {name} \{{(.*?)\}} {name};", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    body = re.sub(r"//[^\n]*", "", body)
    body = re.sub(r"WYJIT_DEFAULT\((?:[^()]|\([^()]*\))*\)", "", body)
    fields = []
    for declaration in body.split(";"):
        declaration = " ".join(declaration.split())
        if declaration:
            match = re.fullmatch(r"(.*?)\s*(\w+)", declaration)
            fields.append((match.group(1), match.group(2)))
    return fields


def is_pointer(ctype):
    return ctype in (ctypes.c_void_p, ctypes.c_char_p) or issubclass(ctype, ctypes._Pointer)


@pytest.mark.parametrize("struct", sorted(STRUCTS))
def test_ctypes_structs_follow_the_headers(repo_root, struct):
    header, declared = STRUCTS[struct]
    text = (repo_root / "include" / "wyjit" / header).read_text()
    fields = header_fields(text, struct)
    function_pointers = set(re.findall(r"typedef [^;]*?\(\*(\w+)\)", text))
    assert [name for _, name in fields] == [name for name, _ in declared._fields_]
    for (c_type, name), (_, ctype) in zip(fields, declared._fields_):
        if "*" in c_type or c_type in function_pointers:
            assert is_pointer(ctype), (struct, name, c_type)
        elif c_type.startswith("wyjit_"):  # a nested struct
            assert ctype is STRUCTS[c_type][1], (struct, name, c_type)
        else:
            assert ctype is _SCALARS[c_type], (struct, name, c_type)


def test_the_library_makes_structs_of_the_declared_sizes():
    cdll = _lib.lib()  # loading already compares; this shows the numbers when it would not
    for init, struct in _lib._INITIALISED.items():
        c = struct()
        getattr(cdll, init)(ctypes.byref(c))
        assert c.struct_size == ctypes.sizeof(struct), init
