# SPDX-License-Identifier: Apache-2.0
"""SGLang update: `fused_recurrent_gated_delta_rule_update` (registry key sglang_update), called
the way SGLang's target-verify step calls it.

Mapping to wyjit classic: q/k [1, N*K, HK, dk], v [1, N*K, HV, dv], g/beta fp32 [1, N*K, HV],
cu_seqlens = 0, K, 2K, .. (varlen, as the engine passes query_start_loc); the state pool
[N, HV, dv, dk] (wyjit's vk) read once through initial_state_indices = b;
disable_state_update=True with intermediate_states_buffer [N, K, HV, dv, dk] and
cache_steps=K, so the state after every token t = 0..K-1 is written to its own buffer entry:
one state read and K written, the bytes of wyjit classic. The final state is entry K-1 (wyjit
writes it over S0 instead). use_qk_l2norm_in_kernel=True, scale 1/sqrt(dk). Its output is
allocated inside the call (q.new_empty); under graph capture that comes from the graph's pool
once, so replays allocate nothing.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _load, registry

KEY = "sglang_update"

SOURCE = registry.Peer(
    key=KEY,
    repo="sgl-project/sglang",
    commit="10faf33794f8f43adc8bfe43eccc57415c9d16eb",
    root="python",
    module="sglang.srt.layers.attention.fla.fused_recurrent",
    function="fused_recurrent_gated_delta_rule_update",
    kernel_file=f"{registry.SGLANG_FLA}/fused_recurrent.py",
    closure=(
        f"{registry.SGLANG_FLA}/op.py",
        f"{registry.SGLANG_FLA}/stochastic_round.py",
        f"{registry.SGLANG_FLA}/utils.py",
    ),
    stubs=(*registry.SGLANG_SRT_MARKERS, registry.SGLANG_COMMON),
    fallbacks=(
        registry.Stub(
            "packaging/__init__.py",
            "# STUB (wyjit harness): fallback used only when `packaging` is not installed.\n",
            "sglang fla/utils.py imports packaging.version at module level",
        ),
        registry.Stub(
            "packaging/version.py",
            "# STUB (wyjit harness): fallback used only when `packaging` is not installed.\n"
            "# sglang fla/utils.py calls parse() only in check_environments(), never at import.\n"
            "import re\n\n\n"
            "class Version(tuple):\n"
            "    def __new__(cls, text):\n"
            '        return super().__new__(cls, (int(p) for p in re.findall(r"\\d+", str(text))[:3]))\n\n\n'
            "def parse(text):\n"
            "    return Version(text)\n",
            "sglang fla/utils.py imports packaging.version at module level",
        ),
    ),
)
INT32_LIMIT = 2**31


class SglangUpdate:
    key = KEY
    label = "SGLang update"
    kind = "peer"

    def skip_reason(self, p: Any) -> Optional[str]:
        if p.gating != "g":
            return "takes g/beta: no fused gating"
        if p.n * p.k * p.tile >= INT32_LIMIT:
            # NOTE: cache_idx * cache_steps * HV*K*V is int32 arithmetic with SGLang's int32
            # indices; past 2^31 elements the kernel would write out of bounds.
            return "intermediate-buffer offsets overflow int32 at this N*K"
        return None

    def setup(self, p: Any, ctx: Any) -> "_Bound":
        return _Bound(p, _load.load(KEY, ctx.peers_dir))


class _Bound:
    def __init__(self, p: Any, fn: Any):
        self.p, self.fn = p, fn
        src = registry.peer(KEY)
        self.variant = f"{src.function} @ {src.commit[:12]}"
        self.note = "state after each token in intermediate_states_buffer (K entries)"

    def buffers(self, x: Any) -> dict[str, Any]:
        import torch

        p, dev = self.p, x.q.device
        idx = torch.arange(p.n, dtype=torch.int32, device=dev)
        return {
            "q": x.q.view(1, p.rows, p.hk, p.dk), "k": x.k.view(1, p.rows, p.hk, p.dk),
            "v": x.v.view(1, p.rows, p.hv, p.dv),
            "g": x.g.view(1, p.rows, p.hv), "beta": x.beta.view(1, p.rows, p.hv),
            "pool": x.state.clone(), "idx": idx,
            "inter": torch.empty((p.n, p.k, p.hv, p.dv, p.dk), dtype=x.state.dtype, device=dev),
            "cu": torch.arange(0, p.rows + 1, p.k, dtype=torch.int32, device=dev),
            "out": None,
        }

    def __call__(self, b: dict[str, Any]) -> None:
        b["out"] = self.fn(
            q=b["q"], k=b["k"], v=b["v"], g=b["g"], beta=b["beta"], scale=self.p.scale,
            initial_state_source=b["pool"], initial_state_indices=b["idx"], cu_seqlens=b["cu"],
            use_qk_l2norm_in_kernel=True, disable_state_update=True,
            intermediate_states_buffer=b["inter"], intermediate_state_indices=b["idx"],
            cache_steps=self.p.k,
        )

    def readback(self, b: dict[str, Any]) -> dict[str, Any]:
        p = self.p
        return {"out": b["out"].reshape(p.rows, p.hv * p.dv).float(), "states": b["inter"].float()}
