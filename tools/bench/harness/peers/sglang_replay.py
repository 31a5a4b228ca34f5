# SPDX-License-Identifier: Apache-2.0
"""SGLang ReplaySSM spec decode: `gdn_replayssm_spec_decode` (registry key sglang_replay), as
SGLang's GDN backend calls it for target verify (gdn_backend.py at the same commit:
launch_mode "verify", null_block_id -1), and the per-step commit of spec_utils.py
(commit_mamba_states_after_verify): `commit_gdn_replayssm_spec` then
`commit_gdn_replayssm_circular`, once per step for every layer.

Its log, per request slot and layer, a ring of L = linear_replayssm_cache_len entries (16; a
power of two >= 2K, so 32 at K = 16): per token d (= wyjit's u) [HV, L, dv] and the
normalised k [HK, L, dk] in the activation dtype (bf16), the token's own g [HV, L] fp32; with
a bf16 checkpoint also the bf16 low parts of d and k (d - bf16(d), k - bf16(k)) in two more
rings. Cursors write_pos / cache_base / is_flush [requests] (int32, int32, int8).

Unlike the others it folds at the commit, for all layers in one launch: the commit adds the
accepted entries (write_pos += accepted), marks the rows where write_pos + 2K > L (every row
after every commit with a 16-bit checkpoint: fold_every_commit), folds them into the
checkpoint (S0 <- e^{sum g} S0 + sum decay * d k^T with bf16 hi+lo dots) and empties their
log (base += write_pos, write_pos = 0). So its verify never folds (is_flush is 0 when it
runs) and reads at most L - 2K live entries.

Per layer (timed): the verify launch. Per step (timed, / layers): the cursor advance, the
fold of all layers (on a stack of `layers` checkpoints and logs, as the engine keeps them),
and the cursor finish. q/k/v split [N*K, H, d], a/b raw with A_log/dt_bias (in-kernel
gating), checkpoint [slots, HV, dv, dk] (dk contiguous: wyjit's vk), output preallocated.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import registry
from ._replay_peer import ReplayPeer, io_bytes, state_bytes, token_views
from ..families import _replay_cursors as cursors
from ..families import gdn_replay as fam
from ..families._replay_run import ReplayBound, host_ints, ring_positions, s_cur

KEY = "sglang_replay"

SOURCE = registry.Peer(
    key=KEY,
    repo="sgl-project/sglang",
    commit="150c91c63be13e46adacdab51387b27c927c9a41",
    root="python",
    module="sglang.kernels.ops.attention.fla.gdn_replayssm_spec_decode",
    function="gdn_replayssm_spec_decode",
    kernel_file="python/sglang/kernels/ops/attention/fla/gdn_replayssm_spec_decode.py",
    closure=(),  # imports only torch and triton
    stubs=registry.SGLANG_KERNELS_MARKERS,
    subdir="replay",
    sha256=(("python/sglang/kernels/ops/attention/fla/gdn_replayssm_spec_decode.py",
             "b4f0baa9244426907086e80a4a2f8d84204f8c7d5e34a41b713394b0de47d69d"),),
)


class SglangReplay(ReplayPeer):
    key = KEY
    label = "SGLang replay"

    def kernel_skip(self, p: Any) -> Optional[str]:
        if p.dk & (p.dk - 1) or p.dk < 32:
            return f"dk={p.dk}: needs a power of two >= 32 (its dk tile is dk/2 >= 16)"
        return None

    def rule(self, p: Any) -> cursors.Rule:
        return cursors.sglang_rule(p.k, p.state)

    def memory_bytes(self, p: Any) -> int:
        io, ring = io_bytes(p), self.rule(p).ring
        entry = p.hv * p.dv * io + p.hk * p.dk * io
        low = ring * entry if p.state != "f32" else 0
        return p.tile * state_bytes(p) + ring * (entry + p.hv * 4) + low

    def bound(self, p: Any, mod: Any, device: str = "cuda") -> "_Bound":
        return _Bound(p, self, mod, device)


class _Bound(ReplayBound):
    needs_stack = True  # its commit folds every layer in one launch

    def __init__(self, p: Any, r: SglangReplay, mod: Any, device: str):
        import torch

        self.r, self.mod, self.rl = r, mod, r.rule(p)
        self.idx = torch.arange(p.n, dtype=torch.int32, device=device)
        self.cu = torch.arange(0, p.rows + 1, p.k, dtype=torch.int32, device=device)
        super().__init__(p, fam.trajectory(p, self.rl), r.variant(),
                         f"verify per layer; commit + fold of all layers/{p.layers}; bf16 d/k "
                         f"log, L={self.rl.ring}", device)

    def arrays(self, x: Any, layers: int, history: bool) -> dict[str, Any]:
        import torch

        p, n, L, dev, io = self.p, self.p.n, self.rl.ring, x.q.device, x.q.dtype

        def stack(t: Any) -> Any:
            # NOTE: a copy even for one layer: the folds write the checkpoint, never the inputs.
            return t.unsqueeze(0).repeat(layers, *([1] * t.dim()))

        u = x.hist_u[:, :L].permute(0, 2, 1, 3) if history else \
            torch.zeros((n, p.hv, L, p.dv), device=dev)
        k = x.hist_k[:, :L].permute(0, 2, 1, 3) if history else \
            torch.zeros((n, p.hk, L, p.dk), device=dev)
        g = x.hist_g[:, :L].permute(0, 2, 1) if history else torch.zeros((n, p.hv, L), device=dev)
        arr = {"ckpt": stack(x.state), "d": stack(u.to(io)), "k": stack(k.to(io)),
               "g": stack(g.float()), "rawv": None, "rawk": None}
        if p.state != "f32":  # the low parts of d and k it keeps for a 16-bit checkpoint
            arr["rawv"] = stack((u - u.to(io).float()).to(io))
            arr["rawk"] = stack((k - k.to(io).float()).to(io))
        return arr

    def tokens(self, t: Any) -> dict[str, Any]:
        return token_views(self.p, t)

    def cursors(self, base: Sequence[int], length: Sequence[int], fold: Sequence[bool]) -> Any:
        import torch

        dev = self.device
        # NOTE: is_flush is 0 whenever a verify runs: the commit's finish clears it.
        return {"wp": torch.tensor(list(length), dtype=torch.int32, device=dev),
                "base": torch.tensor(list(base), dtype=torch.int32, device=dev),
                "flush": torch.zeros(len(base), dtype=torch.int8, device=dev)}

    def launch(self, arr: dict[str, Any], tok: dict[str, Any], cur: Any) -> None:
        p = self.p
        low = arr["rawv"] is not None
        self.mod.gdn_replayssm_spec_decode(
            q=tok["q"], k=tok["k"], v=tok["v"], a=tok["a"], b=tok["b"], A_log=tok["A_log"],
            dt_bias=tok["dt_bias"], checkpoint_state=arr["ckpt"][0], d_cache=arr["d"][0],
            k_cache=arr["k"][0], g_cache=arr["g"][0],
            rawv_cache=arr["rawv"][0] if low else None, rawk_cache=arr["rawk"][0] if low else None,
            beta_cache=None, out=tok["out"], query_start_loc=self.cu, ssm_state_indices=self.idx,
            replay_indices=self.idx, write_pos=cur["wp"], cache_base=cur["base"],
            is_flush=cur["flush"], max_cache_len=self.rl.ring, max_spec_len=p.k, scale=p.scale,
            use_qk_l2norm_in_kernel=True, null_block_id=-1, launch_mode="verify")

    def commit(self, arr: Optional[dict[str, Any]], cur: Any, acc: Any) -> None:
        assert arr is not None
        self.mod.commit_gdn_replayssm_spec(
            write_pos=cur["wp"], cache_base=cur["base"], is_flush=cur["flush"], num_accepted=acc,
            replay_indices=self.idx, max_cache_len=self.rl.ring, max_spec_len=self.p.k,
            fold_every_commit=self.p.state != "f32", null_block_id=-1)
        self.mod.commit_gdn_replayssm_circular(
            checkpoint_state=arr["ckpt"], d_cache=arr["d"], k_cache=arr["k"], g_cache=arr["g"],
            d_residual_cache=arr["rawv"], k_residual_cache=arr["rawk"],
            state_batch_indices=self.idx, replay_indices=self.idx, write_pos=cur["wp"],
            cache_base=cur["base"], is_flush=cur["flush"], accept_lens=acc, null_block_id=-1)

    def output(self, tok: dict[str, Any]) -> Any:
        return tok["out"].reshape(self.p.rows, -1).float()

    def materialize(self, arr: dict[str, Any], cur: Any) -> Any:
        u, k = arr["d"][0].double(), arr["k"][0].double()
        if arr["rawv"] is not None:
            u, k = u + arr["rawv"][0].double(), k + arr["rawk"][0].double()
        pos = ring_positions(host_ints(cur["base"]), host_ints(cur["wp"]), self.rl.ring)
        return s_cur(arr["ckpt"][0], u, k, arr["g"][0], pos, cumulative=False)
