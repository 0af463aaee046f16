"""Busy time of each CPU from /proc/stat, so a repeat can tell how much of its CPUs other work took."""

from __future__ import annotations

import os
import resource
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
_TICK_S = TICK_S
# Other work or the hypervisor (steal) above this share of a set of CPUs flags a repeat contended.
CONTENDED_PCT = 5.0


@dataclass(frozen=True)
class CpuTimes:
    """Seconds each CPU was busy (user, nice, system, irq, softirq) and stolen by the hypervisor.
    Interrupt time is in: the kernel also charges it to the process it interrupted (loopback packet
    processing is mostly the benchmark's own), so busy and the processes' own times compare."""

    busy_s: dict[int, float]
    steal_s: dict[int, float]


def snapshot(path: Path = Path("/proc/stat")) -> CpuTimes:
    busy: dict[int, float] = {}
    steal: dict[int, float] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return CpuTimes(busy, steal)
    for line in lines:
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        ticks = [int(f) for f in fields]
        cpu = int(name[3:])
        busy[cpu] = (sum(ticks[0:3]) + sum(ticks[5:7])) * _TICK_S  # user nice system, irq softirq
        steal[cpu] = (ticks[7] if len(ticks) > 7 else 0) * _TICK_S
    return CpuTimes(busy, steal)


@dataclass(frozen=True)
class Interference:
    """What other work took of a set of CPUs during a repeat, as % of their capacity."""

    cpus: tuple[int, ...]
    busy_pct: float  # every task on those CPUs
    own_pct: float  # the processes the set is for (the server's tree, or the engine)
    other_pct: float  # busy less own: somebody else's work
    steal_pct: float  # taken by the hypervisor

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Interference:
        """As `as_dict` wrote it (extra_json)."""
        return cls(
            tuple(d.get("cpus", ())),
            float(d["busy_pct"]),
            float(d.get("own_pct", 0.0)),
            float(d.get("other_pct", 0.0)),
            float(d["steal_pct"]),
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "cpus": list(self.cpus),
            "busy_pct": round(self.busy_pct, 2),
            "own_pct": round(self.own_pct, 2),
            "other_pct": round(self.other_pct, 2),
            "steal_pct": round(self.steal_pct, 2),
        }


def interference(
    before: CpuTimes, after: CpuTimes, cpus: list[int], own_s: float, wall_s: float
) -> Interference:
    capacity = max(wall_s, 1e-9) * max(len(cpus), 1)
    busy = sum(after.busy_s.get(c, 0.0) - before.busy_s.get(c, 0.0) for c in cpus)
    steal = sum(after.steal_s.get(c, 0.0) - before.steal_s.get(c, 0.0) for c in cpus)
    other = max(0.0, busy - own_s)
    return Interference(
        tuple(cpus),
        100 * busy / capacity,
        100 * own_s / capacity,
        100 * other / capacity,
        100 * steal / capacity,
    )


def own_cpu_s() -> float:
    """CPU time of this process (the sampler thread included), unpinned."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def processes_cpu_s(pids: list[int]) -> dict[int, float]:
    """CPU seconds used so far by each process (the database's, pinned to the server's CPUs)."""
    found: dict[int, float] = {}
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            found[pid] = times.user + times.system
        except psutil.Error:
            continue
    return found


class RunQueueWatch:
    """How long the engine's busiest-waiting thread waited for a CPU while runnable (the kernel's
    schedstat run_delay), read every 50 ms until the engine exits. An engine whose CPU another
    process takes cannot see it in its own CPU share, which only drops; this wait shows it. Each
    thread is judged on its own (an idle main thread must not dilute a starved worker)."""

    INTERVAL_S = 0.05

    def __init__(self, pid: int):
        self.pid = pid
        self._per_task: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="wsgibench-runqueue", daemon=True)

    @property
    def waited_s(self) -> float | None:
        return max(self._per_task.values()) if self._per_task else None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _loop(self) -> None:
        while True:
            self._per_task.update(run_delays_s(self.pid))
            if self._stop.wait(self.INTERVAL_S):
                return


def run_delays_s(pid: int) -> dict[str, float]:
    """Each thread's time so far spent runnable but not running, by thread id."""
    found: dict[str, float] = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").glob("*/schedstat"))
    except OSError:  # the process has exited
        return found
    for task in tasks:
        try:
            found[task.parent.name] = int(task.read_text().split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
    return found
