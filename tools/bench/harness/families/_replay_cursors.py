# SPDX-License-Identifier: Apache-2.0
"""Replay mode's cursor runs on the host, no torch: the acceptance draws of a run and each
kernel's cursor rule applied to them (tools/bench/families/bench_gdn_replay.cpp does the same
for wyjit). Every runner at a point sees the same draws; each moves its own cursors by its own
rule, so its folds come as often as they would in its engine."""

from __future__ import annotations

import dataclasses
import random

WARMUP = 64  # steps simulated before the recorded ones: the run's steady state, not empty logs


@dataclasses.dataclass(frozen=True)
class Draws:
    """Accepted tokens per (step, sequence), 1..K: each draft accepted with probability p until
    the first rejection (token 0 is always accepted); steps WARMUP.. are the recorded ones. And
    a random first log position per sequence (engines start sequences at any ring slot)."""

    first_base: tuple[int, ...]
    accepted: tuple[tuple[int, ...], ...]  # [warmup + steps][N]
    warmup: int = WARMUP

    @property
    def n(self) -> int:
        return len(self.first_base)


def draw(n: int, k: int, steps: int, p: float, seed: int, warmup: int = WARMUP) -> Draws:
    rng = random.Random(seed)
    first = tuple(rng.randrange(1 << 16) for _ in range(n))
    acc = []
    for _ in range(warmup + steps):
        row = []
        for _ in range(n):
            a = 1
            while a < k and rng.random() < p:
                a += 1
            row.append(a)
        acc.append(tuple(row))
    return Draws(first, tuple(acc), warmup)


@dataclasses.dataclass(frozen=True)
class Rule:
    """When a kernel folds its log into the checkpoint, and what its cursor becomes.

    - at="verify" (wyjit, vLLM, TRT-LLM, FlashInfer): the step's verify folds when
      len + margin*K > capacity; its new entries go after the live ones and the commit then
      sets base += len, len = accepted (else len += accepted).
    - at="commit" (SGLang): the commit adds the accepted entries, then folds them all when
      len + accepted + margin*K > capacity: base += len + accepted, len = 0.
    `ring` is the physical log: base moves mod ring (ring 2 with double_buffer: TRT-LLM's two
    history buffers, base is the current one and flips on a fold)."""

    name: str
    at: str
    capacity: int
    margin: int
    ring: int
    double_buffer: bool = False

    def folds(self, length: int, accepted: int, k: int) -> bool:
        extra = accepted if self.at == "commit" else 0
        return length + extra + self.margin * k > self.capacity

    def step(self, base: int, length: int, accepted: int, k: int) -> tuple[int, int, bool]:
        """(base, len) after one step, and whether the step folded."""
        fold = self.folds(length, accepted, k)
        if not fold:
            return base, length + accepted, False
        if self.double_buffer:
            return 1 - base, accepted, True
        if self.at == "commit":
            return (base + length + accepted) % self.ring, 0, True
        return (base + length) % self.ring, accepted, True


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """The cursors each recorded step's verify sees, and whether that step folds."""

    rule: Rule
    base: tuple[tuple[int, ...], ...]  # [steps][N]
    length: tuple[tuple[int, ...], ...]
    fold: tuple[tuple[bool, ...], ...]
    accepted: tuple[tuple[int, ...], ...]  # the step's accepted counts

    @property
    def steps(self) -> int:
        return len(self.base)

    @property
    def fold_fraction(self) -> float:
        """Folds per (sequence, step)."""
        return sum(map(sum, self.fold)) / (self.steps * len(self.base[0]))

    @property
    def mean_len(self) -> float:
        """Live entries a verify reads, on average."""
        return sum(map(sum, self.length)) / (self.steps * len(self.base[0]))


def simulate(rule: Rule, draws: Draws, k: int) -> Trajectory:
    base = [b % (2 if rule.double_buffer else rule.ring) for b in draws.first_base]
    length = [0] * draws.n
    rec_b, rec_l, rec_f, rec_a = [], [], [], []
    for s, accepted in enumerate(draws.accepted):
        folds = [rule.folds(length[b], accepted[b], k) for b in range(draws.n)]
        if s >= draws.warmup:
            rec_b.append(tuple(base))
            rec_l.append(tuple(length))
            rec_f.append(tuple(folds))
            rec_a.append(accepted)
        for b in range(draws.n):
            base[b], length[b], _ = rule.step(base[b], length[b], accepted[b], k)
    return Trajectory(rule, tuple(rec_b), tuple(rec_l), tuple(rec_f), tuple(rec_a))


def next_pow2(x: int) -> int:
    return 1 << max(0, x - 1).bit_length()


def wyjit_rule(log: int) -> Rule:
    """DESIGN "Replay mode": the verify folds when len + 2K > L; ring L."""
    return Rule("wyjit", "verify", log, 2, log)


def vllm_rule(k: int, history: int = 16) -> Rule:
    """vLLM's engine: flush threshold L = history + K (replayssm_buffer_len 16 + max_spec_len),
    flag set by the commit when len + 2K > L, so a fold when len + K > 16; the physical ring is
    1 << (history + K - 1).bit_length() (32 for K 1..16)."""
    return Rule("vllm", "verify", history + k, 2, 1 << (history + k - 1).bit_length())


def sglang_rule(k: int, checkpoint: str) -> Rule:
    """SGLang's engine: ring L = linear_replayssm_cache_len (16, a power of two >= 2K); the
    commit folds all layers when len + accepted + 2K > L, and after every commit when the
    checkpoint is 16-bit (fold_every_commit)."""
    ring = max(16, next_pow2(2 * k))
    if checkpoint != "f32":
        return Rule("sglang", "commit", 0, 0, ring)
    return Rule("sglang", "commit", ring, 2, ring)


def trtllm_rule(history: int = 16) -> Rule:
    """TRT-LLM: two buffers of HIST = max(16, T) = 16 entries; the verify folds when
    pnat + T > HIST and writes its entries to the other buffer."""
    return Rule("trtllm", "verify", history, 1, 2, double_buffer=True)


def flashinfer_rule(window: int = 16, ring: int = 32) -> Rule:
    """FlashInfer's ring kernel as TRT-LLM drives it: a 32-slot ring, window W_RING = 16,
    flush_min = 16 - T + 1 (fold when len + T > 16)."""
    return Rule("flashinfer", "verify", window, 1, ring)
