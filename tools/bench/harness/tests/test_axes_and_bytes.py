# SPDX-License-Identifier: Apache-2.0
"""Argument parsing, points, runners' skip reasons, and the bytes models."""

from __future__ import annotations

import sys

import pytest

from harness import cli, families
from harness.families import gdn_verify as gdn

TILE = 32 * 128 * 128  # Qwen3-Next: HV * dk * dv


def test_defaults_are_qwen3_next_and_the_anchor_axes():
    a = cli.parse_args([])
    assert a.family == "gdn_verify"
    assert a.k == [2, 4, 8, 16] and a.n == [1, 8, 32, 128]
    assert (a.hk, a.hv, a.dk, a.dv) == (16, 32, 128, 128)
    assert a.io == ["bf16"] and a.state == ["f32"] and a.gating == ["g"]
    assert a.layout == ["vk"] and a.addressing == ["strided"]
    assert a.peer_keys == ["vllm_spec", "sglang_verify", "sglang_update"]
    assert a.wyjit and a.replays == 25 and a.footprint_mib == 512


def test_the_lead_command_line():
    a = cli.parse_args(["--family", "gdn_verify", "--k", "2,4,8,16", "--n", "1,8,32,128",
                        "--peers", "all", "--json", "out.json"])
    assert a.json == "out.json" and len(gdn.points(a)) == 16
    assert a.command.endswith("--peers all --json out.json")


def test_lists_of_variants_and_tp_shape():
    a = cli.parse_args(["--hk", "2", "--hv", "8", "--k", "4", "--n", "1,3", "--state", "f32,bf16",
                        "--layout", "vk,kv", "--addressing", "strided,slot,table"])
    pts = gdn.points(a)
    assert [(p.state, p.n) for p in pts] == [("f32", 1), ("f32", 3), ("bf16", 1), ("bf16", 3)]
    assert all((p.hk, p.hv) == (2, 8) for p in pts)
    labels = [r.label for r in gdn.runners(a)]
    assert labels[:3] == ["vLLM spec", "SGLang verify", "SGLang update"]
    assert len(labels) == 3 + 6 and "wyjit slot kv" in labels


@pytest.mark.parametrize("argv", [
    ["--k", "0"], ["--k", "2,x"], ["--k", "33"], ["--hk", "3", "--hv", "8"],
    ["--io", "f64"], ["--gating", "sigmoid"], ["--peers", "flashinfer"],
    ["--replays", "0"],
])
def test_bad_arguments_are_refused(argv, capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(argv)


def test_peer_selection():
    assert cli.parse_args(["--peers", "none"]).peer_keys == []
    assert cli.parse_args(["--peers", "sglang_update"]).peer_keys == ["sglang_update"]
    a = cli.parse_args(["--peers", "none", "--no-wyjit"])
    assert gdn.runners(a) == []


def test_gdn_bytes_model_matches_design():
    # (1+K)*N*HV*dk*dv*4 of state + N*K*(2*HK*dk + 2*HV*dv)*2 of rows + N*K*HV*8 of g/beta.
    p = gdn.Point(k=4, n=1)
    assert gdn.bytes_moved(p) == 5 * TILE * 4 + 4 * (2 * 16 * 128 + 2 * 32 * 128) * 2 + 4 * 32 * 8
    assert gdn.bytes_moved(p) == 10_585_088
    p = gdn.Point(k=16, n=128)
    assert gdn.bytes_moved(p) == 17 * 128 * TILE * 4 + 2048 * 12288 * 2 + 2048 * 32 * 8


def test_gdn_bytes_model_variants():
    fused = gdn.Point(k=2, n=8, gating="fused")
    plain = gdn.Point(k=2, n=8)
    rows = 16
    # a, b in bf16 and A_log, dt_bias fp32 instead of g, beta fp32.
    assert gdn.bytes_moved(plain) - gdn.bytes_moved(fused) == rows * 32 * 8 - (rows * 32 * 4 + 32 * 8)
    bf16 = gdn.Point(k=2, n=8, state="bf16")
    assert gdn.bytes_moved(plain) - gdn.bytes_moved(bf16) == 3 * 8 * TILE * 2
    tp = gdn.Point(k=4, n=1, hk=2, hv=8)
    assert gdn.bytes_moved(tp) == 5 * 8 * 128 * 128 * 4 + 4 * (2 * 2 * 128 + 2 * 8 * 128) * 2 + 4 * 8 * 8


def test_skip_reasons():
    a = cli.parse_args(["--gating", "fused"])
    fused = gdn.points(a)[0]
    reasons = {r.key: r.skip_reason(fused) for r in gdn.runners(a)}
    assert reasons["vllm_spec"] and reasons["sglang_update"]
    assert reasons["sglang_verify"] is None and reasons["wyjit.strided.vk"] is None
    # int32 offsets in SGLang's kernels: N*K*HV*dk*dv >= 2^31 is skipped, not run.
    big = gdn.Point(k=16, n=256)
    from harness.peers import sglang_update, vllm_spec
    assert sglang_update.SglangUpdate().skip_reason(big)
    assert sglang_update.SglangUpdate().skip_reason(gdn.Point(k=16, n=128)) is None
    assert vllm_spec.VllmSpec().skip_reason(big) is None


def test_dry_run_needs_no_gpu(capsys):
    assert cli.main(["--dry-run", "--k", "2", "--n", "1,128"]) == 0
    out = capsys.readouterr().out
    assert "6341120 bytes" in out and "85 sets x 85 calls" in out and "1 sets x 16 calls" in out


def test_cpu_modules_do_not_import_torch():
    if "torch" in sys.modules:
        pytest.skip("torch was imported by something else in this process")
    import harness.check  # noqa: F401
    import harness.run  # noqa: F401
    for name in families.NAMES:
        cli.parse_args(["--family", name])
    assert "torch" not in sys.modules


def test_wyjit_variant_names_follow_the_documented_grammar():
    # The examples of include/wyjit/gdn_verify.hpp.
    assert gdn.variant_name(gdn.Point(k=4, n=1), "vk", "strided") == \
        "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.l2norm"
    assert gdn.variant_name(gdn.Point(k=2, n=1, dk=64, gating="fused", state="bf16"), "kv", "slot") \
        == "gdn_verify.k2.io_bf16.st_bf16.slot.kv.dk64.dv128.l2norm.gating"


def test_check_uses_small_points_by_default():
    a = cli.parse_args(["--check"])
    assert a.k == [1, 4, 16] and a.n == [1, 3]
    assert cli.parse_args(["--check", "--k", "8"]).k == [8]
