# SPDX-License-Identifier: Apache-2.0
"""TRT-LLM cached replay: `fused_recurrent_gated_delta_rule_cached_replay_update` (registry key
trtllm_replay), as TRT-LLM's GDN layer calls it for MTP target verify (fused gating from raw
a/b, launch_with_pdl, history_size = max(16, T) = 16), with the cache manager's per-step
work: for N >= CACHED_REPLAY_PARTITION_MIN_BATCH_SIZE (16) the verify leaves the checkpoint
alone and `commit_gdn_cached_replay_history_layers` folds every layer in one launch; below
that the verify folds in place (ENABLE_STATE_COMMIT). Then its bookkeeping
(_advance_replay_state): where pnat + T > 16 the history was folded: pnat = accepted and the
buffer flips, else pnat += accepted.

Its log, per slot and layer: two history buffers of 16 entries (T <= 8, so it verifies K <= 8
only): u [2, 16, HV, dv] and the normalised k [2, 16, HK, dk] in the activation dtype (bf16),
G [2, HV, 16] fp32 measured from the checkpoint (wyjit's G); a fold writes the step's entries
to the other buffer, so no block reads what another writes. Cursors prev_num_accepted_tokens
(pnat) and cache_buf_idx [slots] int32.

Per layer (timed): the verify. Per step (timed, / layers): at N >= 16 the work list of rows
that folded (built here with torch ops, argsort + gather: TRT-LLM builds it in its metadata
step), the all-layer fold on a stack of `layers` checkpoints and histories, then the
bookkeeping (torch ops, as _advance_replay_state does); below 16 the bookkeeping only. q/k/v
[N, T, H, d], checkpoint [slots, HV, dv, dk] (dk contiguous: wyjit's vk), output
preallocated [N, T, HV, dv]. old_beta is a placeholder the kernel deletes unread.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import registry
from ._replay_peer import ReplayPeer, io_bytes, state_bytes
from ..families import _replay_cursors as cursors
from ..families import gdn_replay as fam
from ..families._replay_run import ReplayBound, host_ints, s_cur

KEY = "trtllm_replay"
FLA = "tensorrt_llm/_torch/modules/fla"
HIST = 16  # MIN_REPLAY_HISTORY_SIZE; max(16, T) for T <= 8

SOURCE = registry.Peer(
    key=KEY,
    repo="NVIDIA/TensorRT-LLM",
    commit="1607eb40e5166a5029759d5ff720df93efaedca6",
    root="",
    module="tensorrt_llm._torch.modules.fla.cached_replay",
    function="fused_recurrent_gated_delta_rule_cached_replay_update",
    kernel_file=f"{FLA}/cached_replay.py",
    closure=(),
    stubs=(
        *registry.markers("tensorrt_llm/__init__.py", "tensorrt_llm/_torch/__init__.py",
                          "tensorrt_llm/_torch/modules/__init__.py", f"{FLA}/__init__.py"),
        registry.Stub(
            f"{FLA}/op.py",
            "# STUB (wyjit harness) for fla/op.py: only `exp`, as upstream picks it.\n"
            "import os\n\n"
            "import triton.language as tl\n"
            "import triton.language.extra.libdevice as tldevice\n\n"
            'exp = tldevice.fast_expf if os.environ.get("FLA_USE_FAST_OPS") else tl.exp\n',
            "the real module imports tensorrt_llm.envs and fla/utils (the engine)",
        ),
        registry.Stub(
            f"{FLA}/utils.py",
            "# STUB (wyjit harness) for fla/utils.py: only input_guard (tensor arguments made\n"
            "# contiguous except `exclude_args`, the call run on the first tensor's device).\n"
            "import functools\nimport inspect\n\nimport torch\n\n\n"
            "def input_guard(fn=None, *, exclude_args=None):\n"
            "    exclude = set(exclude_args or ())\n\n"
            "    def deco(f):\n"
            "        names = list(inspect.signature(f).parameters)\n\n"
            "        @functools.wraps(f)\n"
            "        def wrapper(*args, **kwargs):\n"
            "            args = [a.contiguous() if isinstance(a, torch.Tensor) and names[i] not in"
            " exclude\n"
            "                    else a for i, a in enumerate(args)]\n"
            "            kwargs = {k: a.contiguous() if isinstance(a, torch.Tensor) and k not in"
            " exclude\n"
            "                      else a for k, a in kwargs.items()}\n"
            "            dev = next((a.device for a in [*args, *kwargs.values()]\n"
            "                        if isinstance(a, torch.Tensor)), None)\n"
            '            if dev is not None and dev.type == "cuda":\n'
            "                with torch.cuda.device(dev):\n"
            "                    return f(*args, **kwargs)\n"
            "            return f(*args, **kwargs)\n\n"
            "        return wrapper\n\n"
            "    return deco(fn) if fn is not None else deco\n",
            "the real module is FLA's utility hub and imports the engine",
        ),
        registry.Stub(
            "tensorrt_llm/_utils.py",
            "# STUB (wyjit harness) for tensorrt_llm._utils: only get_sm_version.\n"
            "import torch\n\n\n"
            "def get_sm_version():\n"
            "    major, minor = torch.cuda.get_device_capability()\n"
            "    return major * 10 + minor\n",
            "the real module imports the TensorRT-LLM bindings",
        ),
    ),
    subdir="replay",
    sha256=((f"{FLA}/cached_replay.py",
             "39b4a54c99ef3d86aeb31251318863d825938f4694a01d3817a208510f5e8c8a"),),
)


class TrtllmReplay(ReplayPeer):
    key = KEY
    label = "TRT-LLM replay"

    def kernel_skip(self, p: Any) -> Optional[str]:
        if p.k > 8:
            return "T <= 8 (its kernel asserts it; history_size <= 16)"
        if p.k < 2:
            return "T = draft + 1 >= 2 in its engine (T = 1 is not exercised upstream)"
        if p.dk & (p.dk - 1) or p.dv & (p.dv - 1):
            return "dk and dv must be powers of two (BK == K)"
        return None

    def rule(self, p: Any) -> cursors.Rule:
        return cursors.trtllm_rule(HIST)

    def memory_bytes(self, p: Any) -> int:
        io = io_bytes(p)
        return p.tile * state_bytes(p) + 2 * HIST * (p.hv * p.dv * io + p.hk * p.dk * io
                                                     + p.hv * 4)

    def bound(self, p: Any, mod: Any, device: str = "cuda") -> "_Bound":
        return _Bound(p, self, mod, device)


class _Bound(ReplayBound):
    def __init__(self, p: Any, r: TrtllmReplay, mod: Any, device: str):
        import torch

        self.r, self.mod = r, mod
        self.all_layer = p.n >= getattr(mod, "CACHED_REPLAY_PARTITION_MIN_BATCH_SIZE", 16)
        self.needs_stack = self.all_layer
        self.idx = torch.arange(p.n, dtype=torch.int32, device=device)
        self.placeholder = torch.zeros(1, device=device)
        how = (f"all-layer fold + bookkeeping/{p.layers}" if self.all_layer
               else f"fold in the verify, bookkeeping/{p.layers}")
        super().__init__(p, fam.trajectory(p, r.rule(p)), r.variant(),
                         f"verify per layer; {how}; 2 x {HIST} bf16 u/k history", device)

    def arrays(self, x: Any, layers: int, history: bool) -> dict[str, Any]:
        import torch

        p, n, dev, io = self.p, self.p.n, x.q.device, x.q.dtype

        def stack(t: Any) -> Any:
            # NOTE: a copy even for one layer: the folds write the checkpoint, never the inputs.
            return t.unsqueeze(0).repeat(layers, *([1] * t.dim()))

        if history:  # rows 0..15 are buffer 0, rows 16..31 buffer 1
            u = x.hist_u[:, :2 * HIST].reshape(n, 2, HIST, p.hv, p.dv)
            k = x.hist_k[:, :2 * HIST].reshape(n, 2, HIST, p.hk, p.dk)
            G = torch.cumsum(x.hist_g[:, :2 * HIST].reshape(n, 2, HIST, p.hv), dim=2)
        else:
            u = torch.zeros((n, 2, HIST, p.hv, p.dv), device=dev)
            k = torch.zeros((n, 2, HIST, p.hk, p.dk), device=dev)
            G = torch.zeros((n, 2, HIST, p.hv), device=dev)
        return {"ssm": stack(x.state), "u": stack(u.to(io)), "k": stack(k.to(io)),
                "G": stack(G.permute(0, 1, 3, 2).float())}

    def tokens(self, t: Any) -> dict[str, Any]:
        import torch

        p = self.p
        return {"q": t.q.view(p.n, p.k, p.hk, p.dk), "k": t.k.view(p.n, p.k, p.hk, p.dk),
                "v": t.v.view(p.n, p.k, p.hv, p.dv), "a": t.a.view(p.n, p.k, p.hv),
                "b": t.b.view(p.n, p.k, p.hv), "A_log": t.a_log, "dt_bias": t.dt_bias,
                "out": torch.empty(p.n, p.k, p.hv, p.dv, dtype=t.q.dtype, device=t.q.device)}

    def cursors(self, base: Sequence[int], length: Sequence[int], fold: Sequence[bool]) -> Any:
        import torch

        dev, n = self.device, self.p.n
        return {"pnat": torch.tensor(list(length), dtype=torch.int32, device=dev),
                "buf": torch.tensor(list(base), dtype=torch.int32, device=dev),
                "items": torch.zeros(n, 4, dtype=torch.int32, device=dev),
                "nw": torch.zeros(1, dtype=torch.int32, device=dev)}

    def launch(self, arr: dict[str, Any], tok: dict[str, Any], cur: Any) -> None:
        p, al = self.p, self.all_layer
        self.mod.fused_recurrent_gated_delta_rule_cached_replay_update(
            tok["q"], tok["k"], tok["v"], tok["a"], tok["b"], arr["ssm"][0], self.idx,
            arr["u"][0], arr["k"][0], arr["G"][0], self.placeholder, cur["buf"], cur["pnat"],
            history_size=HIST, scale=p.scale, use_qk_l2norm_in_kernel=True, A_log=tok["A_log"],
            dt_bias=tok["dt_bias"], launch_with_pdl=True,
            replay_work_items=cur["items"] if al else None, n_writes=cur["nw"] if al else None,
            use_all_layer_commit=al, output=tok["out"])

    def commit(self, arr: Optional[dict[str, Any]], cur: Any, acc: Any) -> None:
        import torch

        pnat, buf = cur["pnat"], cur["buf"]
        wrote = pnat + self.p.k > HIST  # the rows whose verify folded this step
        if self.all_layer:
            assert arr is not None
            order = torch.argsort((~wrote).to(torch.int32), stable=True)
            cur["items"].copy_(torch.stack([order.int(), self.idx[order], pnat[order],
                                            buf[order]], dim=1))
            cur["nw"].copy_(wrote.sum(dtype=torch.int32).view(1))
            self.mod.commit_gdn_cached_replay_history_layers(
                ssm_states=arr["ssm"], old_u=arr["u"], old_k=arr["k"], old_G=arr["G"],
                replay_work_items=cur["items"], n_writes=cur["nw"], history_size=HIST)
        pnat.copy_(torch.where(wrote, acc, pnat + acc))
        buf.copy_(torch.where(wrote, 1 - buf, buf))

    def output(self, tok: dict[str, Any]) -> Any:
        return tok["out"].reshape(self.p.rows, -1).float()

    def materialize(self, arr: dict[str, Any], cur: Any) -> Any:
        import torch

        buf, pnat = host_ints(cur["buf"]), host_ints(cur["pnat"])
        rows = range(self.p.n)
        u = torch.stack([arr["u"][0][b, buf[b]] for b in rows]).permute(0, 2, 1, 3)
        k = torch.stack([arr["k"][0][b, buf[b]] for b in rows]).permute(0, 2, 1, 3)
        G = torch.stack([arr["G"][0][b, buf[b]] for b in rows])
        return s_cur(arr["ssm"][0], u, k, G, [list(range(n)) for n in pnat], cumulative=True)
