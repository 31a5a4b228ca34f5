# SPDX-License-Identifier: Apache-2.0
"""vLLM ReplaySSM spec decode: `gdn_replayssm_spec_decode` (registry key vllm_replay), as vLLM's
GDN layer calls it (qwen_gdn_linear_attn.py at the same commit), and its per-step
`commit_gdn_replayssm_spec` (gdn_attn.py's metadata builder, once per step for all layers).

Its log, per slot and layer: per token d (= wyjit's u: the solved correction) [HV, ring, dv]
and the normalised k [HK, ring, dk], both in the activation dtype (bf16), and the token's own
g [HV, ring] fp32 (S_cur = e^{sum g} S0 + sum_c e^{sum_{j>c} g_j} d_c k_c^T): 12,416 bytes an
entry at Qwen3-Next shapes against wyjit's 24,704 (fp32 k, u and cumulative G). The engine's
ring is 1 << (16 + K - 1).bit_length() = 32 slots for K 1..16, its flush threshold
max_cache_len = 16 + K; cursors write_pos / cache_base / is_flush are block-keyed [slots]
(int32, int32, int8), null block 0, so sequence b uses slot b+1 of every pool.

Per layer (timed): the verify and the flush launch (launch_mode "both": rows with is_flush set
take the flush kernel, which folds S_cur into the checkpoint in place and solves from it; the
others the verify kernel). Per step (timed, / layers): commit_gdn_replayssm_spec, one launch:
after a flush base += write_pos, write_pos = accepted, else write_pos += accepted; is_flush =
write_pos + 2K > 16 + K. Checkpoint [slots, HV, dv, dk] (dk contiguous: wyjit's vk), the
point's checkpoint dtype (the engine forces fp32; the kernel rounds it to bf16 for its dots
either way). q/k/v packed into mixed_qkv [N*K, 2*HK*dk + HV*dv] as the engine hands them
over; a/b raw with A_log/dt_bias (in-kernel gating). Output preallocated [N*K, HV, dv].
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import registry
from ._replay_peer import ReplayPeer, io_bytes, state_bytes, token_views
from ..families import _replay_cursors as cursors
from ..families import gdn_replay as fam
from ..families._replay_run import ReplayBound, host_ints, ring_positions, s_cur

KEY = "vllm_replay"
OPS = "vllm/model_executor/layers/fla/ops"

SOURCE = registry.Peer(
    key=KEY,
    repo="vllm-project/vllm",
    commit="4cfaaf3c5c14eaa8786c983b7ae83b66466b0a1f",
    root="",
    module="vllm.model_executor.layers.fla.ops.gdn_replayssm_spec_decode",
    function="gdn_replayssm_spec_decode",
    kernel_file=f"{OPS}/gdn_replayssm_spec_decode.py",
    closure=("vllm/model_executor/layers/mamba/ops/replayssm_config.py",),
    stubs=(
        *registry.VLLM_MARKERS,
        *registry.markers(
            "vllm/model_executor/layers/fla/__init__.py",
            f"{OPS}/__init__.py",
            "vllm/model_executor/layers/mamba/__init__.py",
            "vllm/model_executor/layers/mamba/ops/__init__.py",
        ),
        registry.VLLM_TRITON_UTILS,
        registry.Stub(
            "vllm/platforms/__init__.py",
            "# STUB (wyjit harness) for vllm.platforms: only what replayssm_config.py asks\n"
            "# (is the device a Blackwell, capability family 100).\n"
            "import torch\n\n\n"
            "class _Platform:\n"
            "    def is_device_capability_family(self, family):\n"
            "        major, _ = torch.cuda.get_device_capability()\n"
            "        return major * 10 == family\n\n\n"
            "current_platform = _Platform()\n",
            "the real module detects and configures every platform vLLM runs on",
        ),
    ),
    subdir="replay",
    sha256=(
        (f"{OPS}/gdn_replayssm_spec_decode.py",
         "90f7d589ebe18ed2350e5f4cfba494afaa77e350b1368d87d0fe8eb2d1b02c71"),
        ("vllm/model_executor/layers/mamba/ops/replayssm_config.py",
         "a682003d15d797910cfdbfcd2ce21cf8ed1683d9d6754cc1102e9e96b8701c9c"),
    ),
    alternates=(registry.Alternate(
        "Johnny-Liou/ReplaySSM", "a84849410ab56cc2b23432969eb2ecfc42a13d9c",
        "the ReplaySSM authors' tree holds both files byte for byte (vLLM's is too large to "
        "mirror here; lengths and text checked against vLLM at the commit)"),),
)


class VllmReplay(ReplayPeer):
    key = KEY
    label = "vLLM replay"

    def kernel_skip(self, p: Any) -> Optional[str]:
        nk = 4 if p.k >= 6 else 2  # replayssm_config: the dk tile is dk / nk, >= 16 for tl.dot
        if p.dk & (p.dk - 1) or p.dk // nk < 16:
            return f"dk={p.dk}: needs a power of two with dk/{nk} >= 16"
        return None

    def rule(self, p: Any) -> cursors.Rule:
        return cursors.vllm_rule(p.k)

    def memory_bytes(self, p: Any) -> int:
        io = io_bytes(p)
        ring = self.rule(p).ring
        return p.tile * state_bytes(p) + ring * (p.hv * p.dv * io + p.hk * p.dk * io + p.hv * 4)

    def bound(self, p: Any, mod: Any, device: str = "cuda") -> "_Bound":
        return _Bound(p, self, mod, device)


class _Bound(ReplayBound):
    def __init__(self, p: Any, r: VllmReplay, mod: Any, device: str):
        import torch

        self.r, self.mod, self.rl = r, mod, r.rule(p)
        self.idx = torch.arange(1, p.n + 1, dtype=torch.int32, device=device)
        self.cu = torch.arange(0, p.rows + 1, p.k, dtype=torch.int32, device=device)
        super().__init__(p, fam.trajectory(p, self.rl), r.variant(),
                         f"verify+flush per layer, commit/{p.layers}; bf16 d/k log, "
                         f"{self.rl.ring}-slot ring, flush at len + K > 16", device)

    def arrays(self, x: Any, layers: int, history: bool) -> dict[str, Any]:
        import torch

        p, n, ring, dev = self.p, self.p.n, self.rl.ring, x.q.device
        io = x.q.dtype
        ckpt = torch.zeros((n + 1, p.hv, p.dv, p.dk), dtype=x.state.dtype, device=dev)
        ckpt[1:] = x.state
        d = torch.zeros((n + 1, p.hv, ring, p.dv), dtype=io, device=dev)
        k = torch.zeros((n + 1, p.hk, ring, p.dk), dtype=io, device=dev)
        g = torch.zeros((n + 1, p.hv, ring), dtype=torch.float32, device=dev)
        if history:
            d[1:] = x.hist_u[:, :ring].permute(0, 2, 1, 3)
            k[1:] = x.hist_k[:, :ring].permute(0, 2, 1, 3)
            g[1:] = x.hist_g[:, :ring].permute(0, 2, 1)
        return {"ckpt": ckpt, "d": d, "k": k, "g": g}

    def tokens(self, t: Any) -> dict[str, Any]:
        import torch

        tok = token_views(self.p, t)
        tok["mixed"] = torch.cat([t.q, t.k, t.v], dim=1).contiguous()
        return tok

    def cursors(self, base: Sequence[int], length: Sequence[int], fold: Sequence[bool]) -> Any:
        import torch

        def slots(values: Sequence[int], dtype: Any) -> Any:
            return torch.tensor([0, *values], dtype=dtype, device=self.device)

        return {"wp": slots(length, torch.int32), "base": slots(base, torch.int32),
                "flush": slots([int(f) for f in fold], torch.int8)}

    def launch(self, arr: dict[str, Any], tok: dict[str, Any], cur: Any) -> None:
        p = self.p
        self.mod.gdn_replayssm_spec_decode(
            mixed_qkv=tok["mixed"], a=tok["a"], b=tok["b"], A_log=tok["A_log"],
            dt_bias=tok["dt_bias"], checkpoint_state=arr["ckpt"], d_cache=arr["d"],
            k_cache=arr["k"], g_cache=arr["g"], out=tok["out"], query_start_loc=self.cu,
            ssm_state_indices=self.idx, write_pos=cur["wp"], cache_base=cur["base"],
            is_flush=cur["flush"], max_cache_len=self.rl.capacity, max_spec_len=p.k,
            scale=p.scale, use_qk_l2norm_in_kernel=True)

    def commit(self, arr: Optional[dict[str, Any]], cur: Any, acc: Any) -> None:
        self.mod.commit_gdn_replayssm_spec(
            cur["wp"], cur["base"], cur["flush"], num_accepted=acc, state_batch_indices=self.idx,
            max_cache_len=self.rl.capacity, max_spec_len=self.p.k, cache_buf_len=self.rl.ring)

    def output(self, tok: dict[str, Any]) -> Any:
        return tok["out"].reshape(self.p.rows, -1).float()

    def materialize(self, arr: dict[str, Any], cur: Any) -> Any:
        pos = ring_positions(host_ints(cur["base"][1:]), host_ints(cur["wp"][1:]), self.rl.ring)
        return s_cur(arr["ckpt"][1:], arr["d"][1:], arr["k"][1:], arr["g"][1:], pos,
                     cumulative=False)
