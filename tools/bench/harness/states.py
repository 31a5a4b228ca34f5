# SPDX-License-Identifier: Apache-2.0
"""The state tiles of one wyjit launch in the variant's addressing, for every family (both name
their addressing fields the same): the keyword arguments and how to read the written tiles
back. The harness's counterpart of tools/bench/bench_states.hpp."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

ADDRESSING = ("strided", "table", "slot")


@dataclasses.dataclass
class Tiles:
    kwargs: dict[str, Any]  # state/inter, tables, or state/read_slot/write_slot
    written: Callable[[], Any]  # after a launch: [N, writes, *tile], in write order
    keep: list  # objects the launch needs alive (table stagers)


def arrange(addressing: str, initial: Any, writes: int, wyjit: Any) -> Tiles:
    """Tiles for a launch that reads one tile per sequence (`initial`, [N, *tile], copied) and
    writes `writes` tiles per sequence, the last of them the final one:

    - strided: S_b = state[b] (read, final written over it), the others inter[b, t];
    - table: the same tensors behind a TableStager (`writes` slabs), staged once here;
    - slot: a pool of N*(1+writes) tiles; sequence b reads slot b and writes slots
      N + b*writes + t, so every written state has its own slot.
    The table entries and slot indices (<= 8 bytes per tile) are not in the bytes models.
    """
    import torch

    n, tile = initial.shape[0], tuple(initial.shape[1:])
    if addressing in ("strided", "table"):
        state = initial.clone()
        inter = None
        if writes > 1:
            inter = torch.empty((n, writes - 1, *tile), dtype=initial.dtype, device=initial.device)

        def written() -> Any:
            last = state[:, None]
            return last if inter is None else torch.cat([inter, last], dim=1)

        if addressing == "strided":
            kwargs: dict[str, Any] = {"state": state}
            if inter is not None:
                kwargs["inter"] = inter
            return Tiles(kwargs, written, [state, inter])
        stager = wyjit.TableStager(writes, n)
        rows = None
        if inter is not None:
            rows = [[inter[b, t] for b in range(n)] for t in range(writes - 1)]
        stager.stage([state[b] for b in range(n)], rows, stream=torch.cuda.current_stream())
        # NOTE: the stager copies its host arrays asynchronously; finish before they change.
        torch.cuda.synchronize()
        return Tiles({"tables": stager}, written, [state, inter, stager])
    if addressing == "slot":
        pool = torch.empty((n * (1 + writes), *tile), dtype=initial.dtype, device=initial.device)
        pool[:n] = initial
        read = torch.arange(n, dtype=torch.int32, device=initial.device)
        write = n + torch.arange(n * writes, dtype=torch.int32, device=initial.device)
        write = write.view(n, writes)
        return Tiles({"state": pool, "read_slot": read, "write_slot": write},
                     lambda: pool[n:].view(n, writes, *tile), [pool, read, write])
    raise ValueError(f"addressing {addressing!r}; known: {', '.join(ADDRESSING)}")
