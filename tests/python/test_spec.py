# SPDX-License-Identifier: Apache-2.0
"""Specs and canonical names through the C API (no GPU): a Spec is a name whose fields the
library describes, builds and reads; Python keeps no table of them."""

import pickle
import re

import pytest

import wyjit

NAMES = [
    "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128",
    "gdn_verify.k1.io_f32.st_f32.strided.kv.d64",
    "gdn_verify.k17.io_f16.st_bf16.table.vk.dk128.dv256",
    "gdn_verify.k32.io_bf16.st_f16.slot.kv.d256.l2norm.gating",
    "conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.bias.silu",
    "conv1d_update.k1.io_f16.w2.wt_f16.intermediate.slot",
]


def test_library_version_matches_the_header_and_the_package(repo_root):
    header = (repo_root / "include" / "wyjit" / "wyjit.h").read_text()
    parts = [re.search(rf"#define WYJIT_VERSION_{p} (\d+)", header).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    assert wyjit.version() == ".".join(parts) == wyjit.__version__
    assert wyjit.library_path()


@pytest.mark.parametrize("name", NAMES)
def test_names_round_trip(name):
    spec = wyjit.Spec.parse(name)
    assert spec.name == name
    assert str(spec) == name
    assert wyjit.Spec.parse(spec.name) == spec
    assert wyjit.Spec.make(spec.family, **spec.fields) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_fields_of_a_parsed_spec():
    spec = wyjit.Spec.parse("gdn_verify.k17.io_f16.st_bf16.table.vk.dk128.dv256")
    assert spec == wyjit.Spec.make("gdn_verify", k=17, io="f16", state="bf16",
                                   addressing="table", layout="vk", dk=128, dv=256)
    assert spec.family == "gdn_verify"
    assert (spec.k, spec.io, spec.state, spec.addressing, spec.layout, spec.dk, spec.dv) == (
        17, "f16", "bf16", "table", "vk", 128, 256)
    assert spec.l2norm is False and spec.gating is False
    assert spec.fields == {"k": 17, "io": "f16", "state": "bf16", "addressing": "table",
                           "layout": "vk", "dk": 128, "dv": 256, "l2norm": False,
                           "gating": False}
    assert wyjit.Spec.make("gdn_verify").name == "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"


def test_flags_and_same_as_values():
    spec = wyjit.Spec.make("gdn_verify", k=2, l2norm=True, gating=True)
    assert spec.name == "gdn_verify.k2.io_bf16.st_f32.strided.vk.d128.l2norm.gating"
    assert spec.l2norm is True and spec.gating is True
    conv = wyjit.Spec.make("conv1d_update", io="f16", weight="io", rollback="window", silu=True)
    assert conv.name == "conv1d_update.k4.io_f16.w4.wt_f16.window.strided.silu"
    assert (conv.width, conv.weight, conv.rollback, conv.bias, conv.silu) == (
        4, "f16", "window", False, True)
    assert conv.replace(bias=True, width=3).name == (
        "conv1d_update.k4.io_f16.w3.wt_f16.window.strided.bias.silu")


def test_specs_compare_and_hash_by_name_and_are_immutable():
    a = wyjit.Spec.parse(NAMES[0])
    b = wyjit.Spec(NAMES[0])  # uncached: another object, the same variant
    assert a == b and hash(a) == hash(b) and a is not b
    assert {a: 1}[b] == 1
    assert a != wyjit.Spec.parse(NAMES[1]) and a != NAMES[0]
    with pytest.raises(AttributeError, match="immutable"):
        a.k = 8
    assert a.k == 4
    assert repr(a) == f"wyjit.Spec({NAMES[0]!r})"


def test_families_and_their_fields_come_from_the_library():
    families = wyjit.Spec.families()
    assert "gdn_verify" in families and "conv1d_update" in families
    for family in families:
        info = wyjit.Spec.field_info(family)
        assert info, family
        default = wyjit.Spec.make(family)
        assert default.family == family
        # Every field reads back as its kind's Python type, at its default.
        for f in info:
            value = default.fields[f.name]
            assert value == f.default, (family, f.name)
            assert type(value) is {"integer": int, "choice": str, "flag": bool}[f.kind]
            assert f.label and f.doc
            if f.kind == "choice":
                assert f.default in f.choices
            if f.kind == "integer":
                assert f.allowed or f.min <= f.default <= f.max


@pytest.mark.parametrize("family", wyjit.Spec.families())
def test_every_value_of_every_field_round_trips(family):
    """For each field, every value it allows (a range: its ends) gives a name that parses back
    to that value, the other fields at their defaults, where the family allows the mix."""
    for f in wyjit.Spec.field_info(family):
        if f.kind == "integer":
            values = list(f.allowed) or sorted({f.min, f.max, f.default})
        elif f.kind == "choice":
            values = list(f.choices)
        else:
            values = [False, True]
        for value in values:
            try:
                spec = wyjit.Spec.make(family, **{f.name: value})
            except wyjit.InvalidSpecError as e:
                # a cross-field rule (conv1d's weight must be the io dtype or f32)
                assert f.name in str(e), e
                continue
            assert spec.fields[f.name] == value
            assert getattr(spec, f.name) == value
            assert wyjit.Spec.parse(spec.name) == spec
            assert wyjit.Spec.make(family, **spec.fields) == spec


def test_field_info_of_gdn_verify():
    info = {f.name: f for f in wyjit.Spec.field_info("gdn_verify")}
    assert list(info) == ["k", "io", "state", "addressing", "layout", "dk", "dv", "l2norm",
                          "gating"]
    assert (info["k"].kind, info["k"].min, info["k"].max, info["k"].default) == (
        "integer", 1, 32, 4)
    assert info["io"].choices == ("f32", "f16", "bf16") and info["io"].spelling == "io_"
    assert info["dk"].allowed == (64, 128, 256) and info["dk"].merged_spelling == "d"
    assert info["l2norm"].kind == "flag" and info["l2norm"].default is False
    conv = {f.name: f for f in wyjit.Spec.field_info("conv1d_update")}
    assert conv["weight"].same_as == "io"
    assert conv["rollback"].choices == ("intermediate", "window")


def test_a_bad_name_names_the_field():
    with pytest.raises(wyjit.InvalidSpecError, match="K is 99, allowed: 1..32") as caught:
        wyjit.Spec.parse("gdn_verify.k99.io_bf16.st_f32.strided.vk.d128")
    assert caught.value.code == "invalid_spec"
    assert isinstance(caught.value, ValueError)
    with pytest.raises(wyjit.InvalidSpecError, match="f64"):
        wyjit.Spec.parse("gdn_verify.k4.io_f64.st_f32.strided.vk.d128")
    with pytest.raises(wyjit.InvalidSpecError, match="the canonical name"):
        wyjit.Spec.parse("gdn_verify.k4.io_bf16.st_f32.strided.vk.dk128.dv128")
    with pytest.raises(wyjit.InvalidSpecError, match="must be a str"):
        wyjit.Spec.parse(4)


@pytest.mark.parametrize(
    "family, fields, message",
    [
        # the library's messages
        ("gdn_verify", {"io": "f64"}, r"field io \(io dtype\): 'f64' is not a value: expected "
                                      r"one of f32, f16, bf16"),
        ("gdn_verify", {"addressing": "paged"}, r"field addressing .*'paged'"),
        ("gdn_verify", {"layout": "kk"}, r"field layout .*'kk'"),
        ("gdn_verify", {"k": 99}, r"K is 99, allowed: 1..32"),
        ("gdn_verify", {"dk": 96, "dv": 96}, r"dk is 96"),
        ("gdn_verify", {"l2norm_qk": True}, r"gdn_verify has no field 'l2norm_qk'; its fields: "
                                            r"k, io, .*l2norm, gating"),
        ("conv1d_update", {"rollback": "undo"}, r"'undo' is not a value: expected one of "
                                                r"intermediate, window"),
        ("conv1d_update", {"io": "bf16", "weight": "f16"},
         r"weight is f16, allowed: bf16 \(the io dtype\) or f32"),
        ("conv2d", {}, r"family is 'conv2d', allowed: " + ", ".join(wyjit.Spec.families())),
        # Python's: a value of the wrong Python type for the field's kind
        ("gdn_verify", {"k": 4.0}, r"Spec.k is 4.0, must be an int"),
        ("gdn_verify", {"k": True}, r"Spec.k is True, must be an int"),
        ("gdn_verify", {"l2norm": 1}, r"Spec.l2norm is 1, must be True or False"),
        ("gdn_verify", {"io": 2}, r"Spec.io is 2, must be a str"),
    ],
)
def test_bad_fields_are_refused(family, fields, message):
    with pytest.raises(wyjit.InvalidSpecError, match=message):
        wyjit.Spec.make(family, **fields)
