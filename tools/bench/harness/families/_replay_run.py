# SPDX-License-Identifier: Apache-2.0
"""What every replay runner shares: the driver of one kernel's replay mode (the verify at each
step's cursors, the per-step launches over the run, the --check episode) and the float64
S_cur of a log read back to the host. A kernel supplies its arrays, token views, launch,
cursors, commit, output and materialize (ReplayBound's hooks)."""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence

from . import _replay_cursors as cursors


class ReplayBound:
    """One kernel set up for one point, driven by the harness (see families/gdn_replay.py).

    buffers(x): one buffer set (the checkpoint and log from the logical inputs, token views);
    bind(bufs, i): the verify of one layer at step i's cursors (snapshots made in setup, read
    only); step_calls(): one call per step of the run for the launches a step makes once for
    all layers, on cursors of their own that move along the run (so the verifies' snapshots
    stay as they are); check_call(bufs): the --check episode from an empty log."""

    needs_stack = False  # whether the per-step launches read every layer's arrays

    def __init__(self, p: Any, traj: Optional[cursors.Trajectory], variant: str, note: str,
                 device: str = "cuda"):
        import torch

        self.p, self.traj, self.variant, self.note = p, traj, variant, note
        self.device = device
        self.layers = p.layers
        self._x: Any = None
        self.snaps: list = []
        self.acc: list = []
        if traj is not None:
            self.snaps = [self.cursors(traj.base[i], traj.length[i], traj.fold[i])
                          for i in range(traj.steps)]
            self.acc = [torch.tensor(a, dtype=torch.int32, device=device) for a in traj.accepted]

    def stream(self) -> Any:
        """The launch stream: torch's current one (None for the CPU tests' stand-ins)."""
        import torch

        return None if self.device == "cpu" else torch.cuda.current_stream()

    # ---- the kernel's hooks ----
    def arrays(self, x: Any, layers: int, history: bool) -> dict[str, Any]:
        """Checkpoint and log of every sequence (layers > 1: a stack, for per-step folds),
        filled from x's history, or an empty log (history False)."""
        raise NotImplementedError

    def tokens(self, t: Any) -> dict[str, Any]:
        """The token rows of one step as the kernel takes them, and its output."""
        raise NotImplementedError

    def cursors(self, base: Sequence[int], length: Sequence[int], fold: Sequence[bool]) -> Any:
        """The kernel's device cursors for one step."""
        raise NotImplementedError

    def launch(self, arr: dict[str, Any], tok: dict[str, Any], cur: Any) -> None:
        raise NotImplementedError

    def commit(self, arr: Optional[dict[str, Any]], cur: Any, acc: Any) -> None:
        """The launches a step makes once for all layers, after sampling."""
        raise NotImplementedError

    def output(self, tok: dict[str, Any]) -> Any:
        """The step's outputs as [N*K, HV*dv] float."""
        raise NotImplementedError

    def materialize(self, arr: dict[str, Any], cur: Any) -> Any:
        """S_cur of every sequence, [N, HV, dv, dk] float64."""
        raise NotImplementedError

    # ---- the harness protocol ----
    def buffers(self, x: Any) -> dict[str, Any]:
        self._x = self._x if self._x is not None else x
        return {"arr": self.arrays(x, 1, True), "tok": self.tokens(x), "x": x}

    def __call__(self, bufs: dict[str, Any]) -> None:
        self.launch(bufs["arr"], bufs["tok"], self.snaps[0])

    def bind(self, bufs: dict[str, Any], i: int):
        return functools.partial(self.launch, bufs["arr"], bufs["tok"],
                                 self.snaps[i % len(self.snaps)])

    def step_calls(self) -> list:
        t = self.traj
        arr = self.arrays(self._x, self.layers, True) if self.needs_stack else None
        cur = self.cursors(t.base[0], t.length[0], t.fold[0])
        return [functools.partial(self.commit, arr, cur, self.acc[i]) for i in range(t.steps)]

    def check_call(self, bufs: dict[str, Any]) -> None:
        import torch

        from .gdn_replay import episode

        p, x = self.p, bufs["x"]
        ep = episode(p, x)
        arr = self.arrays(x, 1, False)
        zeros = [0] * p.n
        rule = self.rule_of_check()
        cur = self.cursors(zeros, zeros, [rule.at == "verify" and rule.folds(0, 0, p.k)] * p.n)
        outs = []
        for t, acc in zip(ep.tokens, ep.accepted, strict=True):
            tok = self.tokens(t)
            self.launch(arr, tok, cur)
            outs.append(self.output(tok).clone())
            self.commit(arr, cur, torch.tensor(acc, dtype=torch.int32, device=self.device))
        bufs["check"] = {"out": torch.stack(outs), "state": self.materialize(arr, cur)}

    def rule_of_check(self) -> cursors.Rule:
        return self.traj.rule

    def readback(self, bufs: dict[str, Any]) -> dict[str, Any]:
        return bufs["check"]


def s_cur(h0: Any, u: Any, k: Any, g: Any, positions: Sequence[Sequence[int]],
          cumulative: bool) -> Any:
    """S_cur^T [N, HV, dv, dk] float64 from a checkpoint h0 [N, HV, dv, dk] (vk) and a log:
    u [N, HV, R, dv], k [N, HK, R, dk], g [N, HV, R]; the live entries of sequence b are rows
    positions[b] in order. cumulative: g holds G_j (log-decay from the checkpoint, wyjit,
    TRT-LLM, FlashInfer): S = e^{G_last} S0 + sum_j e^{G_last - G_j} k_j u_j^T. Else g holds
    each token's own g (vLLM, SGLang): G_j is its running sum."""
    import torch

    n, hv = h0.shape[0], h0.shape[1]
    rep = hv // k.shape[1]
    out = []
    for b in range(n):
        s0 = h0[b].double()
        idx = torch.tensor(list(positions[b]), dtype=torch.long, device=h0.device)
        if idx.numel() == 0:
            out.append(s0)
            continue
        gb = g[b][:, idx].double()
        big = gb if cumulative else torch.cumsum(gb, dim=-1)
        last = big[:, -1]
        w = torch.exp(last[:, None] - big)  # [HV, n]
        ub = u[b][:, idx].double()  # [HV, n, dv]
        kb = k[b][:, idx].double().repeat_interleave(rep, dim=0)  # [HV, n, dk]
        out.append(torch.exp(last)[:, None, None] * s0
                   + torch.einsum("hc,hcv,hck->hvk", w, ub, kb))
    return torch.stack(out)


def ring_positions(base: Sequence[int], length: Sequence[int], ring: int) -> list[list[int]]:
    return [[(b + j) % ring for j in range(n)] for b, n in zip(base, length, strict=True)]


def host_ints(t: Any) -> list[int]:
    return [int(v) for v in t.tolist()]
