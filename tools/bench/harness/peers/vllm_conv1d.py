# SPDX-License-Identifier: Apache-2.0
"""vLLM conv1d: `causal_conv1d_update` with num_accepted_tokens (registry key vllm_conv1d), as
vLLM's GDN layer calls it for speculative decode.

Mapping to wyjit's window form: x [N*K, C] varlen (query_start_loc = 0, K, 2K, ..,
max_query_len = K); conv_state_indices = b over a pool of N lines, each [W-2+K][C] in memory
(channels contiguous, passed as the [N, C, W-2+K] view vLLM expects: wyjit's tc); weight [C, W];
activation silu. vLLM reads its W-1 history columns from offset num_accepted_tokens - 1 and
writes back W-2+K columns [h_1 .. h_{W-2}, x_0 .. x_{K-1}] in place: wyjit's window z without
its first column (wyjit keeps W-1+K columns and the next launch's offset is the accepted
count). The harness sets num_accepted_tokens = wyjit's offset + 1 so both read the same
history. It moves one column per channel and sequence fewer than the point's bytes model. It
has no per-token (intermediate) form. Its output is allocated inside the call.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _load, registry

KEY = "vllm_conv1d"

SOURCE = registry.Peer(
    key=KEY,
    repo="vllm-project/vllm",
    commit="03c6dad84ad3b1df303e98805a3a0324d70e1539",
    root="",
    module="vllm.model_executor.layers.mamba.ops.causal_conv1d",
    function="causal_conv1d_update",
    kernel_file="vllm/model_executor/layers/mamba/ops/causal_conv1d.py",
    closure=(),
    stubs=(
        *registry.VLLM_MARKERS,
        *registry.markers(
            "vllm/model_executor/layers/mamba/__init__.py",
            "vllm/model_executor/layers/mamba/ops/__init__.py",
            "vllm/attention/__init__.py",
            "vllm/attention/backends/__init__.py",
        ),
        registry.Stub(
            "vllm/attention/backends/utils.py",
            "# STUB (wyjit harness) for vllm.attention.backends.utils: only PAD_SLOT_ID.\n"
            "PAD_SLOT_ID = -1\n",
            "the real module imports the attention backends; causal_conv1d.py needs only "
            "PAD_SLOT_ID",
        ),
        registry.VLLM_TRITON_UTILS,
    ),
    fallbacks=(
        registry.Stub(
            "numpy/__init__.py",
            "# STUB (wyjit harness): fallback used only when numpy is not installed.\n"
            "# vLLM causal_conv1d.py uses numpy only in causal_conv1d_fn (prefill), never in\n"
            "# causal_conv1d_update.\n\n\n"
            "def __getattr__(name):\n"
            '    raise ImportError(f"numpy is not installed (numpy.{name} was asked for)")\n',
            "vLLM causal_conv1d.py imports numpy at module level",
        ),
    ),
)


class VllmConv1d:
    key = KEY
    label = "vLLM conv"
    kind = "peer"

    def skip_reason(self, p: Any) -> Optional[str]:
        if p.rollback != "window":
            return "keeps a sliding window (window form) only, no per-token states"
        if p.width > 6:
            return "kernel widths up to 6 only"
        return None

    def setup(self, p: Any, ctx: Any) -> "_Bound":
        return _Bound(p, _load.load(KEY, ctx.peers_dir))


class _Bound:
    def __init__(self, p: Any, fn: Any):
        self.p, self.fn = p, fn
        src = registry.peer(KEY)
        self.variant = f"{src.function} @ {src.commit[:12]}"
        self.note = "window of W-2+K columns, [cols][channels]"

    def buffers(self, x: Any) -> dict[str, Any]:
        import torch

        p, dev = self.p, x.x.device
        cols = p.width - 2 + p.k
        # [N, cols, C] in memory, always a copy (the inputs are shared by every runner).
        mem = x.window[..., :cols].transpose(1, 2).clone(memory_format=torch.contiguous_format)
        return {
            "x": x.x, "weight": x.weight, "bias": x.bias,
            "conv_state": mem.transpose(1, 2),  # [N, C, cols], channels contiguous
            "idx": torch.arange(p.n, dtype=torch.int32, device=dev),
            "accepted": torch.full((p.n,), p.offset + 1, dtype=torch.int32, device=dev),
            "qsl": torch.arange(0, p.rows + 1, p.k, dtype=torch.int32, device=dev),
            "y": None,
        }

    def __call__(self, b: dict[str, Any]) -> None:
        b["y"] = self.fn(
            b["x"], b["conv_state"], b["weight"], b["bias"],
            activation="silu" if self.p.silu else None, conv_state_indices=b["idx"],
            num_accepted_tokens=b["accepted"], query_start_loc=b["qsl"], max_query_len=self.p.k,
        )

    def readback(self, b: dict[str, Any]) -> dict[str, Any]:
        return {"y": b["y"].float(), "window_tail": b["conv_state"].float()}
