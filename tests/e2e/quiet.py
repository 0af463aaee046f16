"""Figures only quiet CPUs give (cores used, requests a second, wall-clock bounds): the test waits,
bounded, for calm CPUs (machine/calm.py), then measures what other work took of the machine while
it runs (every process that is not the test's, by its CPU time, and the hypervisor's steal), and a
bound that breaks while other work took the CPUs is skipped with "the machine was busy: …" and
what took them (pytest -ra shows it), never failed or passed on the wrong figure. A bound that
breaks on a quiet machine fails as it is."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil
import pytest

from wsgibench.machine import calm, cpustat

from .procs import TAG_VAR, new_tag

# Other processes' CPU and the steal together at or above this share of the machine's CPUs make
# it busy: the share at which the tool itself calls a repeat contended.
BUSY_PCT = cpustat.CONTENDED_PCT
CALM_WAIT_S = 30.0  # the longest wait for calm CPUs before the test runs
SAMPLE_S = 0.5  # how often other processes' CPU times are read
BUSY = "the machine was busy: "
Key = tuple[int, float]  # a process: pid and start time (a reused pid is another process)


@dataclass(frozen=True)
class OtherWork:
    """What others took of the machine over a window: other processes' CPU seconds (a process
    that ended between two reads loses its last half second: an undercount, never a process of
    the test's counted as another's), the hypervisor's steal, and the busiest of them."""

    wall_s: float
    cpus: int
    other_s: float
    steal_s: float
    top: tuple[tuple[str, float], ...]

    @property
    def pct(self) -> float:
        return 100.0 * (self.other_s + self.steal_s) / max(self.wall_s * self.cpus, 1e-9)

    @property
    def busy(self) -> bool:
        return self.pct >= BUSY_PCT

    def describe(self) -> str:
        names = ", ".join(f"{name} {s:.1f} s" for name, s in self.top) or "none seen"
        return (
            f"other work took {self.pct:.1f} % of the {self.cpus} CPU(s) over {self.wall_s:.1f} s "
            f"(other processes {self.other_s:.1f} CPU-s: {names}; steal {self.steal_s:.1f} s)"
        )


