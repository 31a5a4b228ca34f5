# SPDX-License-Identifier: Apache-2.0
"""The peers registry, fetch_peers.py's stubs and manifest, and the loader's checks."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from harness import fetch_peers
from harness.peers import _load, registry

# The commits ../shared/ANCHORS.md measured or names (the replay peers: issue 13), per
# repository.
ANCHOR_COMMITS = {
    "sgl-project/sglang": {"10faf33794f8f43adc8bfe43eccc57415c9d16eb",
                           "00e1106f4ab55cfb7dceeba2dfbc04b0cc40bb6f",
                           "150c91c63be13e46adacdab51387b27c927c9a41"},
    "vllm-project/vllm": {"03c6dad84ad3b1df303e98805a3a0324d70e1539",
                          "4cfaaf3c5c14eaa8786c983b7ae83b66466b0a1f"},
    "NVIDIA/TensorRT-LLM": {"1607eb40e5166a5029759d5ff720df93efaedca6"},
    "flashinfer-ai/flashinfer": {"fb28d7242b3506a2348265962041acc1fb56cca4"},
}


def test_every_peer_is_pinned_to_an_anchor_commit():
    assert registry.PEERS
    for p in registry.PEERS.values():
        assert re.fullmatch(r"[0-9a-f]{40}", p.commit) and p.commit in ANCHOR_COMMITS[p.repo]
        assert p.kernel_file.endswith(".py") and p.module.replace(".", "/") in p.kernel_file
        assert p.tree == f"{p.subdir}/{p.repo.replace('/', '+')}"


def test_two_commits_of_one_repository_never_share_a_file():
    seen: dict[str, str] = {}
    for p in registry.PEERS.values():
        for f in p.files:
            where = f"{p.tree}/{f}"
            assert seen.setdefault(where, p.commit) == p.commit, where


def test_stubs_are_marked_and_never_replace_a_taken_file():
    taken = {f"{p.tree}/{f}" for p in registry.PEERS.values() for f in p.files}
    stubs = fetch_peers._stubs()
    assert not taken & set(stubs)
    for s in stubs.values():
        assert s.text.startswith("# STUB (wyjit harness)") and s.why
        compile(s.text, s.path, "exec")


def test_stubs_only_writes_the_stubs_and_a_manifest(tmp_path, capsys):
    assert fetch_peers.main(["--peers-dir", str(tmp_path), "--stubs-only"]) == 1  # files missing
    m = json.loads((tmp_path / "classic" / "MANIFEST.json").read_text())
    stubs = [f for f in m["files"] if f["kind"] == "stub"]
    taken = [f for f in m["files"] if f["kind"] != "stub"]
    assert stubs and all(f["present"] for f in stubs)
    assert taken and not any(f["present"] for f in taken)
    assert "MISSING" in capsys.readouterr().out


def test_the_loader_names_what_is_missing(tmp_path):
    missing = _load.missing_files(registry.peer("vllm_spec"), tmp_path)
    assert "vllm/model_executor/layers/fla/ops/fused_recurrent.py" in missing
    with pytest.raises(_load.PeerMissing, match="fetch_peers.py"):
        _load.load("vllm_spec", tmp_path)


def test_sys_path_roots():
    root, fallback = _load.peer_paths(registry.peer("sglang_update"), pathlib.Path("/p"))
    assert root == pathlib.Path("/p/classic/sgl-project+sglang/python")
    assert fallback == pathlib.Path("/p/classic/_fallback")
    root, _ = _load.peer_paths(registry.peer("vllm_spec"), pathlib.Path("/p"))
    assert root == pathlib.Path("/p/classic/vllm-project+vllm")
