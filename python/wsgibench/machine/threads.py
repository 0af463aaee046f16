"""Per-thread CPU of a server's process tree (/proc/PID/task/*/stat): how many threads it ran,
their names, the CPU seconds of each group of threads, and the cores it used over a window."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
_DIGITS = re.compile(r"[-_ ]?\d+$")


@dataclass(frozen=True)
class ThreadStat:
    """One thread as /proc shows it: its process, its name, the CPU seconds it used so far."""

    pid: int
    tid: int
    name: str
    process_name: str
    cpu_s: float
    ppid: int = 0  # the process's parent


@dataclass(frozen=True)
class Stat:
    """The fields of a `stat` line read here."""

    name: str
    ppid: int
    cpu_s: float


def parse_stat(text: str) -> Stat | None:
    """The name (comm), parent and user + system CPU seconds of one `stat` line, or None when
    malformed. The name is in parentheses and may hold spaces and parentheses: split at the last ')'."""
    open_at, close_at = text.find("("), text.rfind(")")
    if open_at < 0 or close_at < open_at:
        return None
    fields = text[close_at + 2 :].split()
    try:  # fields 4, 14 and 15 of the line (ppid, utime, stime), counted after the name
        cpu = (int(fields[11]) + int(fields[12])) * _TICK_S
        return Stat(text[open_at + 1 : close_at], int(fields[1]), cpu)
    except (IndexError, ValueError):
        return None


def read_threads(
    pids: Iterable[int], proc: Path = Path("/proc"), processes: dict[int, float] | None = None
) -> list[ThreadStat]:
    """Every thread of the given processes (those that exited meanwhile are skipped); each
    process's own CPU seconds (its threads that ended included) into `processes` when given."""
    found: list[ThreadStat] = []
    for pid in pids:
        own = _read(proc / str(pid) / "stat")
        if own is None:
            continue
        if processes is not None:
            processes[pid] = own.cpu_s
        try:
            tasks = list((proc / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            stat = _read(task / "stat")
            if stat is not None and task.name.isdigit():
                found.append(
                    ThreadStat(pid, int(task.name), stat.name, own.name, stat.cpu_s, own.ppid)
                )
    return found


def _read(path: Path) -> Stat | None:
    try:
        return parse_stat(path.read_text())
    except OSError:
        return None


def group_of(thread: ThreadStat, first_pid: int | None) -> str:
    """The group a thread counts in. By process: the server's first process ("main process":
    the arbiter, or the only process) or a worker process ("workers"). By thread: the process's
    main thread ("main thread": a Python server's interpreter thread), a thread that named itself
    ("runtime NAME", numbers stripped: tokio-rt-worker, a native core's threads), or a thread that
    kept its process's name ("other threads": Python's threading pools, native threads unnamed)."""
    where = "main process" if thread.pid == first_pid else "workers"
    if thread.tid == thread.pid:
        kind = "main thread"
    elif thread.name != thread.process_name:
        kind = f"runtime {_DIGITS.sub('', thread.name) or thread.name}"
    else:
        kind = "other threads"
    return f"{where}: {kind}"


def root_pid(threads: list[ThreadStat]) -> int:
    """The server's first process: the lowest pid whose parent is not in the tree."""
    pids = {t.pid for t in threads}
    return min((t.pid for t in threads if t.ppid not in pids), default=min(pids))


@dataclass
class ThreadAccount:
    """CPU per thread group over a window: call `observe` with the tree's pids at its start, now
    and then while it runs (threads and workers come and go), and at its end. A thread first seen
    after the start counts from zero (it was born in the window); one seen at the start counts
    from there. A thread that ends between two readings is still counted: a process's own CPU
    time keeps its ended threads', and what the live threads do not account for is put in the
    group "threads that ended". A whole process that ends between readings loses its last second."""

    first_pid: int | None = None
    _first: dict[tuple[int, int], float] = field(default_factory=dict)
    _last: dict[tuple[int, int], ThreadStat] = field(default_factory=dict)
    _proc_first: dict[int, float] = field(default_factory=dict)
    _proc_last: dict[int, float] = field(default_factory=dict)
    _peak: int = 0
    _readings: int = 0
    _t0: float | None = None
    _t1: float | None = None

    def observe(
        self,
        pids: list[int],
        now: float,
        threads: list[ThreadStat] | None = None,
        processes: dict[int, float] | None = None,
    ) -> None:
        """One reading; tests give `threads` and `processes` (pid -> CPU seconds) themselves."""
        if threads is None:
            processes = {}
            seen = read_threads(pids, processes=processes)
        else:
            seen = threads
        if self.first_pid is None and seen:
            self.first_pid = root_pid(seen)
        for pid, cpu in (processes or {}).items():
            self._proc_first.setdefault(pid, cpu if self._readings == 0 else 0.0)
            self._proc_last[pid] = cpu
        for t in seen:
            key = (t.pid, t.tid)
            if key not in self._first:
                self._first[key] = t.cpu_s if self._readings == 0 else 0.0
            self._last[key] = t
        self._peak = max(self._peak, len(seen))
        self._readings += 1
        self._t0 = now if self._t0 is None else self._t0
        self._t1 = now

    def groups_cpu_s(self) -> dict[str, float]:
        out: dict[str, float] = {}
        live: dict[int, float] = {}
        for key, t in self._last.items():
            group = group_of(t, self.first_pid)
            used = max(0.0, t.cpu_s - self._first[key])
            out[group] = out.get(group, 0.0) + used
            live[t.pid] = live.get(t.pid, 0.0) + used
        for pid, last in self._proc_last.items():
            ended = (last - self._proc_first[pid]) - live.get(pid, 0.0)
            if ended > 0.005:  # beyond the clock ticks' rounding
                where = "main process" if pid == self.first_pid else "workers"
                name = f"{where}: threads that ended"
                out[name] = out.get(name, 0.0) + ended
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def summary(self) -> ThreadUse | None:
        """What the repeat stores, or None when nothing was read over a window."""
        if self._readings < 2 or self._t0 is None or self._t1 is None or self._t1 <= self._t0:
            return None
        groups = self.groups_cpu_s()
        names: dict[str, int] = {}
        for t in self._last.values():
            names[t.name] = names.get(t.name, 0) + 1
        window = self._t1 - self._t0
        return ThreadUse(
            threads_peak=self._peak,
            threads_seen=len(self._last),
            processes=len({pid for pid, _ in self._last}),
            names=dict(sorted(names.items())),
            groups_cpu_s={k: round(v, 3) for k, v in groups.items()},
            window_s=round(window, 3),
            cores_used=sum(groups.values()) / window,
        )


@dataclass(frozen=True)
class ThreadUse:
    """A repeat's threads: the most alive at once, every one seen, their names (with counts), the
    CPU seconds of each group, and the cores used (CPU seconds per second of the window)."""

    threads_peak: int
    threads_seen: int
    processes: int
    names: dict[str, int]
    groups_cpu_s: dict[str, float]
    window_s: float
    cores_used: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "threads_peak": self.threads_peak,
            "threads_seen": self.threads_seen,
            "processes": self.processes,
            "names": self.names,
            "groups_cpu_s": self.groups_cpu_s,
            "window_s": self.window_s,
            "cores_used": round(self.cores_used, 4),
        }
