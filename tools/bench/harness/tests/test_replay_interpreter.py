# SPDX-License-Identifier: Apache-2.0
"""The replay peers' adapters on the CPU through Triton's interpreter (see replay_interpreter.py):
each --check episode, folds and commits included, against the float64 reference. Skipped where
torch or triton is missing or `.peers/replay` has not been filled (fetch_peers.py)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from harness.context import REPO_ROOT  # noqa: E402
from harness.peers import _load, registry  # noqa: E402

BENCH = pathlib.Path(__file__).resolve().parents[2]
PEERS_DIR = pathlib.Path(os.environ.get("WYJIT_PEERS_DIR", REPO_ROOT / ".peers"))

# 16-bit tokens: the episode's outputs carry fp16 rounding of the inputs' products (~5e-4);
# a bf16 checkpoint adds its rounding per fold (~5e-3). A wrong layout, cursor or commit order
# gives errors of order 1 (seen while writing the adapters).
CASES = [
    ("vllm_replay", 4, 3, "f32", 2e-3, 2e-3),
    ("vllm_replay", 2, 2, "bf16", 2e-2, 2e-2),
    ("sglang_replay", 4, 3, "f32", 2e-3, 2e-3),
    ("sglang_replay", 4, 3, "bf16", 2e-2, 2e-2),  # fold_every_commit and the low-part rings
    ("trtllm_replay", 4, 3, "f32", 2e-3, 2e-3),  # the fold inside the verify
    ("trtllm_replay", 4, 16, "f32", 2e-3, 2e-3),  # N >= 16: the all-layer fold and work list
]


@pytest.mark.parametrize("key, k, n, state, out_tol, state_tol", CASES)
def test_the_peer_episode_matches_the_float64_reference(key, k, n, state, out_tol, state_tol):
    missing = _load.missing_files(registry.peer(key), PEERS_DIR)
    if missing:
        pytest.skip(f"{key}: {missing[0]} not under {PEERS_DIR} (run fetch_peers.py)")
    env = {**os.environ, "PYTHONPATH": str(BENCH), "WYJIT_PEERS_DIR": str(PEERS_DIR)}
    done = subprocess.run([sys.executable, "-m", "harness.tests.replay_interpreter", key, str(k),
                           str(n), state], cwd=BENCH, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["episode_folds"] > 0 and result["run_folds"] > 0  # the fold paths ran
    assert result["out"] <= out_tol, result
    assert result["state"] <= state_tol, result
