# SPDX-License-Identifier: Apache-2.0
"""FlashInfer's CuTe-DSL ring kernel: `gated_delta_rule_mtp_ucache_flush` (registry key
flashinfer_replay), driven as TRT-LLM's flashinfer_cached_replay.py drives it in serving:
flush_min = 16 - T + 1, restart_hist_on_flush=False, and the caller's cursor commit once per
step after acceptance: where the verify flushed (len >= flush_min) base = (base + len) & 31
and len = accepted, else len += accepted (torch ops here, as there).

Its log, per slot and layer: a 32-slot ring with a live window of at most W_RING = 16
entries: the normalised k [HK, 32, dk] and u [HV, 32, dv] in bf16, G [HV, 32] fp32 measured
from the checkpoint (wyjit's G). A row with len >= flush_min folds S_cur into the checkpoint
(fp32 accumulate, one rounding to bf16) and appends its T entries past the folded window.
Cursors hist_len / cache_base are per batch row [N] int32 (TRT-LLM gathers them from its
slots; here row b is slot b).

Its module is compiled for one dtype set at import: bf16 io and a bf16 checkpoint (the
default), so it runs bf16 checkpoints only, against wyjit's bf16 checkpoint; T in {4, 8};
K = V = 128. A_log/dt_bias are read as bf16 (cast once per buffer set here). It needs the CuTe
DSL (nvidia-cutlass-dsl) and cuda-python: without them it is skipped. Per layer (timed): one
launch (verify or flush per row). Per step (timed, / layers): the cursor commit.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import registry
from ._replay_peer import ReplayPeer
from ..families import _replay_cursors as cursors
from ..families import gdn_replay as fam
from ..families._replay_run import ReplayBound, host_ints, ring_positions, s_cur

KEY = "flashinfer_replay"
RING, WINDOW = 32, 16  # RING_SLOTS, W_RING

SOURCE = registry.Peer(
    key=KEY,
    repo="flashinfer-ai/flashinfer",
    commit="fb28d7242b3506a2348265962041acc1fb56cca4",
    root="",
    module="flashinfer.gdn_kernels.gdn_decode_bf16_wy_ucache_flush",
    function="gated_delta_rule_mtp_ucache_flush",
    kernel_file="flashinfer/gdn_kernels/gdn_decode_bf16_wy_ucache_flush.py",
    closure=(),  # imports torch, cutlass (CuTe DSL) and cuda.bindings only
    stubs=registry.markers("flashinfer/__init__.py", "flashinfer/gdn_kernels/__init__.py"),
    subdir="replay",
    sha256=(("flashinfer/gdn_kernels/gdn_decode_bf16_wy_ucache_flush.py",
             "1617281ab20a1e8057881a708daae67b1b3ce614aebcb4aeb5869253e95d0f3a"),),
)


class FlashinferReplay(ReplayPeer):
    key = KEY
    label = "FlashInfer ring"

    def kernel_skip(self, p: Any) -> Optional[str]:
        if p.state != "bf16":
            return "bf16 checkpoint only (its module's state dtype is its io dtype)"
        if p.k not in (4, 8):
            return "T in {4, 8} only"
        if p.dk != 128 or p.dv != 128:
            return "K = V = 128 only"
        return None

    def rule(self, p: Any) -> cursors.Rule:
        return cursors.flashinfer_rule(WINDOW, RING)

    def memory_bytes(self, p: Any) -> int:
        return p.tile * 2 + RING * (p.hv * p.dv * 2 + p.hk * p.dk * 2 + p.hv * 4)

    def bound(self, p: Any, mod: Any, device: str = "cuda") -> "_Bound":
        return _Bound(p, self, mod, device)


class _Bound(ReplayBound):
    def __init__(self, p: Any, r: FlashinferReplay, mod: Any, device: str):
        import torch

        self.r, self.mod = r, mod
        self.flush_min = WINDOW - p.k + 1
        self.idx = torch.arange(p.n, dtype=torch.int32, device=device)
        super().__init__(p, fam.trajectory(p, r.rule(p)), r.variant(),
                         f"one launch per layer, cursor commit/{p.layers}; bf16 ring of "
                         f"{RING}, flush at len >= {self.flush_min}", device)

    def arrays(self, x: Any, layers: int, history: bool) -> dict[str, Any]:
        import torch

        p, n, dev, io = self.p, self.p.n, x.q.device, x.q.dtype
        if history:
            k = x.hist_k[:, :RING].permute(0, 2, 1, 3)
            u = x.hist_u[:, :RING].permute(0, 2, 1, 3)
            G = torch.cumsum(x.hist_g[:, :RING], dim=1).permute(0, 2, 1)
        else:
            k = torch.zeros((n, p.hk, RING, p.dk), device=dev)
            u = torch.zeros((n, p.hv, RING, p.dv), device=dev)
            G = torch.zeros((n, p.hv, RING), device=dev)
        # NOTE: copies: the folds write the checkpoint, never the inputs other runners read.
        return {"h0": x.state.clone(), "k": k.to(io).contiguous(),
                "u": u.to(io).contiguous(), "G": G.float().contiguous()}

    def tokens(self, t: Any) -> dict[str, Any]:
        import torch

        p = self.p
        return {"q": t.q.view(p.n, p.k, p.hk, p.dk), "k": t.k.view(p.n, p.k, p.hk, p.dk),
                "v": t.v.view(p.n, p.k, p.hv, p.dv), "a": t.a.view(p.n, p.k, p.hv),
                "b": t.b.view(p.n, p.k, p.hv),
                # NOTE: cast here once a set, as its wrapper would on its first call: its cache of
                # the cast is keyed by the tensor, and a first call during capture would put the
                # cast kernel into the timed graph (once per set).
                "A_log": t.a_log.to(torch.bfloat16), "dt_bias": t.dt_bias.to(torch.bfloat16),
                "out": torch.empty(p.n, p.k, p.hv, p.dv, dtype=t.q.dtype, device=t.q.device)}

    def cursors(self, base: Sequence[int], length: Sequence[int], fold: Sequence[bool]) -> Any:
        import torch

        return {"len": torch.tensor(list(length), dtype=torch.int32, device=self.device),
                "base": torch.tensor(list(base), dtype=torch.int32, device=self.device)}

    def launch(self, arr: dict[str, Any], tok: dict[str, Any], cur: Any) -> None:
        self.mod.gated_delta_rule_mtp_ucache_flush(
            A_log=tok["A_log"], a=tok["a"], dt_bias=tok["dt_bias"], q=tok["q"], k=tok["k"],
            v=tok["v"], b=tok["b"], initial_state_source=arr["h0"],
            initial_state_indices=self.idx, use_qk_l2norm_in_kernel=True, scale=self.p.scale,
            output=tok["out"], k_cache=arr["k"], u_cache=arr["u"], g_cache=arr["G"],
            hist_len=cur["len"], cache_base=cur["base"], flush_min=self.flush_min,
            restart_hist_on_flush=False)

    def commit(self, arr: Optional[dict[str, Any]], cur: Any, acc: Any) -> None:
        import torch

        length, base = cur["len"], cur["base"]
        flushed = length >= self.flush_min
        base.copy_(torch.where(flushed, (base + length) & (RING - 1), base))
        length.copy_(torch.where(flushed, acc, length + acc))

    def output(self, tok: dict[str, Any]) -> Any:
        return tok["out"].reshape(self.p.rows, -1).float()

    def materialize(self, arr: dict[str, Any], cur: Any) -> Any:
        pos = ring_positions(host_ints(cur["base"]), host_ints(cur["len"]), RING)
        return s_cur(arr["h0"], arr["u"], arr["k"], arr["G"], pos, cumulative=True)
