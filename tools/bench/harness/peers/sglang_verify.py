# SPDX-License-Identifier: Apache-2.0
"""SGLang verify: `fused_sigmoid_gating_delta_rule_update` (registry key sglang_verify), the fused
gating kernel SGLang's target-verify step calls for Qwen3-Next.

Mapping to wyjit classic: raw a/b [N*K, HV] in the io dtype with fp32 A_log/dt_bias [HV],
softplus_beta=1, softplus_threshold=20 (wyjit's fused gating: g = -exp(A_log) *
softplus(a + dt_bias), beta = sigmoid(b)); q/k [1, N*K, HK, dk], v [1, N*K, HV, dv],
cu_seqlens = 0, K, 2K, ..; the state pool [N, HV, dv, dk] (wyjit's vk) read once through
initial_state_indices = b; disable_state_update=True with intermediate_states_buffer
[N, K, HV, dv, dk] (cache_steps = its dim 1 = K), so every token's state is written: one read,
K writes, the bytes of wyjit classic. use_qk_l2norm_in_kernel=True, scale 1/sqrt(dk).

At a `gating g` point it still computes its gating in the kernel from a/b (the same values
g/beta were derived from): its gating inputs are N*K*HV*2*sizeof(io) + HV*8 bytes instead of
the model's N*K*HV*8 (bf16: 4 bytes fewer per token and head), < 0.01% of any point's bytes.
Its output is allocated inside the call (q.new_empty).
"""

from __future__ import annotations

from typing import Any, Optional

from . import _load, registry

KEY = "sglang_verify"

SOURCE = registry.Peer(
    key=KEY,
    repo="sgl-project/sglang",
    commit="00e1106f4ab55cfb7dceeba2dfbc04b0cc40bb6f",
    root="python",
    module="sglang.kernels.ops.attention.fla.fused_sigmoid_gating_recurrent",
    function="fused_sigmoid_gating_delta_rule_update",
    kernel_file="python/sglang/kernels/ops/attention/fla/fused_sigmoid_gating_recurrent.py",
    closure=(),  # imports only torch and triton
    stubs=registry.SGLANG_KERNELS_MARKERS,
)
INT32_LIMIT = 2**31


class SglangVerify:
    key = KEY
    label = "SGLang verify"
    kind = "peer"

    def skip_reason(self, p: Any) -> Optional[str]:
        if p.n * p.k * p.tile >= INT32_LIMIT:
            # NOTE: as SGLang update: int32 cache_idx * cache_steps * HV*K*V offsets.
            return "intermediate-buffer offsets overflow int32 at this N*K"
        return None

    def setup(self, p: Any, ctx: Any) -> "_Bound":
        return _Bound(p, _load.load(KEY, ctx.peers_dir))


class _Bound:
    def __init__(self, p: Any, fn: Any):
        self.p, self.fn = p, fn
        src = registry.peer(KEY)
        self.variant = f"{src.function} @ {src.commit[:12]}"
        self.note = ("fused gating from a/b (bf16) + A_log/dt_bias" if p.gating == "g"
                     else "state after each token in intermediate_states_buffer (K entries)")

    def buffers(self, x: Any) -> dict[str, Any]:
        import torch

        p, dev = self.p, x.q.device
        idx = torch.arange(p.n, dtype=torch.int32, device=dev)
        return {
            "q": x.q.view(1, p.rows, p.hk, p.dk), "k": x.k.view(1, p.rows, p.hk, p.dk),
            "v": x.v.view(1, p.rows, p.hv, p.dv), "a": x.a, "b": x.b,
            "a_log": x.a_log, "dt_bias": x.dt_bias,
            "pool": x.state.clone(), "idx": idx,
            "inter": torch.empty((p.n, p.k, p.hv, p.dv, p.dk), dtype=x.state.dtype, device=dev),
            "cu": torch.arange(0, p.rows + 1, p.k, dtype=torch.int32, device=dev),
            "out": None,
        }

    def __call__(self, b: dict[str, Any]) -> None:
        b["out"] = self.fn(
            A_log=b["a_log"], a=b["a"], dt_bias=b["dt_bias"], softplus_beta=1.0,
            softplus_threshold=20.0, q=b["q"], k=b["k"], v=b["v"], b=b["b"],
            initial_state_source=b["pool"], initial_state_indices=b["idx"], scale=self.p.scale,
            use_qk_l2norm_in_kernel=True, cu_seqlens=b["cu"], disable_state_update=True,
            intermediate_states_buffer=b["inter"], intermediate_state_indices=b["idx"],
            cache_steps=self.p.k,
        )

    def readback(self, b: dict[str, Any]) -> dict[str, Any]:
        p = self.p
        return {"out": b["out"].reshape(p.rows, p.hv * p.dv).float(), "states": b["inter"].float()}
