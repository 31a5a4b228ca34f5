# SPDX-License-Identifier: Apache-2.0
"""One launch per family launch and addressing mode, on whatever tensors a factory makes: what
tools/bench/python_host_cost.py times and what test_prepared.py checks prepared launches on. At
the host-cost benchmark's point (N = 1, K = 4, the Qwen3-Next GDN layer: HK 16, HV 32, dk = dv = 128, bf16 io,
f32 state; its conv1d: 8192 channels, width 4), on whatever tensors a factory makes.

Each case names the arrays an engine hands over anew every step (`step`: the token inputs and
outputs, the step's slot indices); the rest (state pools, logs, weights, cursors) stay.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import wyjit

B, K, HK, HV, D = 1, 4, 16, 32, 128
C, W = 2 * HK * D + HV * D, 4  # conv1d channels (q, k and v of the layer), width
SLOTS = 8  # slot pools: a few sequences' worth

#: make(shape, dtype) -> a tensor (or stand-in); dtype is torch's name ("bfloat16", "int32").
Make = Callable[[tuple, str], Any]


class Stager:
    """A TableStager's stand-in (a real one needs a device): what a launch reads of it."""

    def __init__(self, writes: int, max_batch: int):
        self.writes, self.max_batch = writes, max_batch
        self.tables, self.slab_stride = 0x7E0000000000, max_batch


@dataclasses.dataclass
class Case:
    launch: str  #: the wyjit function, e.g. "gdn_verify"
    addressing: str
    spec: wyjit.Spec
    arguments: dict
    step: tuple  #: the arrays an engine passes anew each step

    @property
    def label(self) -> str:
        return f"{self.launch} {self.addressing}"


def _tokens(make: Make) -> dict:
    bf = "bfloat16"
    n = B * K
    return dict(batch=B, num_k_heads=HK, num_v_heads=HV,
                q=make((n, HK * D), bf), k=make((n, HK * D), bf), v=make((n, HV * D), bf),
                out=make((n, HV * D), bf), g=make((n, HV), "float32"),
                beta=make((n, HV), "float32"))


_TOKENS = ("q", "k", "v", "g", "beta", "out")


def _states(make: Make, addressing: str, writes: int, tile: tuple, inter: bool = True,
            dtype: str = "float32") -> tuple[dict, tuple]:
    """State arguments of one addressing mode, and which of them change every step."""
    if addressing == "strided":
        refs = dict(state=make((B, *tile), dtype))
        if inter and writes > 1:
            refs["inter"] = make((B, writes - 1, *tile), dtype)
        return refs, ()
    if addressing == "table":
        return dict(tables=Stager(writes, max_batch=B)), ()
    refs = dict(state=make((SLOTS, *tile), dtype), read_slot=make((B,), "int32"))
    if writes:
        refs["write_slot"] = make((B, writes), "int32")
        return refs, ("read_slot", "write_slot")
    return refs, ("read_slot",)


def cases(make: Make) -> list[Case]:
    out = []
    for addressing in ("strided", "table", "slot"):
        spec = wyjit.Spec.make("gdn_verify", k=K, io="bf16", addressing=addressing)
        refs, step = _states(make, addressing, K, (HV, D, D))
        out.append(Case("gdn_verify", addressing, spec, dict(_tokens(make), **refs),
                        _TOKENS + step))
    for addressing in ("strided", "table", "slot"):
        spec = wyjit.Spec.make("conv1d_update", k=K, width=W, io="bf16", weight="bf16",
                               rollback="window", addressing=addressing, silu=True)
        cols = W - 1 + K
        refs, step = _states(make, addressing, 1, (C, cols), dtype="bfloat16")
        if addressing == "table":
            refs.update(state_cols=cols, state_channel_stride=cols, state_col_stride=1)
        arguments = dict(batch=B, channels=C, x=make((B * K, C), "bfloat16"),
                         y=make((B * K, C), "bfloat16"), weight=make((C, W), "bfloat16"),
                         window_offset=make((B,), "int32"), **refs)
        out.append(Case("conv1d_update", addressing, spec, arguments,
                        ("x", "y", "window_offset") + step))
    log = wyjit.gdn_replay_log_floats(wyjit.Spec.make("gdn_replay", k=K), HK, HV)
    for addressing in ("strided", "table", "slot"):
        spec = wyjit.Spec.make("gdn_replay", k=K, io="bf16", addressing=addressing)
        refs, step = _states(make, addressing, 1, (HV, D, D), inter=False)
        if addressing == "strided":
            refs["log"] = make((B, log), "float32")
        elif addressing == "table":
            refs["log_tables"] = Stager(1, max_batch=B)
        else:
            refs.update(log=make((SLOTS, log), "float32"), log_slot=make((B,), "int32"))
            step += ("log_slot",)
        cursor = make((B, 2), "int32")
        out.append(Case("gdn_replay_verify", addressing, spec,
                        dict(_tokens(make), cursor=cursor, **refs), _TOKENS + step))
        materialize = {n: v for n, v in refs.items() if n != "write_slot"}
        if addressing == "strided":
            materialize["out"] = make((B, HV, D, D), "float32")
        elif addressing == "table":
            materialize["out_tables"] = Stager(1, max_batch=B)
        else:
            materialize.update(out=make((SLOTS, HV, D, D), "float32"),
                               out_slot=make((B,), "int32"))
        out.append(Case("gdn_replay_materialize", addressing, spec,
                        dict(batch=B, num_k_heads=HK, num_v_heads=HV, cursor=cursor,
                             **materialize),
                        tuple(n for n in ("read_slot", "log_slot", "out_slot")
                              if n in materialize)))
        if addressing == "strided":  # commit reads no states: one case
            out.append(Case("gdn_replay_commit", "-", spec,
                            dict(batch=B, cursor=cursor, accepted=make((B,), "int32")),
                            ("accepted",)))
    return out


def fresh_step(case: Case, make: Make) -> dict:
    """New arrays for a case's step arguments, alike to the ones it was prepared with."""
    new = {}
    for name in case.step:
        old = case.arguments[name]
        new[name] = make(tuple(old.shape), str(old.dtype).split(".")[-1])
    return new
