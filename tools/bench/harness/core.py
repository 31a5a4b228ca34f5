# SPDX-License-Identifier: Apache-2.0
"""What every family and runner shares, with no torch: the rotation plan, timing statistics,
the record of one measurement, and the runner protocol."""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Any, Optional, Protocol, Sequence

MIB = 1 << 20
GIB = 1 << 30


class Unavailable(RuntimeError):
    """A runner that cannot exist on this machine or checkout (peer files missing, a wyjit
    function the package does not have yet): reported as skipped, not failed."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """How one (K, N) point is timed, the same for every kernel compared there: `sets` buffer
    sets rotated through `calls` back-to-back calls in one CUDA graph (call i uses set
    i % sets)."""

    bytes_per_call: int
    sets: int
    calls: int
    target_bytes: int

    @property
    def footprint(self) -> int:
        """Distinct bytes one cycle through the sets touches."""
        return self.sets * self.bytes_per_call

    @property
    def l2_cold(self) -> bool:
        """Whether a set is reused only after `target_bytes` of other traffic (false when
        max_sets capped the rotation)."""
        return self.footprint >= self.target_bytes


def rotation_plan(bytes_per_call: int, target_bytes: int = 512 * MIB, min_calls: int = 16,
                  max_sets: int = 4096) -> Plan:
    """Enough sets that one cycle touches >= target_bytes (far past the 60 MiB L2), at most
    max_sets; calls a whole number of cycles, at least min_calls, so that the graph's launch
    cost divides into as many calls for every kernel at the point."""
    if bytes_per_call <= 0:
        raise ValueError(f"bytes_per_call is {bytes_per_call}, must be > 0")
    if min_calls < 1 or max_sets < 1:
        raise ValueError("min_calls and max_sets must be >= 1")
    sets = max(1, min(max_sets, math.ceil(target_bytes / bytes_per_call)))
    cycles = max(1, math.ceil(min_calls / sets))
    return Plan(bytes_per_call, sets, sets * cycles, target_bytes)


@dataclasses.dataclass(frozen=True)
class Timing:
    """Per-call times (us) of the timed replays: each sample is one replay's time divided by the
    calls in the graph."""

    samples_us: tuple[float, ...]

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us)

    @property
    def min_us(self) -> float:
        return min(self.samples_us)

    @property
    def max_us(self) -> float:
        return max(self.samples_us)

    @property
    def spread_pct(self) -> float:
        """(max - min) / median over the replays, in percent."""
        return 100.0 * (self.max_us - self.min_us) / self.median_us


def summarize(samples_us: Sequence[float]) -> Timing:
    if not samples_us:
        raise ValueError("no samples")
    return Timing(tuple(float(s) for s in samples_us))


@dataclasses.dataclass
class Record:
    """One kernel at one point: the JSON record and a row cell of the table."""

    family: str
    runner: str  # machine key, e.g. "wyjit.strided.vk", "sglang_update"
    label: str  # table column, e.g. "wyjit strided vk", "SGLang update"
    kind: str  # "wyjit" or "peer"
    variant: str  # wyjit's canonical name, or the peer's function and commit
    point: dict[str, Any]  # the family's point fields (K, N, shape, dtypes, ...)
    group: str  # the table the record goes in (the point's fields other than K and N)
    k: int
    n: int
    bytes: int
    floor_us: float
    copy_us: Optional[float]  # graph-replayed copy of the same bytes, rotated the same way
    sets: int
    calls: int
    us: Optional[float] = None  # median per call; None when skipped or failed
    us_min: Optional[float] = None
    us_max: Optional[float] = None
    spread_pct: Optional[float] = None
    replays: int = 0
    status: str = "ok"  # "ok", "skipped", "failed"
    note: str = ""
    # What `us` is made of, where it is a sum (gdn_replay: the verify and the per-step launches
    # divided by the layers); in the JSON only when there is something.
    parts: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def pct_of_floor(self) -> Optional[float]:
        return None if self.us is None else 100.0 * self.floor_us / self.us

    @property
    def x_copy(self) -> Optional[float]:
        return None if self.us is None or not self.copy_us else self.us / self.copy_us

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if not d["parts"]:
            del d["parts"]
        d["pct_of_floor"] = self.pct_of_floor
        d["x_copy"] = self.x_copy
        return d


class Bound(Protocol):
    """A runner set up for one point. Optional, where a family needs them (gdn_replay):
    `bind(bufs, i)` returns graph call i's launch when it depends on i (not only on the set),
    `step_calls()` one callable per step of launches made once for all `layers` (timed in
    their own graph, divided by `layers`, added), `check_call(bufs)` what --check runs instead
    of one call."""

    variant: str
    note: str

    def buffers(self, inputs: Any) -> Any:
        """This runner's buffer set built from one set of logical inputs (allocates)."""

    def __call__(self, bufs: Any) -> None:
        """Launches once on `bufs` on the current stream; allocates nothing of its own."""

    def readback(self, bufs: Any) -> dict[str, Any]:
        """After a call: the family's logical results (for --check)."""


class Runner(Protocol):
    key: str
    label: str
    kind: str

    def skip_reason(self, point: Any) -> Optional[str]:
        """Why this runner cannot run the point, or None."""

    def setup(self, point: Any, ctx: Any) -> Bound:
        """Compiles or imports what the point needs; raises when it cannot."""


def point_plan(fam: Any, point: Any, args: Any) -> Plan:
    """The family's own plan where it has one (gdn_replay: calls that cover its run), else
    rotation_plan from the command line's footprint, calls and sets."""
    if hasattr(fam, "plan"):
        return fam.plan(point, args)
    return rotation_plan(fam.bytes_moved(point), args.footprint_mib * MIB, args.min_calls,
                         args.max_sets)
