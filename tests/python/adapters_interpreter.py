# SPDX-License-Identifier: Apache-2.0
"""The engines' own functions (their Triton code from .peers/classic, run by Triton's
interpreter: TRITON_INTERPRET=1 before triton is imported, hence its own process) against the
adapters (wyjit's launches emulated in float64 after the library's checks: adapter_emulation.py)
on the same random inputs; prints one JSON line: per case, the max relative error of every
output and every state tensor written.

    python3 tests/python/adapters_interpreter.py PEERS_DIR

The interpreter lacks bfloat16 arithmetic and libdevice (vLLM's `exp` is replaced by tl.exp): tokens are fp16 (the adapters map fp16 and bf16
the same way); it checks the mapping (indices, layouts, which tiles are written), not bf16
rounding."""

import json
import os
import pathlib
import sys

os.environ["TRITON_INTERPRET"] = "1"

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1] / "python"), str(HERE.parents[1] / "tools/bench")]

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import adapter_emulation as emu  # noqa: E402
import gpu_adapters as cases  # noqa: E402
from harness.peers import _load  # noqa: E402
from wyjit.adapters import _common  # noqa: E402


@triton.jit
def _exp(x):
    return tl.exp(x)


def main(peers_dir):
    _common.kernel, _common.gdn_verify = emu.kernel, emu.gdn_verify
    _common.conv1d_update = emu.conv1d_update
    peers = {key: _load.load(key, peers_dir) for key in ("vllm_spec", "sglang_verify",
                                                         "vllm_conv1d")}
    # NOTE: vLLM's fla/op `exp` is libdevice's, which the interpreter lacks.
    _load.load_module("vllm_spec", peers_dir).exp = _exp
    results = {}
    for label, (key, run) in cases.cpu_cases().items():
        results[label] = run(peers[key], device="cpu", io=torch.float16)
    print(json.dumps(results))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
