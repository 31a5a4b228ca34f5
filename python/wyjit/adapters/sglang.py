# SPDX-License-Identifier: Apache-2.0
"""SGLang's call convention on wyjit's kernels (sgl-project/sglang @ 00e1106f):
fused_sigmoid_gating_delta_rule_update
(python/sglang/kernels/ops/attention/fla/fused_sigmoid_gating_recurrent.py), the fused-gating
kernel of SGLang's GDN decode and target-verify steps.

Same argument names, defaults, shapes, dtypes and results; the output is allocated as SGLang
allocates it (q.new_empty). Retrieval trees (retrieve_parent_token) are refused until wyjit's
tree family lands.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _common as c
from .vllm import _dtype


def fused_sigmoid_gating_delta_rule_update(
    A_log: torch.Tensor,
    a: torch.Tensor,
    dt_bias: torch.Tensor,
    softplus_beta: float,
    softplus_threshold: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    b: torch.Tensor,
    initial_state_source: torch.Tensor,
    initial_state_indices: torch.Tensor,
    scale: Optional[float] = None,
    use_qk_l2norm_in_kernel: bool = False,
    cu_seqlens: Optional[torch.Tensor] = None,
    is_kda: bool = False,
    disable_state_update: bool = False,
    intermediate_states_buffer: Optional[torch.Tensor] = None,
    intermediate_state_indices: Optional[torch.Tensor] = None,
    cache_steps: Optional[int] = None,
    retrieve_parent_token: Optional[torch.Tensor] = None,
    cache_ring: bool = False,
    replayssm_rawv: Optional[torch.Tensor] = None,
    replayssm_rawk: Optional[torch.Tensor] = None,
    replayssm_g: Optional[torch.Tensor] = None,
    replayssm_beta: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """SGLang's fused sigmoid-gating delta rule on wyjit's gdn_verify (fused gating: g =
    -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b); slot addressing, vk layout:
    SGLang's [HV][dv][dk] states are wyjit's vk tiles).

    q, k [1, T, H, dk] with cu_seqlens [N+1] (or [N, K, H, dk]); v [., ., HV, dv]; a, b
    [T, HV] or [., ., HV] in q's dtype (any token stride); A_log and dt_bias float32 [HV];
    initial_state_source [slots, HV, dv, dk]; initial_state_indices [N]. Every sequence has K
    = T/N tokens (cu_seqlens checked on the host: _common.CHECK_LENGTHS). Three modes:

    - decode (disable_state_update=False, no intermediate_states_buffer): the final state goes
      back to initial_state_source[initial_state_indices[n]];
    - target verify (disable_state_update=True with intermediate_states_buffer
      [S, steps >= K, HV, dv, dk] of initial_state_source's dtype and
      intermediate_state_indices [N]): the state after token t goes to
      buffer[intermediate_state_indices[n], t], the pool is only read. NOTE: wyjit reads and
      writes one pool, so the adapter first copies each sequence's initial state into
      buffer[idx, 0] (one tile a sequence; the launch reads it there and writes the state
      after token 0 over it);
    - disable_state_update=True without a buffer: out only.

    Returns o = q.new_empty(v.shape). A negative index (either) marks padding: nothing of
    that sequence is written (SGLang instead runs it from a zero state / writes no states).
    When every sequence is padding, the copy lands on buffer[max(idx_0, 0), 0].

    Refused (InvalidArgumentError naming the argument): retrieve_parent_token (trees),
    is_kda, cache_ring and the replayssm_* ring, softplus_beta != 1 or softplus_threshold
    != 20 (wyjit's softplus), initial_state_source None, disable_state_update=False with a
    buffer (K+1 writes a sequence), a buffer with fewer than K steps."""
    for name, value, why in (
        ("retrieve_parent_token", retrieve_parent_token,
         "tree verification is refused until wyjit's tree family lands"),
        ("is_kda", True if is_kda else None, "KDA (a gate per key channel) has no wyjit variant"),
        ("cache_ring", True if cache_ring else None,
         "the ReplaySSM ring is wyjit's replay family, not this call"),
        ("replayssm_rawv", replayssm_rawv, "the ReplaySSM ring is not this call"),
        ("replayssm_rawk", replayssm_rawk, "the ReplaySSM ring is not this call"),
        ("replayssm_g", replayssm_g, "the ReplaySSM ring is not this call"),
        ("replayssm_beta", replayssm_beta, "the ReplaySSM ring is not this call"),
        ("initial_state_source", None if initial_state_source is not None else "None",
         "wyjit verifies from a state pool: pass initial_state_source and its indices"),
    ):
        if value is not None:
            raise c.refuse(name, value, why)
    if softplus_beta != 1.0:
        raise c.refuse("softplus_beta", softplus_beta, "wyjit's fused gating uses 1.0")
    if softplus_threshold != 20.0:
        raise c.refuse("softplus_threshold", softplus_threshold, "wyjit's fused gating uses 20.0")
    buffer = intermediate_states_buffer
    if buffer is not None and not disable_state_update:
        raise c.refuse("disable_state_update", False,
                       "with intermediate_states_buffer a sequence writes K+1 states (the K "
                       "intermediate ones and the final one back to the pool); wyjit writes K")
    if scale is None:
        scale = k.shape[-1] ** -0.5
    elif not scale > 0:
        raise c.refuse("scale", scale, "must be positive")

    B, T, H, dk = k.shape
    HV, dv = v.shape[2], v.shape[-1]
    flat = cu_seqlens is not None
    n = cu_seqlens.shape[0] - 1 if flat else B
    kk = T // n if flat else T
    if n < 1 or kk < 1 or (flat and (B != 1 or T != n * kk)):
        raise c.refuse("q", q, f"wyjit needs the same K tokens for each of the {n} sequences"
                               + (" as [1, N*K, H, dk]" if flat else ""))
    if flat:
        c.check_uniform("cu_seqlens", cu_seqlens, n, kk, T)
    state_dtype = _dtype("initial_state_source", initial_state_source)
    name = c.variant("gdn_verify", "q/v/initial_state_source", k=kk, io=_dtype("q", q),
                     state=state_dtype, addressing="slot", layout="vk", dk=dk, dv=dv,
                     l2norm=bool(use_qk_l2norm_in_kernel), gating=True)
    o = q.new_empty(1, *v.shape).squeeze(0)  # SGLang: q.new_empty(NK, *v.shape), NK = 1

    def tokens(t: torch.Tensor) -> torch.Tensor:
        return t[0] if flat and t.dim() >= 3 else t

    src = initial_state_indices[:n].view(-1)
    if buffer is None:
        pool, read = initial_state_source, c.int32_slots(src)
        write = c.no_writes(n, kk, q.device) if disable_state_update else c.final_only(read, kk)
    else:
        pool, read, write = _stage_in_buffer(buffer, intermediate_state_indices, src,
                                             initial_state_source, n, kk)
    kernel = c.kernel(name, q.device)
    c.gdn_verify(kernel, stream=c.stream(q.device), batch=n, num_k_heads=H, num_v_heads=HV,
                 q=tokens(q), k=tokens(k), v=tokens(v), out=tokens(o), a=tokens(a),
                 b=tokens(b), a_log=A_log, dt_bias=dt_bias, scale=scale, state=pool,
                 read_slot=read, write_slot=write)
    return o


def _stage_in_buffer(buffer: torch.Tensor, cache_indices: Optional[torch.Tensor],
                     src: torch.Tensor, source: torch.Tensor, n: int, kk: int):
    """(pool, read_slot, write_slot) over the buffer's tiles, after copying each live
    sequence's initial state into its first buffer tile."""
    if cache_indices is None:
        raise c.refuse("intermediate_state_indices", "None",
                       "needed with intermediate_states_buffer")
    if buffer.dim() != 5 or buffer.shape[2:] != source.shape[1:]:
        raise c.refuse("intermediate_states_buffer", buffer,
                       f"expected [S, steps, {', '.join(map(str, source.shape[1:]))}]")
    if buffer.dtype != source.dtype:
        raise c.refuse("intermediate_states_buffer", buffer,
                       "wyjit reads and writes one pool: it must have initial_state_source's "
                       "dtype")
    steps = buffer.shape[1]
    if steps < kk:
        raise c.refuse("intermediate_states_buffer", buffer,
                       f"{steps} steps a sequence, K = {kk} states to keep")
    if not buffer.is_contiguous():
        raise c.refuse("intermediate_states_buffer", buffer, "must be contiguous (as SGLang "
                                                             "indexes it)")
    pool = buffer.view(-1, *buffer.shape[2:])  # [S*steps, HV, dv, dk]
    cache = cache_indices[:n].view(-1).long()
    from_ = src.long()
    live = (cache >= 0) & (from_ >= 0)
    base = cache * steps
    # NOTE: a padded sequence repeats the first live sequence's copy (same tile, same value),
    # so that the copy needs no host-side filtering and stays capturable.
    first = torch.argmax(live.to(torch.int32))
    dst = torch.where(live, base, base[first].clamp(min=0))
    pool.index_copy_(0, dst, source.index_select(0, torch.where(live, from_, from_[first])
                                                 .clamp(min=0)))
    read = torch.where(live, base, -1).to(torch.int32)
    steps_of = base[:, None] + torch.arange(kk, device=base.device)
    write = torch.where(live[:, None], steps_of, -1).to(torch.int32)
    return pool, read, write
