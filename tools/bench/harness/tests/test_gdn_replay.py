# SPDX-License-Identifier: Apache-2.0
"""gdn_replay in the harness, no torch: its axes and defaults, the cursor runs (draws and each
kernel's fold rule), the bytes model against DESIGN's by hand, the rotation plan, memory per
sequence and layer, the replay peers' pins, fetch_peers.py's sources, --dry-run, the report."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from harness import cli, fetch_peers, report
from harness.core import Record
from harness.families import _replay_cursors as cursors
from harness.families import gdn_replay as fam
from harness.peers import registry

TILE = 32 * 128 * 128
ENTRY = (16 * 128 + 32 * 128 + 32) * 4  # wyjit's log entry at Qwen3-Next shapes, bytes


def test_defaults_are_the_issues_axes():
    a = cli.parse_args(["--family", "gdn_replay"])
    assert a.k == [2, 4, 8, 16] and a.n == [1, 8, 32, 128] and (a.hk, a.hv) == (16, 32)
    assert a.io == ["bf16"] and a.state == ["f32"] and a.log == [0] and a.classic
    assert (a.accept, a.steps, a.layers) == (0.7, 200, 36)
    assert a.peer_keys == list(fam.PEERS)
    pts = fam.points(a)
    assert len(pts) == 16 and [p.L for p in pts[::4]] == [16, 16, 16, 32]
    labels = [r.label for r in fam.runners(a)]
    assert labels == ["vLLM replay", "SGLang replay", "TRT-LLM replay", "FlashInfer ring",
                      "wyjit replay strided vk", "wyjit classic vk"]
    assert "checkpoint f32" in pts[0].group and "L=max(16,2K)" in pts[0].group


def test_variant_lists_and_refusals(capsys):
    a = cli.parse_args(["--family", "gdn_replay", "--k", "4", "--n", "1", "--state", "f32,bf16",
                        "--log", "16,32", "--addressing", "strided,table,slot", "--layout",
                        "vk,kv", "--no-classic", "--peers", "none"])
    assert [(p.state, p.L) for p in fam.points(a)] == [("f32", 16), ("f32", 32), ("bf16", 16),
                                                       ("bf16", 32)]
    assert len(fam.runners(a)) == 6 and "L=32" in fam.points(a)[1].group
    for bad in (["--log", "12"], ["--log", "128"], ["--peers", "vllm_spec"]):
        with pytest.raises(SystemExit):
            cli.parse_args(["--family", "gdn_replay", *bad])


def test_draws_accept_each_draft_with_p_until_the_first_rejection():
    d = cursors.draw(500, 4, 20, 0.7, seed=1)
    flat = [a for row in d.accepted for a in row]
    assert len(d.accepted) == cursors.WARMUP + 20 and set(flat) == {1, 2, 3, 4}
    at_least = [sum(a >= j for a in flat) / len(flat) for j in (2, 3, 4)]
    assert at_least == pytest.approx([0.7, 0.49, 0.343], abs=0.02)
    assert cursors.draw(500, 4, 20, 0.7, seed=1) == d and {a for r in cursors.draw(
        3, 1, 9, 0.7, 2).accepted for a in r} == {1}


def _hand(accepted, first_base=5):
    return cursors.Draws((first_base,), tuple((a,) for a in accepted), warmup=0)


def test_the_fold_rules_by_hand():
    d = _hand([4, 4, 3, 1, 2, 4])
    t = cursors.simulate(cursors.wyjit_rule(16), d, 4)  # fold at the verify when len + 8 > 16
    assert [r[0] for r in t.length] == [0, 4, 8, 11, 1, 3]
    assert [r[0] for r in t.base] == [5, 5, 5, 5, 0, 0]  # after the fold base += len (mod 16)
    assert [r[0] for r in t.fold] == [False, False, False, True, False, False]
    s = cursors.simulate(cursors.sglang_rule(4, "f32"), d, 4)  # fold at the commit: + accepted
    assert [r[0] for r in s.length] == [0, 4, 8, 0, 1, 3]
    assert [r[0] for r in s.base] == [5, 5, 5, 0, 0, 0]
    assert [r[0] for r in s.fold] == [False, False, True, False, False, False]
    b = cursors.simulate(cursors.sglang_rule(4, "bf16"), d, 4)  # fold_every_commit
    assert all(r[0] for r in b.fold) and all(r[0] == 0 for r in b.length)
    tr = cursors.simulate(cursors.trtllm_rule(), _hand([4, 4, 3, 1, 2, 4, 1]), 4)
    assert [r[0] for r in tr.length] == [0, 4, 8, 11, 12, 14, 4]  # fold when len + 4 > 16
    assert [r[0] for r in tr.base] == [1, 1, 1, 1, 1, 1, 0]  # the buffer flips
    v = cursors.vllm_rule(4)
    assert (v.capacity, v.ring) == (20, 32) and cursors.vllm_rule(16).ring == 32
    assert cursors.simulate(v, d, 4).length == cursors.simulate(
        cursors.flashinfer_rule(), d, 4).length  # both: len + K > 16


@pytest.mark.parametrize("k", [1, 2, 4, 8, 16])
def test_every_rule_keeps_its_entries_inside_its_log(k):
    d = cursors.draw(64, k, 300, 0.7, seed=k)
    L = max(16, cursors.next_pow2(2 * k))
    t = cursors.simulate(cursors.wyjit_rule(L), d, k)
    assert max(map(max, t.length)) + k <= L  # a verify's K entries never reach the live ones
    s = cursors.simulate(cursors.sglang_rule(k, "f32"), d, k)
    assert max(map(max, s.length)) + k <= L
    if k <= 8:
        for rule in (cursors.vllm_rule(k), cursors.flashinfer_rule(), cursors.trtllm_rule()):
            t = cursors.simulate(rule, d, k)
            assert max(map(max, t.length)) <= 16  # the window its kernel reads (W_RING, HIST)
            assert all(n + k <= 16 for row, f in zip(t.length, t.fold, strict=True)
                       for n, fold in zip(row, f, strict=True) if not fold)


def test_the_bytes_model_by_hand():
    # K = 1: one token a step, so the run is exact: len 1..15, a fold every 15 steps.
    p = fam.Point(k=1, n=1, steps=150)
    t = fam.wyjit_trajectory(p)
    assert t.fold_fraction == pytest.approx(1 / 15) and t.mean_len == pytest.approx(8.0)
    state = TILE * 4 * (1 + 1 / 15)  # the checkpoint read, the folds' writes
    log = 8 * ENTRY + 1 * ENTRY  # the live log read, the new entry written
    rows = (2 * 16 * 128 + 2 * 32 * 128) * 2 + 32 * 8  # q/k/v/out bf16, g/beta fp32
    assert fam.bytes_moved(p) == round(state + log + rows) == 2_484_130
    # The issue's point, from its run: pinned (a change of the draws or the model shows here).
    q = fam.Point(k=4, n=128)
    t = fam.wyjit_trajectory(q)
    assert fam.bytes_moved(q) == round(128 * TILE * 4 * (1 + t.fold_fraction)
                                       + 128 * (t.mean_len + 4) * ENTRY
                                       + 512 * (12288 * 2 + 256)) == 380_784_927
    bf = fam.Point(k=16, n=8, state="bf16", gating="fused")  # a/b in bf16 instead of g/beta
    t = fam.wyjit_trajectory(bf)
    assert fam.bytes_moved(bf) == round(8 * TILE * 2 * (1 + t.fold_fraction)
                                        + 8 * (t.mean_len + 16) * ENTRY
                                        + 128 * (12288 * 2 + 32 * 4))


def test_the_plan_covers_the_run_and_the_footprint():
    a = argparse.Namespace(footprint_mib=512, max_sets=4096, min_calls=16)
    plans = {(k, n): fam.plan(fam.Point(k=k, n=n), a) for k, n in
             [(1, 1), (4, 1), (4, 8), (4, 128), (16, 128)]}
    assert [(pl.sets, pl.calls) for pl in plans.values()] == [(400, 400), (200, 200), (25, 200),
                                                              (2, 200), (1, 200)]
    for pl in plans.values():
        assert pl.l2_cold and pl.calls % pl.sets == 0 and pl.calls % 200 == 0


def test_memory_per_sequence_and_layer():
    # docs/replay.md's table, and the peers' own logs by hand.
    assert fam.memory_classic(fam.Point(k=4, n=1)) == 8_388_608
    assert fam.memory_classic(fam.Point(k=16, n=1)) == 33_554_432
    assert fam.memory_replay(fam.Point(k=4, n=1)) == 2_492_416
    assert fam.memory_replay(fam.Point(k=16, n=1)) == 2_887_680
    assert fam.memory_replay(fam.Point(k=4, n=1, state="bf16")) == 1_443_840
    by = {r.key: r for r in fam.runners(cli.parse_args(["--family", "gdn_replay"]))}
    p, bf = fam.Point(k=4, n=1), fam.Point(k=4, n=1, state="bf16")
    peer_entry = 32 * 128 * 2 + 16 * 128 * 2 + 32 * 4  # bf16 u and k, fp32 g
    assert by["vllm_replay"].memory_bytes(p) == TILE * 4 + 32 * peer_entry == 2_494_464
    assert by["sglang_replay"].memory_bytes(p) == TILE * 4 + 16 * peer_entry
    assert by["sglang_replay"].memory_bytes(bf) == TILE * 2 + 16 * peer_entry + 16 * (
        peer_entry - 128)  # and the low parts of u and k
    assert by["trtllm_replay"].memory_bytes(p) == TILE * 4 + 2 * 16 * peer_entry
    assert by["flashinfer_replay"].memory_bytes(bf) == TILE * 2 + 32 * peer_entry


def test_skip_reasons():
    by = {r.key: r for r in fam.runners(cli.parse_args(["--family", "gdn_replay"]))}
    f32, bf16 = fam.Point(k=4, n=1), fam.Point(k=4, n=1, state="bf16")
    fi = by["flashinfer_replay"]
    assert fi.skip_reason(f32) and fi.skip_reason(bf16) is None
    assert by["flashinfer_replay"].skip_reason(fam.Point(k=2, n=1, state="bf16"))
    assert by["trtllm_replay"].skip_reason(fam.Point(k=16, n=1))
    assert by["trtllm_replay"].skip_reason(fam.Point(k=8, n=1)) is None
    assert all(by[k].skip_reason(fam.Point(k=4, n=1, io="f16")) for k in fam.PEERS)
    assert by["wyjit.replay.strided.vk"].skip_reason(fam.Point(k=16, n=1, log=16))
    assert all(by[k].skip_reason(fam.Point(k=16, n=128)) is None
               for k in ("vllm_replay", "sglang_replay", "wyjit.replay.strided.vk"))


ISSUE_13 = {  # repository, commit and file exactly as issue 13 names them
    "sglang_replay": ("sgl-project/sglang", "150c91c63be13e46adacdab51387b27c927c9a41",
                      "python/sglang/kernels/ops/attention/fla/gdn_replayssm_spec_decode.py"),
    "vllm_replay": ("vllm-project/vllm", "4cfaaf3c5c14eaa8786c983b7ae83b66466b0a1f",
                    "vllm/model_executor/layers/fla/ops/gdn_replayssm_spec_decode.py"),
    "trtllm_replay": ("NVIDIA/TensorRT-LLM", "1607eb40e5166a5029759d5ff720df93efaedca6",
                      "tensorrt_llm/_torch/modules/fla/cached_replay.py"),
    "flashinfer_replay": ("flashinfer-ai/flashinfer", "fb28d7242b3506a2348265962041acc1fb56cca4",
                          "flashinfer/gdn_kernels/gdn_decode_bf16_wy_ucache_flush.py"),
}


def test_the_replay_peers_are_pinned_as_the_issue_names_them():
    for key, (repo, commit, path) in ISSUE_13.items():
        p = registry.peer(key)
        assert (p.repo, p.commit, p.kernel_file, p.subdir) == (repo, commit, path, "replay")
        assert p.module.replace(".", "/") in p.kernel_file and path in dict(p.sha256)
        assert all(len(h) == 64 for _, h in p.sha256)
    v = registry.peer("vllm_replay")
    assert v.closure == ("vllm/model_executor/layers/mamba/ops/replayssm_config.py",)
    assert v.closure[0] in dict(v.sha256) and v.alternates[0].repo == "Johnny-Liou/ReplaySSM"


def _fake_peer(tmp_path, pins):
    return registry.Peer(key="fake", repo="o/r", commit="c" * 40, root="", module="m",
                         function="f", kernel_file="m.py", closure=(), stubs=(),
                         subdir="replay", sha256=pins,
                         alternates=(registry.Alternate("o/alt", "HEAD", "test"),))


def test_fetch_takes_a_tree_only_with_the_pinned_bytes(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_bytes(b"print(1)\n")
    monkeypatch.setattr(fetch_peers, "MIRRORS", tmp_path / "no-mirrors")
    good = fetch_peers._sha256(b"print(1)\n")
    data, where, bad = fetch_peers.fetch_file(_fake_peer(tmp_path, (("m.py", good),)), "m.py", {},
                                              {"o/r": str(tree)}, False, tmp_path)
    assert data == b"print(1)\n" and "pin matches" in where and not bad
    data, _, bad = fetch_peers.fetch_file(_fake_peer(tmp_path, (("m.py", "0" * 64),)), "m.py", {},
                                          {"o/r": str(tree)}, False, tmp_path)
    assert data is None and any("differs from the sha256 pin" in b for b in bad)


def test_fetch_takes_an_alternate_mirror_with_the_pinned_bytes(tmp_path, monkeypatch):
    repo = tmp_path / "mirrors" / "o+alt" / "repo"
    run = dict(cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "w")], **run)
    (tmp_path / "w" / "m.py").write_bytes(b"x = 2\n")
    git = ["git", "-C", str(tmp_path / "w"), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "m.py"], **run)
    subprocess.run([*git, "commit", "-q", "-m", "m"], **run)
    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "w"), str(repo)], **run)
    monkeypatch.setattr(fetch_peers, "MIRRORS", tmp_path / "mirrors")
    pins = (("m.py", fetch_peers._sha256(b"x = 2\n")),)
    data, where, bad = fetch_peers.fetch_file(_fake_peer(tmp_path, pins), "m.py", {}, {}, False,
                                              tmp_path)
    assert data == b"x = 2\n" and "o/alt" in where and not bad


def test_dry_run_of_the_replay_family(capsys):
    assert cli.main(["--family", "gdn_replay", "--dry-run", "--k", "4", "--n", "1,128",
                     "--state", "bf16"]) == 0
    out = capsys.readouterr().out
    assert "gdn_replay: 6 runners" in out and "400 sets x 400 calls" in out
    assert "4 sets x 200 calls" in out and "FlashInfer ring: folds 18" in out
    assert "SGLang replay: folds 100.0%" in out  # a 16-bit checkpoint folds at every commit
    assert "wyjit replay strided vk: folds 25" in out and "1,443,840 B" in out
    assert "skipped" not in out  # every runner runs K = 4 with a bf16 checkpoint


def test_the_report_has_the_parts_memory_and_folds():
    a = cli.parse_args(["--family", "gdn_replay", "--k", "4", "--n", "8"])
    p, runners = fam.points(a)[0], fam.runners(a)
    pt = {"group": p.group, "k": p.k, "n": p.n, "point": p.fields(), "bytes": fam.bytes_moved(p),
          "floor_us": 5.0, "sets": 25, "calls": 200, "l2_cold": True, "copy_us": 6.0,
          **fam.point_info(p, runners)}
    rec = Record("gdn_replay", "wyjit.replay.strided.vk", "wyjit replay strided vk", "wyjit", "v",
                 p.fields(), p.group, 4, 8, pt["bytes"], 5.0, 6.0, 25, 200, us=7.0,
                 parts={"verify_us": 6.5, "step_us": 18.0, "layers": 36})
    plain = Record("gdn_replay", "x", "x", "peer", "", {}, p.group, 4, 8, 1, 1.0, None, 1, 1)
    assert "parts" not in plain.to_json() and rec.to_json()["parts"]["step_us"] == 18.0
    doc = report.document("gdn_replay", "cmd", {}, {}, {"replays": 25, "footprint_mib": 512,
                          "min_calls": 16}, [pt], [rec])
    doc["notes_md"] = fam.notes_md([pt])
    md = report.markdown(doc)
    # K, L, classic, then vLLM, SGLang, TRT-LLM, wyjit replay, wyjit classic (FlashInfer skips)
    assert ("| 4 | 16 | 8,388,608 | 2,494,464 | 2,295,808 | 2,494,464 | 2,492,416 | 8,388,608 |"
            in md)
    assert "| 4 | 8 | " in md and "% |" in md
    json.loads(report.to_json(doc))


def test_the_cpu_side_imports_no_torch():
    code = ("import sys; from harness import cli; from harness.families import gdn_replay as f;"
            "a = cli.parse_args(['--family', 'gdn_replay']); rs = f.runners(a);"
            "[f.point_info(p, rs) for p in f.points(a)]; assert 'torch' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=fetch_peers.REPO_ROOT / "tools" / "bench")
    assert done.returncode == 0, done.stderr
