"""The engine result's smaller parts, typed: a second of its timeline, the engine's own cost, and
each engine thread's CPUs as read back (results/engine_result.py reads the whole document)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wsgibench.results import json_fields as jf
from wsgibench.results.result_fields import optional_float, read_float, read_int


@dataclass(frozen=True)
class Second:
    """One second of the run's timeline. Its percentiles are None when nothing ended in it, and
    in a result merged from several load hosts (a second's percentiles cannot be added)."""

    t_s: int
    completed: int
    ok: int
    errors: dict[str, int]
    open_connections: int
    p50_us: int | None
    p99_us: int | None
    resent: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Second:
        return cls(
            read_int(d, "t_s"),
            read_int(d, "completed", 0),
            read_int(d, "ok", 0),
            jf.counts(d.get("errors")),
            read_int(d, "open_connections", 0),
            None if "p50_us" in d and d["p50_us"] is None else read_int(d, "p50_us", 0),
            None if "p99_us" in d and d["p99_us"] is None else read_int(d, "p99_us", 0),
            read_int(d, "resent", 0),
        )


@dataclass(frozen=True)
class ThreadCpu:
    """One engine thread: the CPUs the kernel held for it (read back) and its CPU share."""

    thread: int
    cpus: tuple[int, ...]
    cpu_s: float
    cpu_fraction: float

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ThreadCpu:
        return cls(
            read_int(d, "thread"),
            tuple(int(c) for c in d.get("cpus") or ()),
            read_float(d, "cpu_s", 0.0),
            read_float(d, "cpu_fraction", 0.0),
        )


@dataclass(frozen=True)
class Cost:
    """What the engine itself used, and whether its pinning took."""

    user_s: float
    sys_s: float
    cpu_fraction: float
    threads: int
    max_rss_kib: int | None = None
    nofile_limit: int | None = None
    pinned_cpus: tuple[int, ...] = ()
    pin_error: str | None = None
    # The engine's I/O backend (epoll, io_uring; None before the engine recorded it), why
    # "auto" did not pick io_uring, and the system calls it made in all.
    io_backend: str | None = None
    io_note: str | None = None
    syscalls: int | None = None
    # Format 2: each thread's CPUs as read back and its CPU share; the busiest thread's share;
    # the engine's CPU seconds within the measured window.
    thread_cpus: tuple[ThreadCpu, ...] = ()
    busiest_thread_cpu_fraction: float | None = None
    window_cpu_s: float | None = None

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    @property
    def busiest_fraction(self) -> float:
        """The busiest thread's CPU share (the average over threads for a result before)."""
        return max(self.busiest_thread_cpu_fraction or 0.0, self.cpu_fraction)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Cost:
        rss, nofile = d.get("max_rss_kib"), d.get("nofile_limit")
        return cls(
            read_float(d, "user_s"),
            read_float(d, "sys_s"),
            read_float(d, "cpu_fraction", 0.0),
            read_int(d, "threads", 1),
            None if rss is None else int(rss),
            None if nofile is None else int(nofile),
            tuple(int(c) for c in d.get("pinned_cpus") or ()),
            None if d.get("pin_error") is None else str(d["pin_error"]),
            None if d.get("io_backend") is None else str(d["io_backend"]),
            None if d.get("io_note") is None else str(d["io_note"]),
            None if d.get("syscalls") is None else int(d["syscalls"]),
            tuple(ThreadCpu.from_dict(t) for t in d.get("thread_cpus") or ()),
            optional_float(d, "busiest_thread_cpu_fraction"),
            optional_float(d, "window_cpu_s"),
        )
