"""Waits, bounded, until the hypervisor and other work leave a set of CPUs alone, so that a
capacity step the machine limited is run again once that moment has passed, not inside it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wsgibench.machine import cpustat

# Steal and busy time together below this share of the CPUs, over one sample, is calm: the
# share at which a repeat is called contended.
CALM_PCT = cpustat.CONTENDED_PCT
SAMPLE_S = 0.5
LIMIT_S = 10.0


@dataclass(frozen=True)
class Calm:
    """How long the wait took, and the CPUs' last sample (between two cells nothing of the study
    runs, so busy time there is someone else's)."""

    cpus: tuple[int, ...]
    waited_s: float
    steal_pct: float
    busy_pct: float
    calm: bool

    def describe(self) -> str:
        cpus = ", ".join(str(c) for c in self.cpus)
        last = (
            f"steal {self.steal_pct:.1f} %, busy {self.busy_pct:.1f} % of CPUs {cpus} "
            "in the last sample"
        )
        if self.calm:
            return f"waited {self.waited_s:.1f} s for its CPUs to be calm ({last})"
        return f"its CPUs were not calm within {self.waited_s:.1f} s ({last}); run again anyway"


def wait_until_calm(
    cpus: Sequence[int],
    limit_s: float = LIMIT_S,
    sample_s: float = SAMPLE_S,
    read: Callable[[], cpustat.CpuTimes] = cpustat.snapshot,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Calm:
    """Samples the CPUs' steal and busy time, `sample_s` at a time, until one sample is calm or
    the next would end past `limit_s`; at least one sample."""
    started = clock()
    while True:
        before, begun = read(), clock()
        sleep(sample_s)
        after, ended = read(), clock()
        use = cpustat.interference(before, after, list(cpus), 0.0, ended - begun)
        calm = use.steal_pct + use.busy_pct < CALM_PCT
        waited = ended - started
        if calm or waited + sample_s > limit_s:
            return Calm(tuple(cpus), waited, use.steal_pct, use.busy_pct, calm)
