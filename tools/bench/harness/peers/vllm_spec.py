# SPDX-License-Identifier: Apache-2.0
"""vLLM spec: `fused_recurrent_gated_delta_rule` in its spec-decode form (registry key
vllm_spec), as vLLM's GDN layer calls it for speculative decode.

Mapping to wyjit classic: q/k [1, N*K, HK, dk], v [1, N*K, HV, dv], g/beta fp32 [1, N*K, HV],
cu_seqlens = 0, K, 2K, .. (the spec query_start_loc); a pool of N*K states of
[HV, dk, dv] (vLLM keeps dv contiguous: wyjit's kv layout, the same bytes);
ssm_state_indices [N, K] = b*K + t and num_accepted_tokens = 1, so sequence b reads its state
from slot b*K (where the harness puts S0) and, with inplace_final_state=True, writes the state
after token t to slot b*K + t: one read and K writes, the bytes of wyjit classic (the first
write lands on the slot it read, as in vLLM). use_qk_l2norm_in_kernel=True, scale 1/sqrt(dk).
Its output is allocated inside the call (q.new_empty).
"""

from __future__ import annotations

from typing import Any, Optional

from . import _load, registry

KEY = "vllm_spec"

SOURCE = registry.Peer(
    key=KEY,
    repo="vllm-project/vllm",
    commit="03c6dad84ad3b1df303e98805a3a0324d70e1539",
    root="",
    module="vllm.model_executor.layers.fla.ops.fused_recurrent",
    function="fused_recurrent_gated_delta_rule",
    kernel_file="vllm/model_executor/layers/fla/ops/fused_recurrent.py",
    # NOTE: op.py imports `.utils.is_gather_supported` at module level, so utils.py is part of
    # the closure; utils.py imports vllm.platforms (stubbed below) and vllm.triton_utils.
    closure=("vllm/model_executor/layers/fla/ops/op.py",
             "vllm/model_executor/layers/fla/ops/utils.py"),
    stubs=(
        *registry.VLLM_MARKERS,
        registry.marker("vllm/model_executor/layers/fla/__init__.py"),
        registry.Stub(
            "vllm/model_executor/layers/fla/ops/__init__.py",
            "# STUB (wyjit harness): package marker; the real one imports every FLA op.\n",
            "the real one imports chunk, layernorm and the other FLA ops",
        ),
        registry.VLLM_TRITON_UTILS,
        registry.Stub(
            "vllm/platforms/__init__.py",
            "# STUB (wyjit harness) for vllm.platforms: only what fla/ops/utils.py asks at\n"
            "# import (is the device CUDA-like; vLLM's CUDA and ROCm platforms say yes).\n"
            "import torch\n\n\n"
            "class _Platform:\n"
            "    def is_cuda_alike(self):\n"
            "        return torch.cuda.is_available()\n\n\n"
            "current_platform = _Platform()\n",
            "the real module detects and configures every platform vLLM runs on",
        ),
    ),
)


class VllmSpec:
    key = KEY
    label = "vLLM spec"
    kind = "peer"

    def skip_reason(self, p: Any) -> Optional[str]:
        if p.gating != "g":
            return "takes g/beta: no fused gating"
        return None

    def setup(self, p: Any, ctx: Any) -> "_Bound":
        return _Bound(p, _load.load(KEY, ctx.peers_dir))


class _Bound:
    def __init__(self, p: Any, fn: Any):
        self.p, self.fn = p, fn
        src = registry.peer(KEY)
        self.variant = f"{src.function} @ {src.commit[:12]}"
        self.note = "state pool [HV][dk][dv]; slots b*K+t"

    def buffers(self, x: Any) -> dict[str, Any]:
        import torch

        p, dev = self.p, x.q.device
        pool = torch.empty((p.rows, p.hv, p.dk, p.dv), dtype=x.state.dtype, device=dev)
        pool.view(p.n, p.k, p.hv, p.dk, p.dv)[:, 0] = x.state.transpose(-1, -2)
        return {
            "q": x.q.view(1, p.rows, p.hk, p.dk), "k": x.k.view(1, p.rows, p.hk, p.dk),
            "v": x.v.view(1, p.rows, p.hv, p.dv),
            "g": x.g.view(1, p.rows, p.hv), "beta": x.beta.view(1, p.rows, p.hv),
            "pool": pool,
            "indices": torch.arange(p.rows, dtype=torch.int32, device=dev).view(p.n, p.k),
            "accepted": torch.ones(p.n, dtype=torch.int32, device=dev),
            "cu": torch.arange(0, p.rows + 1, p.k, dtype=torch.int32, device=dev),
            "out": None,
        }

    def __call__(self, b: dict[str, Any]) -> None:
        b["out"], _ = self.fn(
            q=b["q"], k=b["k"], v=b["v"], g=b["g"], beta=b["beta"], scale=self.p.scale,
            initial_state=b["pool"], inplace_final_state=True, cu_seqlens=b["cu"],
            ssm_state_indices=b["indices"], num_accepted_tokens=b["accepted"],
            use_qk_l2norm_in_kernel=True,
        )

    def readback(self, b: dict[str, Any]) -> dict[str, Any]:
        p = self.p
        states = b["pool"].view(p.n, p.k, p.hv, p.dk, p.dv).transpose(-1, -2)
        return {"out": b["out"].reshape(p.rows, p.hv * p.dv).float(), "states": states.float()}
