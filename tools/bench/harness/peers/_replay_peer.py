# SPDX-License-Identifier: Apache-2.0
"""What the replay peers' adapters share: the runner shell (skip reasons every engine shares,
loading the peer's module, where a missing dependency makes it skipped, not failed) and the
token views the Triton kernels take."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Optional

from . import _load, registry
from ..core import Unavailable


class ReplayPeer:
    """A replay peer: `key` names its adapter module and SOURCE; subclasses give rule(p),
    memory_bytes(p), the kernel's own skip reasons and bound(p, module)."""

    kind = "peer"
    key = ""
    label = ""

    def skip_reason(self, p: Any) -> Optional[str]:
        if p.io != "bf16":
            return "bf16 activations only (its engine's; its log is kept in the io dtype)"
        if p.state not in ("f32", "bf16"):
            return "f32 or bf16 checkpoints only"
        return self.kernel_skip(p)

    def kernel_skip(self, p: Any) -> Optional[str]:
        return None

    def module(self, ctx: Any) -> ModuleType:
        try:
            return _load.load_module(self.key, ctx.peers_dir)
        except ImportError as e:  # the machine lacks what the peer imports (triton, CuTe DSL)
            raise Unavailable(f"{self.key}: {e}") from e

    def setup(self, p: Any, ctx: Any) -> Any:
        return self.bound(p, self.module(ctx))

    def bound(self, p: Any, mod: ModuleType, device: str = "cuda") -> Any:
        raise NotImplementedError

    def variant(self) -> str:
        src = registry.peer(self.key)
        return f"{src.function} @ {src.commit[:12]}"


def token_views(p: Any, t: Any) -> dict[str, Any]:
    """q/k [N*K, HK, dk], v [N*K, HV, dv], a/b [N*K, HV] (raw gating inputs: every replay peer
    computes g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b) in the kernel, the values
    the harness derived g/beta from), A_log/dt_bias [HV] fp32, and the output [N*K, HV, dv]."""
    import torch

    return {"q": t.q.view(p.rows, p.hk, p.dk), "k": t.k.view(p.rows, p.hk, p.dk),
            "v": t.v.view(p.rows, p.hv, p.dv), "a": t.a, "b": t.b, "A_log": t.a_log,
            "dt_bias": t.dt_bias,
            "out": torch.empty(p.rows, p.hv, p.dv, dtype=t.q.dtype, device=t.q.device)}


def io_bytes(p: Any) -> int:
    return 2  # bf16, the only io the peers run here


def state_bytes(p: Any) -> int:
    return 4 if p.state == "f32" else 2
