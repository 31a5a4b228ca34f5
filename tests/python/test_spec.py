# SPDX-License-Identifier: Apache-2.0
"""Specs and canonical names through the C API (no GPU)."""

import re

import pytest

import wyjit

NAMES = [
    "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128",
    "gdn_verify.k1.io_f32.st_f32.strided.kv.d64",
    "gdn_verify.k17.io_f16.st_bf16.table.vk.dk128.dv256",
    "gdn_verify.k32.io_bf16.st_f16.slot.kv.d256.l2norm.gating",
    "conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.bias.silu",
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


def test_fields_of_a_parsed_spec():
    spec = wyjit.Spec.parse("gdn_verify.k17.io_f16.st_bf16.table.vk.dk128.dv256")
    assert spec == wyjit.Spec(k=17, io="f16", state="bf16", addressing="table", layout="vk",
                              dk=128, dv=256)
    assert wyjit.Spec().name == "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"


def test_a_bad_name_names_the_field():
    with pytest.raises(wyjit.InvalidSpecError, match="K is 99, allowed: 1..32") as caught:
        wyjit.Spec.parse("gdn_verify.k99.io_bf16.st_f32.strided.vk.d128")
    assert caught.value.code == "invalid_spec"
    assert isinstance(caught.value, ValueError)
    with pytest.raises(wyjit.InvalidSpecError, match="f64"):
        wyjit.Spec.parse("gdn_verify.k4.io_f64.st_f32.strided.vk.d128")


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"io": "f64"}, r"Spec.io is 'f64', allowed: f32, f16, bf16"),
        ({"addressing": "paged"}, r"Spec.addressing is 'paged'"),
        ({"layout": "kk"}, r"Spec.layout is 'kk'"),
        ({"rollback": "undo"}, r"Spec.rollback is 'undo', allowed: intermediate, window"),
        ({"family": "conv2d"}, r"Spec.family is 'conv2d'"),
        ({"k": 4.0}, r"Spec.k is 4.0, must be an int"),
        ({"l2norm_qk": 1}, r"Spec.l2norm_qk is 1, must be True or False"),
    ],
)
def test_bad_fields_are_refused_before_the_library(fields, message):
    with pytest.raises(wyjit.InvalidSpecError, match=message):
        wyjit.Spec(**fields).name


def test_validate_refuses_what_this_build_does_not_support():
    wyjit.Spec().validate()
    with pytest.raises(wyjit.InvalidSpecError, match="dk is 96"):
        wyjit.Spec(dk=96, dv=96).validate()
