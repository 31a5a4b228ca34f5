# SPDX-License-Identifier: Apache-2.0
"""On a GPU with torch: what engines call. The torch custom ops (gpu_torch_ops.py: each op bit
for bit against the plain launch, steps of ops under torch.compile(fullgraph=True) and in torch
CUDA graphs against eager, a bad call raising the plain launch's error), and wyjit.adapters side
by side with the engines' own functions (gpu_adapters.py, where .peers/classic is filled).

Skipped (the reason starts with "wyjit-gpu-unavailable") without torch or a CUDA device. Runs
without pytest too: `python3 tests/python/test_gpu_engines.py`.
"""

import pathlib
import sys

try:
    import pytest
except ImportError:  # standalone run, see the bottom of the file
    pytest = None

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gpu_support import UNAVAILABLE, new_jit, run_standalone, torch  # noqa: E402
import gpu_adapters as adapters  # noqa: E402
import gpu_torch_ops as torch_ops  # noqa: E402


def peers_filled():
    return (adapters.PEERS_DIR / "classic").is_dir()


if pytest is not None:
    pytestmark = pytest.mark.skipif(bool(UNAVAILABLE), reason=f"wyjit-gpu-unavailable: {UNAVAILABLE}")

    @pytest.fixture(scope="module")
    def jit():
        torch.zeros(1, device="cuda")  # makes torch's CUDA context current on this thread
        torch.cuda.synchronize()
        with new_jit() as manager:
            yield manager

    @pytest.mark.parametrize("label", torch_ops.LABELS)
    def test_a_torch_op_equals_the_plain_launch_bit_for_bit(jit, label):
        torch_ops.check_op_equals_plain(jit, label)

    @pytest.mark.parametrize("problem", list(torch_ops.PROBLEMS))
    def test_a_step_of_torch_ops_under_torch_compile_equals_eager(jit, problem):
        torch_ops.check_compiled_step_equals_eager(jit, problem)

    @pytest.mark.parametrize("problem", list(torch_ops.PROBLEMS))
    def test_a_step_of_torch_ops_in_a_cuda_graph_equals_eager(jit, problem):
        torch_ops.check_graphed_step_equals_eager(jit, problem)

    def test_a_torch_op_raises_the_plain_launchs_error(jit):
        torch_ops.check_errors_match_plain(jit)

    @pytest.mark.parametrize("label", adapters.LABELS)
    def test_an_engine_function_and_its_wyjit_adapter_agree(jit, label):
        if not peers_filled():
            pytest.skip(f"{adapters.PEERS_DIR / 'classic'} is not filled (fetch_peers.py)")
        adapters.check_side_by_side(jit, label)


if __name__ == "__main__":
    cases = [(f"torch op {label} == plain", torch_ops.check_op_equals_plain, (label,))
             for label in torch_ops.LABELS]
    cases += [(f"torch ops {p} {how}", check, (p,)) for p in torch_ops.PROBLEMS
              for how, check in (("compiled", torch_ops.check_compiled_step_equals_eager),
                                 ("in CUDA graphs", torch_ops.check_graphed_step_equals_eager))]
    cases += [("torch op errors", torch_ops.check_errors_match_plain, ())]
    if peers_filled():
        cases += [(f"adapter {label}", adapters.check_side_by_side, (label,))
                  for label in adapters.LABELS]
    run_standalone(cases)
