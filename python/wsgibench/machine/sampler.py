"""Samples CPU and RSS of a server's whole process tree at 10 Hz, its cgroup's CPU time with them
(which keeps what exited processes used), its open connections and each of its threads' CPU at
1 Hz."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

from wsgibench.machine import sockdiag
from wsgibench.machine.threads import ThreadAccount

INTERVAL_S = 0.1
CONNS_EVERY = 10  # read /proc/net/tcp once a second: it is large under many connections
_ESTABLISHED = "01"


def established_on_port(port: int) -> int:
    """Server-side established connections on a local port: netlink sock_diag, or when the kernel
    refuses it, /proc/net/tcp{,6} scanned by one regex pass (a row reads
    `sl: LOCALADDR:PORT REMADDR:PORT ST ...`; state 01 is established)."""
    try:
        return sockdiag.established_on_port(port)
    except OSError:
        pass
    pattern = re.compile(rb"[0-9A-F]+:%04X [0-9A-F]+:[0-9A-F]{4} 01 " % port)
    count = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name, "rb") as f:
                count += len(pattern.findall(f.read()))
        except OSError:
            continue
    return count


@dataclass
class Sample:
    t_s: float
    cpu_pct: float  # % of one core, summed over the tree
    rss_bytes: int
    processes: int
    conns: int | None
    load1: float | None = None  # system load average, read with the connections (1 Hz)


REFRESH_EVERY = 10  # re-list the server's processes once a second (workers come and go)


@dataclass(frozen=True)
class CgroupReading:
    """The server's cgroup CPU seconds so far, and when they were read (monotonic, wall)."""

    mono_s: float
    unix_s: float
    cpu_s: float


def cpu_between(readings: list[CgroupReading], start_unix: float, end_unix: float) -> float | None:
    """The cgroup's CPU seconds in [start_unix, end_unix], interpolated between the readings that
    bracket each end (None when the readings do not cover the span)."""
    if (
        len(readings) < 2
        or start_unix < readings[0].unix_s - 0.2
        or end_unix > readings[-1].unix_s + 0.2
    ):
        return None
    return _cpu_at(readings, end_unix) - _cpu_at(readings, start_unix)


def _cpu_at(readings: list[CgroupReading], t: float) -> float:
    if t <= readings[0].unix_s:
        return readings[0].cpu_s
    for a, b in zip(readings, readings[1:], strict=False):
        # b > a wherever this matches, even if the wall clock stepped back: t is above the first
        # reading, so the first pair that reaches t climbs to it from below
        if a.unix_s <= t <= b.unix_s:
            share = (t - a.unix_s) / (b.unix_s - a.unix_s)
            return a.cpu_s + share * (b.cpu_s - a.cpu_s)
    return readings[-1].cpu_s


@dataclass
class Sampler:
    """Call start(), stop(); `samples` then holds the timeline, `own_cpu_s` the sampler's cost."""

    tree: Callable[[], list[psutil.Process]]  # the server's current process tree
    port: int
    samples: list[Sample] = field(default_factory=list)
    own_cpu_s: float = 0.0
    tree_cpu_s: float = (
        0.0  # CPU seconds the server's processes used between the first and last sample
    )
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _procs: dict[int, psutil.Process] = field(default_factory=dict)
    _cpu_prev: dict[int, float] = field(default_factory=dict)
    _t_prev: float | None = None
    _t0: float = 0.0
    # each thread's CPU, read at start, once a second and at the end (machine/threads.py)
    threads: ThreadAccount = field(default_factory=ThreadAccount)
    # The server's cgroup CPU seconds so far (None: no cgroup accounts for it), read with each
    # sample: it keeps what processes that exited used, which the processes' own times lose.
    cgroup_cpu: Callable[[], float | None] = lambda: None
    cgroup: list[CgroupReading] = field(default_factory=list)

    @property
    def cgroup_cpu_s(self) -> float | None:
        """The cgroup's CPU seconds from the first reading to the last (None: not read)."""
        if len(self.cgroup) < 2:
            return None
        return self.cgroup[-1].cpu_s - self.cgroup[0].cpu_s

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._refresh()
        self.sample_once()  # the value at start, before load
        self._observe_threads()
        self._thread = threading.Thread(target=self._loop, name="wsgibench-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> list[Sample]:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self._refresh()
        self.sample_once()  # the value at the end
        self._observe_threads()
        return self.samples

    def _observe_threads(self) -> None:
        self.threads.observe(sorted(self._procs), time.monotonic())

    def _read_cgroup(self) -> None:
        used = self.cgroup_cpu()
        if used is not None:
            self.cgroup.append(CgroupReading(time.monotonic(), time.time(), used))

    def _loop(self) -> None:
        begin = time.thread_time()
        tick = 0
        while not self._stop.wait(INTERVAL_S):
            tick += 1
            if tick % REFRESH_EVERY == 0:
                self._refresh()
            self.sample_once(with_conns=tick % CONNS_EVERY == 0)
            if tick % REFRESH_EVERY == 0:
                self._observe_threads()
        self.own_cpu_s = time.thread_time() - begin

    def _refresh(self) -> None:
        current = {p.pid: p for p in self.tree()}
        # Keep the Process objects we already hold: psutil checks identity by create time.
        self._procs = {pid: self._procs.get(pid, p) for pid, p in current.items()}

    def sample_once(self, with_conns: bool = True) -> None:
        self._read_cgroup()
        now = time.monotonic()
        rss, alive, used = 0, 0, 0.0
        cpu_now: dict[int, float] = {}
        for pid, proc in list(self._procs.items()):
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    rss += proc.memory_info().rss
            except psutil.Error:
                continue
            alive += 1
            cpu_now[pid] = times.user + times.system
            used += max(0.0, cpu_now[pid] - self._cpu_prev.get(pid, cpu_now[pid]))
        self.tree_cpu_s += used
        cpu_pct = (
            used / (now - self._t_prev) * 100.0 if self._t_prev and now > self._t_prev else 0.0
        )
        self._cpu_prev, self._t_prev = cpu_now, now
        conns = established_on_port(self.port) if with_conns else None
        load1 = os.getloadavg()[0] if with_conns else None
        self.samples.append(Sample(now - self._t0, cpu_pct, rss, alive, conns, load1))
