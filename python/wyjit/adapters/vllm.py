# SPDX-License-Identifier: Apache-2.0
"""vLLM's call conventions on wyjit's kernels (vllm-project/vllm @ 03c6dad8):

- fused_recurrent_gated_delta_rule (vllm/model_executor/layers/fla/ops/fused_recurrent.py) in
  the forms vLLM's GDN layer calls: spec decode (cu_seqlens, ssm_state_indices [N, K],
  num_accepted_tokens, inplace_final_state=True) and decode (ssm_state_indices [N]);
- causal_conv1d_update (vllm/model_executor/layers/mamba/ops/causal_conv1d.py) without
  num_accepted_tokens; the spec-decode form is refused (see its docstring).

Same argument names, defaults, shapes, dtypes and results: the tensors vLLM's kernels write in
place are written in place, and the outputs vLLM allocates are allocated the same way
(q.new_empty / torch.empty_like). Inputs are never copied; where vLLM indexes the state pool
through its own arrays, the adapter derives wyjit's int32 read slots ([N]) on the device.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _common as c

PAD_SLOT_ID = -1
_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def _dtype(name: str, t: torch.Tensor) -> str:
    got = _DTYPES.get(t.dtype)
    if got is None:
        raise c.refuse(name, t, "wyjit's kernels take float32, float16 or bfloat16")
    return got


def fused_recurrent_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor = None,
    scale: float = None,
    initial_state: torch.Tensor = None,
    inplace_final_state: bool = True,
    cu_seqlens: Optional[torch.LongTensor] = None,
    ssm_state_indices: Optional[torch.Tensor] = None,
    num_accepted_tokens: Optional[torch.Tensor] = None,
    retrieve_parent_token: Optional[torch.Tensor] = None,
    use_qk_l2norm_in_kernel: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM's gated delta rule over a state pool, on wyjit's gdn_verify (slot addressing, kv
    layout: vLLM's [HV][dk][dv] states are wyjit's kv tiles, the same bytes).

    q, k [1, T, H, dk] with cu_seqlens [N+1] (or [N, K, H, dk] without); v [., ., HV, dv]; g,
    beta float32 [., ., HV]; initial_state [slots, HV, dk, dv] (f32/f16/bf16).
    ssm_state_indices [N, >= K] int32: sequence n reads slot ssm_state_indices[n,
    num_accepted_tokens[n]-1] (column 0 without num_accepted_tokens) and writes the state after
    its token t to slot ssm_state_indices[n, t], in initial_state; [N] for one token a sequence.
    A slot of -1 (PAD_SLOT_ID) read marks padding: nothing of that sequence is written.
    Every live sequence has K tokens at rows n*K.. (checked on the host: _common.CHECK_LENGTHS).

    Returns (o, final_state): o = q.new_empty(v.shape) (rows of padded sequences are left as
    allocated), final_state is initial_state, written in place.

    Refused (InvalidArgumentError naming the argument): inplace_final_state=False (wyjit reads
    and writes one pool), retrieve_parent_token (trees), no ssm_state_indices or
    initial_state, beta None or per value channel, K or head dims wyjit has no variant for."""
    if cu_seqlens is not None and q.shape[0] != 1:
        raise c.refuse("q", q, "the batch size must be 1 when using cu_seqlens (vLLM's rule)")
    if scale is None:
        scale = k.shape[-1] ** -0.5
    elif not scale > 0:
        raise c.refuse("scale", scale, "must be positive")
    for name, value, why in (
        ("retrieve_parent_token", retrieve_parent_token,
         "tree verification is not in wyjit's classic family yet"),
        ("beta", None if beta is not None else "None",
         "wyjit needs beta [., ., HV] (vLLM's default ones_like(q[..., 0]) has H heads)"),
        ("initial_state", None if initial_state is not None else "None",
         "wyjit verifies from a state pool: pass initial_state"),
        ("ssm_state_indices", None if ssm_state_indices is not None else "None",
         "the adapter takes vLLM's continuous-batching forms (a slot per sequence and token)"),
    ):
        if value is not None:
            raise c.refuse(name, value, why)
    if not inplace_final_state:
        raise c.refuse("inplace_final_state", False,
                       "wyjit reads and writes one state pool; vLLM's spec decode passes True")
    if beta.ndim == v.ndim:
        raise c.refuse("beta", beta, "a beta per value channel (headwise) has no wyjit variant")

    B, T, H, dk = k.shape
    HV, dv = v.shape[2], v.shape[-1]
    n = B if cu_seqlens is None else cu_seqlens.shape[0] - 1
    idx = ssm_state_indices
    if idx.ndim == 1:
        kk = T if cu_seqlens is None else 1
        if kk != 1:
            raise c.refuse("ssm_state_indices", idx,
                           f"one slot a sequence fits one token a sequence, not {kk}")
    else:
        kk = T if cu_seqlens is None else idx.shape[1]
        if idx.shape[1] < kk:
            raise c.refuse("ssm_state_indices", idx, f"needs >= K = {kk} slots a sequence")
    if cu_seqlens is not None:
        c.check_uniform("cu_seqlens", cu_seqlens, n, kk, T)
    batch = min(n, (T // kk) if cu_seqlens is not None else n)
    if batch < 1:
        raise c.refuse("q", q, f"no sequence of K = {kk} tokens in {T} tokens")
    rows = batch * kk

    name = c.variant("gdn_verify", "q/v/initial_state", k=kk, io=_dtype("q", q),
                     state=_dtype("initial_state", initial_state), addressing="slot",
                     layout="kv", dk=dk, dv=dv, l2norm=bool(use_qk_l2norm_in_kernel))
    o = q.new_empty(1, *v.shape)  # vLLM: q.new_empty(NK, *v.shape), NK = 1
    flat = cu_seqlens is not None  # [1, T, ...] rows, else [N, K, ...]

    def tokens(t: torch.Tensor) -> torch.Tensor:
        return t[0, :rows] if flat else t

    if idx.ndim == 1:
        read = write = c.int32_slots(idx[:batch])
    else:
        if num_accepted_tokens is None:
            read = idx[:batch, 0]
        else:
            read = idx[:batch].gather(1, (num_accepted_tokens[:batch].long() - 1).view(-1, 1))
        read, write = c.int32_slots(read.view(-1)), c.int32_slots(idx[:batch])
    kernel = c.kernel(name, q.device)
    c.gdn_verify(kernel, stream=c.stream(q.device), batch=batch, num_k_heads=H,
                 num_v_heads=HV, q=tokens(q), k=tokens(k), v=tokens(v), g=tokens(g),
                 beta=tokens(beta), out=tokens(o[0]), scale=scale, state=initial_state,
                 read_slot=read, write_slot=write)
    return o.squeeze(0), initial_state


def causal_conv1d_update(
    x: torch.Tensor,
    conv_state: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor] = None,
    activation: "bool | str | None" = None,
    conv_state_indices: Optional[torch.Tensor] = None,
    num_accepted_tokens: Optional[torch.Tensor] = None,
    query_start_loc: Optional[torch.Tensor] = None,
    max_query_len: int = -1,
    pad_slot_id: int = PAD_SLOT_ID,
    block_idx_last_scheduled_token: Optional[torch.Tensor] = None,
    initial_state_idx: Optional[torch.Tensor] = None,
    retrieve_parent_token: Optional[torch.Tensor] = None,
    validate_data: bool = False,
) -> torch.Tensor:
    """vLLM's conv1d update over a pool of conv states, on wyjit's conv1d_update (intermediate
    form, slot addressing, writing only the final state): line conv_state_indices[b] (b
    without indices) holds W-1 history columns in [0, W-1), any strides ([lines, dim, cols],
    vLLM's channels-contiguous view included); the K tokens of sequence b are x rows b*K..
    (query_start_loc [N+1] with max_query_len = K, checked on the host like cu_seqlens) or x
    [batch, dim] (one token) or [batch, dim, K]. A line index equal to pad_slot_id is padding.
    Writes the state after the last token over the line's columns [0, W-1); returns
    torch.empty_like(x) holding y.

    Refused: num_accepted_tokens (vLLM's spec-decode window keeps W-2+K columns and writes the
    window without its oldest column; wyjit's window form writes all W-1+K columns from column
    0, so it would need one column more a line), prefix caching (block_idx_last_scheduled_token,
    initial_state_idx), retrieve_parent_token, x and conv_state of different dtypes (vLLM
    converts x), weight/bias of a third dtype."""
    if isinstance(activation, bool):
        activation = "silu" if activation else None
    elif activation is not None and activation not in ("silu", "swish"):
        raise c.refuse("activation", activation, "allowed: None, True, False, 'silu', 'swish'")
    for name, value, why in (
        ("num_accepted_tokens", num_accepted_tokens,
         "vLLM's spec-decode conv window (W-2+K columns a line, written without its oldest "
         "column) does not fit wyjit's window form (W-1+K columns from column 0)"),
        ("block_idx_last_scheduled_token", block_idx_last_scheduled_token,
         "prefix caching has no wyjit variant"),
        ("initial_state_idx", initial_state_idx, "prefix caching has no wyjit variant"),
        ("retrieve_parent_token", retrieve_parent_token,
         "tree verification is not in wyjit's conv1d family"),
    ):
        if value is not None:
            raise c.refuse(name, value, why)
    if x.dtype != conv_state.dtype:
        raise c.refuse("x", x, f"wyjit reads x in conv_state's dtype "
                               f"{str(conv_state.dtype).replace('torch.', '')} (vLLM converts)")
    channels, width = weight.shape
    if query_start_loc is not None:
        if conv_state_indices is None:
            raise c.refuse("conv_state_indices", "None", "vLLM needs it with query_start_loc")
        batch, kk = conv_state_indices.shape[0], max_query_len
        if kk < 1:
            raise c.refuse("max_query_len", max_query_len, "K tokens a sequence, >= 1")
        c.check_uniform("query_start_loc", query_start_loc, batch, kk, x.shape[0])
        rows = x[:batch * kk]
    elif x.dim() == 2:
        batch, kk, rows = x.shape[0], 1, x
    else:
        batch, kk, rows = x.shape[0], x.shape[2], x.transpose(1, 2)  # [batch, K, dim]
    if conv_state_indices is None:
        lines = torch.arange(batch, dtype=torch.int32, device=x.device)
    else:
        lines = conv_state_indices[:batch].view(-1)
    if pad_slot_id is not None:
        lines = torch.where(lines == pad_slot_id, -1, lines)
    read = c.int32_slots(lines)
    write = c.final_only(read, kk)

    wt = _dtype("weight", weight)
    if bias is not None and bias.dtype != weight.dtype:
        raise c.refuse("bias", bias, "wyjit reads bias in weight's dtype")
    name = c.variant("conv1d_update", "x/weight", k=kk, io=_dtype("x", x), width=width,
                     weight=wt, rollback="intermediate", addressing="slot",
                     bias=bias is not None, silu=activation is not None)
    out = torch.empty_like(x)
    if query_start_loc is not None:
        y = out[:batch * kk]
    else:
        y = out if out.dim() == 2 else out.transpose(1, 2)
    tile = conv_state[..., :width - 1]  # [lines, dim, W-1]: the columns the state occupies
    kernel = c.kernel(name, x.device)
    c.conv1d_update(kernel, stream=c.stream(x.device), batch=batch, channels=channels, x=rows,
                    y=y, weight=weight, bias=bias, state=tile, read_slot=read, write_slot=write)
    return out
