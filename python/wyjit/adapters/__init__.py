# SPDX-License-Identifier: Apache-2.0
"""Drop-in replacements for the GDN kernels Python engines call, with the engines' own names,
arguments, defaults and results, running wyjit's kernels (needs torch; `import wyjit` never
imports this package):

    from wyjit.adapters import vllm, sglang
    o, final_state = vllm.fused_recurrent_gated_delta_rule(q, k, v, g, beta, ...)
    y = vllm.causal_conv1d_update(x, conv_state, weight, bias, activation, ...)
    o = sglang.fused_sigmoid_gating_delta_rule_update(A_log, a, dt_bias, 1.0, 20.0, q, k, v,
                                                       b, ssm_states, cache_indices, ...)

What each supports, and what it refuses with an InvalidArgumentError naming the argument: the
functions' docstrings (docs/embedding.md "Swapping in wyjit in vLLM / SGLang"). Kernels are
compiled on first use and kept per device through wyjit.torch_ops' manager
(wyjit.torch_ops.use_jit(jit) to choose it).
"""

from . import _common, sglang, vllm


def check_lengths(enabled: bool) -> None:
    """Whether the adapters read cu_seqlens / query_start_loc on the host (outside CUDA-graph
    capture) to check that every sequence has the same number of tokens (default on; one
    device-to-host copy per call)."""
    _common.CHECK_LENGTHS = bool(enabled)


__all__ = ["check_lengths", "sglang", "vllm"]
