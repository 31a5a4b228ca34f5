# SPDX-License-Identifier: Apache-2.0
"""Graph-replayed timing on torch CUDA tensors, the copy floor, and the rotated copy of a
point's bytes (the x_copy yardstick)."""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Sequence

from .core import GIB, Plan, Timing, summarize


def graph_time(calls: Sequence[Callable[[], None]], replays: int, warmup: int = 3) -> Timing:
    """Captures `calls` back to back into one torch.cuda.CUDAGraph, replays it `warmup` times,
    then times `replays` replays with CUDA events; each sample is a replay's time divided by
    len(calls). The caller has run each distinct callable once already (compiles, autotunes)."""
    import torch

    if not calls:
        raise ValueError("no calls to capture")
    # NOTE: torch's recipe: a few eager iterations on a side stream before capture, so lazy
    # initialisation (handles, allocator pools) happens outside the graph.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for c in calls[: min(3, len(calls))]:
            c()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in calls:
            c()
    for _ in range(warmup):
        graph.replay()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(replays):
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1000.0 / len(calls))
    del graph
    return summarize(samples)


def _triton_copy() -> Optional[Callable]:
    """The Triton copy kernel (src -> dst, 1-D float32 tensors), or None without triton."""
    try:
        from . import copykernel
    except ImportError:
        return None
    return copykernel.copy


@dataclasses.dataclass(frozen=True)
class CopyFloor:
    """Copy rates of `bytes` each way, counting bytes read + written."""

    bytes: int
    torch_gbs: float
    triton_gbs: Optional[float]

    @property
    def best_gbs(self) -> float:
        return max(self.torch_gbs, self.triton_gbs or 0.0)

    def floor_us(self, nbytes: int) -> float:
        return nbytes / (self.best_gbs * 1e3)


def _copy_rates(n: int, replays: int) -> tuple[float, Optional[float]]:
    """(torch copy_ us, Triton copy us) of n float32 elements, graph-replayed."""
    import torch

    src = torch.empty(n, dtype=torch.float32, device="cuda").fill_(1.5)
    dst = torch.empty_like(src)
    torch_us = graph_time([lambda: dst.copy_(src)], replays).median_us
    copy = _triton_copy()
    if copy is None:
        return torch_us, None
    copy(src, dst)
    return torch_us, graph_time([lambda: copy(src, dst)], replays).median_us


def measure_copy_floor(gib: float, replays: int) -> CopyFloor:
    """torch copy_ of a `gib` GiB tensor and the Triton copy kernel on the same tensors, each
    graph-replayed; the faster one is the floor's rate."""
    import torch

    n = int(gib * GIB) // 16 * 4  # float32 elements, whole 16-byte words
    nbytes = n * 4
    torch_us, triton_us = _copy_rates(n, replays)
    torch.cuda.empty_cache()  # the 2 x gib GiB went out of scope with _copy_rates
    return CopyFloor(nbytes, 2 * nbytes / (torch_us * 1e3),
                     None if triton_us is None else 2 * nbytes / (triton_us * 1e3))


@dataclasses.dataclass(frozen=True)
class RotatedCopy:
    torch_us: float
    triton_us: Optional[float]

    @property
    def best_us(self) -> float:
        return min(self.torch_us, self.triton_us or float("inf"))


def rotated_copy(plan: Plan, replays: int) -> RotatedCopy:
    """A copy moving the point's bytes (half read, half written) in every call, rotated through
    plan.sets pairs of buffers over plan.calls calls: the same footprint as the kernels."""
    import torch

    half = -(-plan.bytes_per_call // 2) // 16 * 16 or 16
    elems = half // 4
    pool = torch.empty(plan.sets * 2 * elems, dtype=torch.float32, device="cuda").fill_(0.5)
    halves = pool.view(plan.sets, 2, elems)
    pairs = [(halves[i, 0], halves[i, 1]) for i in range(plan.sets)]
    t_torch = graph_time([lambda s=s, d=d: d.copy_(s) for s, d in
                          (pairs[i % plan.sets] for i in range(plan.calls))], replays)
    t_triton = None
    copy = _triton_copy()
    if copy is not None:
        copy(*pairs[0])
        t_triton = graph_time([lambda s=s, d=d: copy(s, d) for s, d in
                               (pairs[i % plan.sets] for i in range(plan.calls))], replays)
    del pool, pairs
    torch.cuda.empty_cache()
    return RotatedCopy(t_torch.median_us, t_triton.median_us if t_triton else None)
