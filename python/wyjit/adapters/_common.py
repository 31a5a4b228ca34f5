# SPDX-License-Identifier: Apache-2.0
"""What the engine adapters share: the kernel of a variant on a tensor's device, the launches
(module attributes, so a CPU test can swap in an emulation after the real checks), refusals in
wyjit's words, the uniform-length check of a varlen batch, and int32 slot arrays."""

from __future__ import annotations

from typing import Any, Optional

import torch

from .. import _conv1d, _errors, _verify
from .. import torch_ops as _torch_ops

#: Read cu_seqlens / query_start_loc on the host (outside CUDA-graph capture) to check that
#: every sequence has the same number of tokens. One device-to-host copy per call;
#: wyjit.adapters.check_lengths(False) turns it off once an engine is known to pass them so.
CHECK_LENGTHS = True

# The launches and the kernel look-up the adapters call (tests replace them).
gdn_verify = _verify.gdn_verify
conv1d_update = _conv1d.conv1d_update


def kernel(name: str, device: torch.device) -> Any:
    """The loaded kernel of variant `name` on `device` (compiled on first use, kept): the one
    wyjit.torch_ops launches, through its manager (wyjit.torch_ops.use_jit)."""
    return _torch_ops.kernel(name, device)


def stream(device: torch.device) -> Any:
    return torch.cuda.current_stream(device) if device.type == "cuda" else None


def refuse(name: str, value: Any, why: str) -> _errors.InvalidArgumentError:
    """`name is <value>: <why>`, wyjit's form for an argument it cannot take."""
    shown = describe(value) if isinstance(value, torch.Tensor) else repr(value)
    return _errors.invalid_argument(f"{name} is {shown}: {why}")


def describe(t: torch.Tensor) -> str:
    return f"a {str(t.dtype).replace('torch.', '')} tensor of shape {list(t.shape)}"


def variant(family: str, name: str, **fields: Any) -> str:
    """The canonical name of `family` with `fields`; an unsupported field names the engine's
    argument it came from (`name`)."""
    from .._spec import Spec

    try:
        return Spec.make(family, **fields).name
    except _errors.InvalidSpecError as e:
        raise _errors.invalid_argument(f"{name}: wyjit has no such {family} variant ({e})") from e


def check_uniform(name: str, starts: Optional[torch.Tensor], batch: int, k: int,
                  tokens: int) -> None:
    """`starts` ([N+1] token offsets) must put sequence b at rows [b*k, b*k+k) or give it no
    tokens (padding, after the live ones): the layout of one launch of K tokens a sequence.
    Skipped under CUDA-graph capture and when CHECK_LENGTHS is off."""
    if starts is None or not CHECK_LENGTHS:
        return
    if starts.is_cuda and torch.cuda.is_current_stream_capturing():
        return
    values = starts.tolist()
    live = 0
    while live < batch and values[live + 1] - values[live] == k and values[live] == live * k:
        live += 1
    rest = values[live:]
    if any(v != rest[0] for v in rest) or (rest and rest[0] > tokens):
        raise _errors.invalid_argument(
            f"{name} is {values[:9]}{'...' if len(values) > 9 else ''}: wyjit verifies the same "
            f"number of tokens K = {k} for every sequence (offsets 0, {k}, {2 * k}, ..., then "
            "padding of length 0)"
        )


def int32_slots(t: torch.Tensor) -> torch.Tensor:
    """`t` as a contiguous int32 array (the library reads int32 slots): itself when it is one,
    else a converted copy of the index array (never of a state or token tensor)."""
    if t.dtype == torch.int32 and t.is_contiguous():
        return t
    return t.to(torch.int32).contiguous()


def final_only(slots: torch.Tensor, k: int) -> torch.Tensor:
    """write_slot [N, k] that skips the states after tokens 0..k-2 (-1) and writes the final
    one to `slots`; `slots` itself when k == 1."""
    if k == 1:
        return slots
    out = torch.full((slots.shape[0], k), -1, dtype=torch.int32, device=slots.device)
    out[:, k - 1] = slots
    return out


def no_writes(batch: int, k: int, device: torch.device) -> torch.Tensor:
    return torch.full((batch, k), -1, dtype=torch.int32, device=device)
