# SPDX-License-Identifier: Apache-2.0
"""The rotation-set arithmetic, timing statistics, and the JSON and Markdown outputs."""

from __future__ import annotations

import json

import pytest

from harness import report
from harness.core import MIB, Record, rotation_plan, summarize


@pytest.mark.parametrize("nbytes", [1, 4096, 262_148, 6_341_120, 84_680_704, 511 * MIB,
                                    512 * MIB, 513 * MIB, 4_614_258_688])
def test_one_cycle_touches_the_target_and_calls_are_whole_cycles(nbytes):
    plan = rotation_plan(nbytes, 512 * MIB, min_calls=16, max_sets=1 << 30)
    assert plan.footprint >= 512 * MIB and plan.l2_cold
    assert plan.sets == 1 or (plan.sets - 1) * nbytes < 512 * MIB  # no more sets than needed
    assert plan.calls % plan.sets == 0 and plan.calls >= 16
    assert plan.calls < plan.sets + 16  # no more whole cycles than needed


def test_the_anchor_points():
    assert (rotation_plan(6_341_120).sets, rotation_plan(6_341_120).calls) == (85, 85)
    assert (rotation_plan(84_680_704).sets, rotation_plan(84_680_704).calls) == (7, 21)
    assert (rotation_plan(4_614_258_688).sets, rotation_plan(4_614_258_688).calls) == (1, 16)


def test_the_plan_depends_only_on_the_point():
    # Every kernel at a point is timed with one plan: same sets, same calls.
    assert rotation_plan(10_585_088) == rotation_plan(10_585_088)


def test_max_sets_caps_the_rotation_and_says_so():
    plan = rotation_plan(4096, 512 * MIB, min_calls=16, max_sets=1024)
    assert plan.sets == 1024 and plan.calls == 1024 and not plan.l2_cold


def test_bad_plans_are_refused():
    with pytest.raises(ValueError):
        rotation_plan(0)
    with pytest.raises(ValueError):
        rotation_plan(100, min_calls=0)


def test_timing_statistics():
    t = summarize([10.0, 12.0, 11.0, 30.0, 10.5])
    assert t.median_us == 11.0 and t.min_us == 10.0 and t.max_us == 30.0
    assert t.spread_pct == pytest.approx(100 * 20 / 11)
    with pytest.raises(ValueError):
        summarize([])


def _record(label, us, kind="wyjit", status="ok", note="", k=2, n=1):
    return Record(family="gdn_verify", runner=label.replace(" ", "."), label=label, kind=kind,
                  variant=f"variant of {label}", point={"k": k, "n": n}, group="G", k=k, n=n,
                  bytes=6_341_120, floor_us=1.5, copy_us=3.0, sets=85, calls=85, us=us,
                  us_min=us, us_max=us, spread_pct=0.0 if us else None, replays=25 if us else 0,
                  status=status, note=note)


def _doc():
    env = {"device": "NVIDIA H200", "sm": "sm_90", "sms": 132, "l2_mib": 60.0,
           "driver": "580.159.04", "cuda_driver_api": "13.0", "torch": "2.11.0",
           "torch_cuda": "13.0", "triton": "3.6.0", "wyjit": "0.1.0", "wyjit_commit": "abc",
           "date": "2026-12-01 12:00 UTC"}
    copy = {"bytes": 4 << 30, "torch_gbs": 4264.0, "triton_gbs": 4242.0, "floor_gbs": 4264.0}
    cfg = {"replays": 25, "footprint_mib": 512, "min_calls": 16}
    pts = [{"group": "G", "k": 2, "n": 1, "bytes": 6_341_120, "floor_us": 1.5, "sets": 85,
            "calls": 85, "l2_cold": True, "copy_us": 3.0}]
    recs = [_record("SGLang update", 6.8, kind="peer"), _record("wyjit strided vk", 4.7),
            _record("vLLM spec", None, kind="peer", status="skipped", note="takes g/beta")]
    checks = [{"k": 2, "n": 1, "label": "SGLang update", "key": "out", "rel_vs_ref": 3e-3,
               "rel_vs_wyjit": 1e-3, "tolerance": 2e-2, "ok": True}]
    return report.document("gdn_verify", "python3 tools/bench/harness", env, copy, cfg, pts,
                           recs, checks)


def test_json_has_one_record_per_kernel_and_point():
    doc = json.loads(report.to_json(_doc()))
    assert doc["harness"] == report.FORMAT and doc["family"] == "gdn_verify"
    recs = {r["label"]: r for r in doc["records"]}
    wy = recs["wyjit strided vk"]
    for field in ("family", "variant", "k", "n", "us", "spread_pct", "bytes", "floor_us",
                  "pct_of_floor", "x_copy", "sets", "calls", "status"):
        assert field in wy
    assert wy["pct_of_floor"] == pytest.approx(100 * 1.5 / 4.7)
    assert wy["x_copy"] == pytest.approx(4.7 / 3.0)
    assert recs["vLLM spec"]["us"] is None and recs["vLLM spec"]["x_copy"] is None


def test_markdown_header_tables_and_notes():
    md = report.markdown(_doc())
    lines = md.splitlines()
    assert lines[0] == "# wyjit harness: gdn_verify"
    head = "\n".join(lines[:8])
    for text in ("NVIDIA H200 (sm_90, 132 SMs, 60.0 MiB L2)", "driver 580.159.04", "torch 2.11.0",
                 "triton 3.6.0", "2026-12-01", "4264 GB/s"):
        assert text in head
    assert "| K | N | MiB | floor us | copy us | sets x calls | SGLang update | wyjit strided vk | vLLM spec |" in md
    assert "| 2 | 1 | 6.0 | 1.50 | 3.00 | 85x85 | 6.80 (2.27) | **4.70 (1.57)** | skipped |" in md
    assert "| 2 | 1 | 68% | 32% | skipped |" not in md  # % of floor is floor/us
    assert "| 2 | 1 | 22% | 32% | skipped |" in md
    assert "vLLM spec K=2 N=1 (G): skipped: takes g/beta" in md
    assert "| K=2 N=1 | SGLang update | out | 3.00e-03 | 1.00e-03 | 2e-02 | yes |" in md
