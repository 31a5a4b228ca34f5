# SPDX-License-Identifier: Apache-2.0
"""Runs one replay peer's adapter on the CPU through Triton's interpreter (TRITON_INTERPRET=1,
set before triton is imported, hence its own process): the --check episode (verify, commit,
folds, materialize) against the float64 reference, then the timing path (a verify at one
step's cursors, the per-step launches over a few steps of the run). Prints one JSON line.

    python3 -m harness.tests.replay_interpreter KEY K N CHECKPOINT    (from tools/bench)

The interpreter lacks bfloat16 arithmetic (it returns garbage) and libdevice, so the tokens
are fp16 (a 16-bit io the kernels take the same way) and TRT-LLM's fast_* libdevice calls and
its fla/op `exp` are replaced by exact ones; it has no device, so TRT-LLM sees sm_80 (no PDL)
and 4 SMs. Nothing of this is how the GPU run goes: it checks the adapters' mapping (layouts,
cursors, commit order, materialize), not the kernels' speed or their bf16 rounding."""

from __future__ import annotations

import json
import os
import pathlib
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from harness.check import compare  # noqa: E402
from harness.context import REPO_ROOT  # noqa: E402
from harness.families import _replay_cursors as cursors  # noqa: E402
from harness.families import gdn_replay as fam  # noqa: E402
from harness.peers import sglang_replay, trtllm_replay, vllm_replay  # noqa: E402

RUNNERS = {"vllm_replay": vllm_replay.VllmReplay, "sglang_replay": sglang_replay.SglangReplay,
           "trtllm_replay": trtllm_replay.TrtllmReplay}


@triton.jit
def _exp(x):
    return tl.exp(x)


@triton.jit
def _log2(x):
    return tl.log2(x)


@triton.jit
def _div(a, b):
    return a / b


def main(argv: list[str]) -> int:
    key, k, n, state = argv[0], int(argv[1]), int(argv[2]), argv[3]
    peers_dir = pathlib.Path(os.environ.get("WYJIT_PEERS_DIR", REPO_ROOT / ".peers"))
    r = RUNNERS[key]()
    p = fam.Point(k=k, n=n, hk=1, hv=2, dk=32, dv=32, io="f16", state=state, steps=16,
                  layers=3)
    mod = r.module(types.SimpleNamespace(peers_dir=peers_dir))
    if key == "trtllm_replay":
        mod.get_sm_version = lambda: 80
        mod.exp = _exp
        mod.tldevice = types.SimpleNamespace(fast_expf=_exp, fast_log2f=_log2, fast_dividef=_div)
        torch.cuda.get_device_properties = lambda d: types.SimpleNamespace(multi_processor_count=4)
    bound = r.bound(p, mod, device="cpu")
    x = fam.make_inputs(p, 11, device="cpu")
    bufs = bound.buffers(x)
    bound.check_call(bufs)
    got, ref = bound.readback(bufs), fam.reference(p, x)
    result = {key2: compare(got[key2], ref[key2])[1] for key2 in ("out", "state")}
    bound.bind(bufs, 3)()
    for call in bound.step_calls()[:4]:
        call()
    draws = cursors.draw(p.n, p.k, fam.check_steps(p), p.accept, x.seed, warmup=0)
    result["episode_folds"] = sum(map(sum, cursors.simulate(bound.traj.rule, draws, p.k).fold))
    result["run_folds"] = bound.traj.fold_fraction
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