class QuietCpus:
    """The window from `begin` to `end`: other processes' CPU read every SAMPLE_S in a thread.
    The test's own processes are this one, its descendants, and every process carrying `tag` in
    its environment (servers a run started and left to init, engines in network namespaces)."""

    def __init__(self, tag: str):
        self.tag = tag
        self.calm: calm.Calm | None = None
        self.cpus = sorted(os.sched_getaffinity(0))
        self._mine: dict[Key, bool] = {}
        self._first: dict[Key, float] = {}
        self._last: dict[Key, tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="quiet-cpus", daemon=True)
        self._began = self._steal0 = 0.0
        self._result: OtherWork | None = None

    def begin(self, calm_first: bool = True) -> QuietCpus:
        if calm_first:
            self.calm = calm.wait_until_calm(self.cpus, limit_s=CALM_WAIT_S)
        self._began, self._steal0 = time.monotonic(), _steal_s()
        self._sample(first=True)
        self._thread.start()
        return self

    def end(self) -> OtherWork:
        """Freeze the window here (later assertions judge what happened up to now)."""
        if self._result is None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._result = self.so_far()
        return self._result

    def so_far(self) -> OtherWork:
        if self._result is not None:
            return self._result
        self._sample()
        with self._lock:
            used = {k: last - self._first.get(k, 0.0) for k, (_, last) in self._last.items()}
            names = {k: name for k, (name, _) in self._last.items()}
        by_name: dict[str, float] = {}
        for key, seconds in used.items():
            by_name[names[key]] = by_name.get(names[key], 0.0) + max(seconds, 0.0)
        top = sorted(by_name.items(), key=lambda kv: -kv[1])[:3]
        return OtherWork(
            time.monotonic() - self._began,
            len(self.cpus),
            sum(by_name.values()),
            max(0.0, _steal_s() - self._steal0),
            tuple((name, round(s, 1)) for name, s in top if s >= 0.05),
        )

    @contextmanager
    def figures(self) -> Iterator[None]:
        """Assertions on figures a busy machine spoils: one that fails while other work took the
        CPUs fails as "the machine was busy: …", with what took them and the bound it broke."""
        try:
            yield
        except AssertionError as exc:
            work = self.so_far()
            if not work.busy:
                raise
            broke = str(exc)
        else:
            return
        before = ""
        if self.calm is not None:
            before = f"; before it, {self.calm.describe().removesuffix('; run again anyway')}"
        # A figure other work spoiled says nothing of the code: the test says why it could not
        # judge it (shown by pytest -ra), rather than failing on it or passing it.
        pytest.skip(f"{BUSY}{work.describe()}{before}; the bound it broke: {broke}")

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._sample()

    def _sample(self, first: bool = False) -> None:
        me = os.getpid()
        seen = list(psutil.process_iter(["pid", "ppid", "name", "create_time", "cpu_times"]))
        parents = {p.info["pid"]: p.info["ppid"] for p in seen}
        for p in seen:
            info = p.info
            if info["cpu_times"] is None or info["create_time"] is None:
                continue
            key = (info["pid"], info["create_time"])
            if info["pid"] == 2 or info["ppid"] == 2 or self._is_mine(p, key, parents, me):
                continue  # kernel threads (their softirq work is mostly the test's own traffic)
            cpu = info["cpu_times"].user + info["cpu_times"].system
            with self._lock:
                if key not in self._first:
                    # a process started inside the window used all of its CPU in it
                    new = not first and info["create_time"] >= time.time() - self._age()
                    self._first[key] = 0.0 if new else cpu
                self._last[key] = (info["name"] or "?", cpu)

    def _age(self) -> float:
        return time.monotonic() - self._began

    def _is_mine(self, p: psutil.Process, key: Key, parents: dict[int, int], me: int) -> bool:
        known = self._mine.get(key)
        if known is None:
            known = _descends(key[0], me, parents) or self._tagged(p)
            self._mine[key] = known
        return known

    def _tagged(self, p: psutil.Process) -> bool:
        try:
            return p.environ().get(TAG_VAR) == self.tag
        except (psutil.Error, OSError):
            return False


def _descends(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid not in parents or pid <= 1:
            return False
        pid = parents[pid]
    return False


def _steal_s() -> float:
    return sum(cpustat.snapshot().steal_s.values())


@contextmanager
def quiet_cpus(tag: str | None = None, calm_first: bool = True) -> Iterator[QuietCpus]:
    """A window over the block: calm CPUs waited for (bounded), then other work measured until the
    block ends. The tag is put in the environment for the block, so every process the test starts
    carries it (`quiet.tag`: for a test that checks its own leftovers)."""
    quiet = QuietCpus(tag or new_tag())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TAG_VAR, quiet.tag)
        quiet.begin(calm_first)
        try:
            yield quiet
        finally:
            quiet.end()


def busy_said(status: str, reason: str | None) -> bool:
    """The tool judged the cell the machine's, not the server's: contended (other work or the
    hypervisor took part of its CPUs) or invalid because other work starved the engine."""
    return status == "contended" or (status == "invalid" and "engine starved" in (reason or ""))


def skip_if_contended(status: str, reason: str | None) -> None:
    """For a test whose check needs the cell's figures to be the server's alone: the machine's
    doing is said as the reason the test could not judge them, never as a status mismatch."""
    if busy_said(status, reason):
        pytest.skip(f"{BUSY}the tool judged the cell {status}: {reason or ''}")


def skip_if_search_contended(invalid: str | None) -> None:
    """A capacity search the machine stopped (a step the tool judged contended, or its engine
    starved, after its one rerun): its figures are not the server's to judge."""
    said = invalid or ""
    if busy_said("contended" if said.startswith("contended") else "invalid", said):
        pytest.skip(f"{BUSY}the tool stopped the search on the machine's other work: {said}")
