"""How steady this machine's CPU speed is: a fixed piece of work (SHA-256 over 1 MiB, in C)
repeated on one pinned CPU for short samples, each sample's rate per second of the thread's own
CPU time. CPU time leaves out the time the thread did not run (other work, steal); what moves the
rate is the CPU itself: its clock, the other half of its core, the caches another guest shares.
On a shared VM that rate can move by half between seconds with no steal reported, and a server's
CPU per request with it: two runs there cannot agree more closely than the machine does."""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

BLOCK = bytes(range(256)) * 4096  # 1 MiB
SAMPLES = 12
SAMPLE_S = 0.25
STEADY = 0.10  # the widest spread (90th over 10th percentile) called steady


@dataclass(frozen=True)
class Steadiness:
    cpu: int | None  # the CPU sampled (None: not pinned)
    rates: tuple[float, ...]  # MiB hashed per CPU-second, one per sample

    @property
    def spread(self) -> float:
        """The 90th percentile of the samples' rates over their 10th, minus 1 (0.25: the fast
        samples did 25 % more work per CPU-second than the slow ones)."""
        return spread(self.rates)

    def describe(self) -> str:
        where = f"cpu{self.cpu}" if self.cpu is not None else "this CPU"
        if not self.rates:
            return f"{where}: not measured"
        low, high = deciles(self.rates)
        return (
            f"{where}: {self.spread:.0%} between samples ({low:.0f}-{high:.0f} MiB/CPU-s, "
            f"{len(self.rates)} x {SAMPLE_S:g} s)"
        )


def deciles(rates: Sequence[float]) -> tuple[float, float]:
    """The 10th and 90th percentiles of the rates (the lowest and highest of fewer than 2)."""
    if len(rates) < 2:
        return (min(rates, default=0.0), max(rates, default=0.0))
    cuts = statistics.quantiles(rates, n=10, method="inclusive")
    return cuts[0], cuts[-1]


def spread(rates: Sequence[float]) -> float:
    low, high = deciles(rates)
    return high / low - 1 if low > 0 else 0.0


def _sample(seconds: float) -> float:
    """MiB hashed per second of this thread's CPU time, over about `seconds` of it."""
    done, start = 0, time.thread_time()
    while (used := time.thread_time() - start) < seconds:
        hashlib.sha256(BLOCK).digest()
        done += 1
    return done / used if used > 0 else 0.0


def measure(cpu: int | None, samples: int = SAMPLES, sample_s: float = SAMPLE_S) -> Steadiness:
    """Sample the CPU's speed, this thread pinned to `cpu` meanwhile (its affinity restored)."""
    before = os.sched_getaffinity(0)
    pin = cpu if cpu is not None and cpu in before else None
    try:
        if pin is not None:
            os.sched_setaffinity(0, {pin})
        rates = tuple(_sample(sample_s) for _ in range(samples))
    finally:
        if pin is not None:
            os.sched_setaffinity(0, before)
    return Steadiness(pin, rates)
