"""What one repeat stores (`Repeat`): the headline numbers of a row of the repeats table, the
sampler's timeline, the engine's result whole, and the harness's own counters (its extra_json),
each a typed field. run/records.py makes it, judging reads it, the store writes it; reports read
it back (`StoredRepeat`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from wsgibench.machine import cpustat
from wsgibench.machine.sampler import Sample
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.verdict import Verdict


@dataclass(frozen=True)
class Window:
    """The measured window and what completed in it and after it (the drain)."""

    window_s: float | None
    ok_in_window: int | None
    completed_after_window: int | None
    unannounced_closes: int
    resent: int
    engine_turnaround_us: dict[str, float] | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Interference:
    """How much of the server's and the engine's CPUs other work took during the repeat (the
    harness's own CPU time taken off), and whether the engine was starved of its CPUs."""

    harness_cpu_s: float
    server: cpustat.Interference
    engine: cpustat.Interference
    contended: str | None  # what other work took, when it flags the repeat
    engine_waited_pct: float | None  # runnable but not running, % of the run (None: not measured)
    engine_starved: bool
    # how finely other work was measured, in % of each side's CPUs (two clock ticks over the run)
    resolution_pct: dict[str, float] | None = None
    # the share of each side's own CPU time its CPUs' ticks missed beyond the resolution, taken
    # off the other side's other work (run/records._unticked_s)
    unticked_pct: dict[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "harness_cpu_s": self.harness_cpu_s,
            "server": self.server.as_dict(),
            "engine": self.engine.as_dict(),
            "contended": self.contended,
            "engine_waited_pct": self.engine_waited_pct,
            "engine_starved": self.engine_starved,
            "resolution_pct": self.resolution_pct,
            "unticked_pct": self.unticked_pct,
        }


@dataclass(frozen=True)
class Counters:
    """What the harness counted beside the engine during the repeat, and the figures it derived
    from the engine's result, as the store's extra_json keeps them."""

    netstat: dict[str, int]  # the TcpExt counters' change over the repeat (listen drops, ...)
    log_bytes: int  # what the server wrote to its logs
    kinds: dict[str, dict[str, Any]]  # each request kind's own figures (results/latency.by_kind)
    window: Window
    interference: Interference
    expected_requests: int | None  # seed 000's check: the requests the plan called for, if known
    nothing_dropped: bool  # ... every one sent and validly answered
    # the server's threads: count, names, CPU per group, cores used (machine/threads.ThreadUse)
    threads: dict[str, Any] | None = None
    # the processes of the server that died or appeared, how, and the requests lost with them
    # (results/deaths.record)
    worker_deaths: dict[str, Any] | None = None
    # what the latency covers (every request, failures at the time they failed), which of its
    # figures are lower bounds, and the complete replies' own percentiles
    latency: dict[str, Any] | None = None
    # the server's CPU as its cgroup accounts it (exited processes kept), whole and in the window
    server_cpu: dict[str, Any] | None = None
    # the first wrong reply of each error class per kind, quoted (results/wrong_replies.py)
    wrong_replies: list[dict[str, Any]] | None = None

    def as_dict(self) -> dict[str, Any]:
        optional = {
            "threads": self.threads,
            "worker_deaths": self.worker_deaths,
            "latency": self.latency,
            "server_cpu": self.server_cpu,
            "wrong_replies": self.wrong_replies or None,
        }
        return {
            **{k: v for k, v in optional.items() if v is not None},
            "netstat": self.netstat,
            "log_bytes": self.log_bytes,
            "kinds": self.kinds,
            "window": self.window.as_dict(),
            "interference": self.interference.as_dict(),
            "expected_requests": self.expected_requests,
            "nothing_dropped": self.nothing_dropped,
        }


@dataclass(frozen=True)
class Repeat:
    """One repeat as stored. The headline fields are the repeats table's columns (results/store.py
    maps each one); `saturated` and `saturation_reasons` are the judged ones once the cell has
    applied its verdict (`judged`)."""

    idx: int
    rps_ok: float  # valid replies per second of the measured window
    requests: int
    ok: int
    errors: int
    error_rate: float  # the server's share: errors the engine's own limits caused are not counted
    latency_p50_us: float | None
    latency_p90_us: float | None
    latency_p99_us: float | None
    latency_max_us: float | None
    cpu_mean_pct: float | None  # the server's process tree, % of one core
    cpu_peak_pct: float | None
    rss_start_bytes: int | None
    rss_end_bytes: int | None
    rss_peak_bytes: int | None
    rss_mean_bytes: int | None
    conns_peak: int | None
    engine_cpu_s: float
    sampler_cpu_s: float
    saturated: bool
    engine: EngineResult
    samples: tuple[Sample, ...] = ()
    counters: Counters | None = None  # None: recorded without the harness's counters
    # Judging's reasons for a saturated engine (None: not judged, or judging stopped before them)
    saturation_reasons: tuple[str, ...] | None = None
    more: Mapping[str, Any] = field(default_factory=dict)  # any other extra counters, as given

    @property
    def server_cpu(self) -> cpustat.Interference | None:
        """What the server's CPUs were busy with and the hypervisor took (None: not recorded)."""
        return self.counters.interference.server if self.counters is not None else None

    def judged(self, verdict: Verdict) -> Repeat:
        """This repeat as the cell stores it once judged: saturated as the verdict says."""
        return replace(
            self, saturated=verdict.saturated, saturation_reasons=verdict.saturation_reasons
        )

    def extra(self) -> dict[str, Any]:
        """The store's extra_json: the counters, judging's saturation reasons, and the rest."""
        found = self.counters.as_dict() if self.counters is not None else {}
        if self.saturation_reasons is not None:
            found["saturation_reasons"] = list(self.saturation_reasons)
        return {**found, **self.more}


@dataclass(frozen=True)
class StoredRepeat(Repeat):
    """A repeat read back from the store: its row id and the most processes the sampler saw in the
    server's tree, beside what it stored. Its samples stay in their table (`Store.samples`); its
    extra counters are as stored, in `more` (a store of an older version may lack some)."""

    id: int = 0
    processes_peak: int | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredRepeat:
        """A row of the repeats table (with `processes_peak`, from its samples)."""
        return cls(
            idx=row["idx"],
            rps_ok=row["rps_ok"],
            requests=row["requests"],
            ok=row["ok"],
            errors=row["errors"],
            error_rate=row["error_rate"],
            latency_p50_us=row["latency_p50_us"],
            latency_p90_us=row["latency_p90_us"],
            latency_p99_us=row["latency_p99_us"],
            latency_max_us=row["latency_max_us"],
            cpu_mean_pct=row["cpu_mean_pct"],
            cpu_peak_pct=row["cpu_peak_pct"],
            rss_start_bytes=row["rss_start_bytes"],
            rss_end_bytes=row["rss_end_bytes"],
            rss_peak_bytes=row["rss_peak_bytes"],
            rss_mean_bytes=row["rss_mean_bytes"],
            conns_peak=row["conns_peak"],
            engine_cpu_s=row["engine_cpu_s"],
            sampler_cpu_s=row["sampler_cpu_s"],
            saturated=bool(row["saturated"]),
            engine=EngineResult.from_dict(json.loads(row["engine_json"])),
            more=json.loads(row["extra_json"] or "{}"),
            id=row["id"],
            processes_peak=row["processes_peak"],
        )

    @property
    def threads(self) -> dict[str, Any] | None:
        """The server's threads as counted over the repeat (None: a store from before)."""
        found = self.more.get("threads")
        return found if isinstance(found, dict) else None

    @property
    def server_cpu(self) -> cpustat.Interference | None:
        found = (self.more.get("interference") or {}).get("server")
        if not isinstance(found, dict) or not {"busy_pct", "steal_pct"} <= found.keys():
            return None  # a store from before
        return cpustat.Interference.from_dict(found)

    @property
    def cores_used(self) -> float | None:
        return cores_used(self.more, self.cpu_mean_pct)

    @property
    def per_cpu_s(self) -> float | None:
        return per_cpu_s(self.rps_ok, self.cores_used)

    def column(self, name: str) -> float | None:
        """A column of the repeats table by its name (the metric a report asks for), as stored."""
        value: float | None = getattr(self, name)
        return value


def cores_used(extra: Mapping[str, Any], cpu_mean_pct: float | None) -> float | None:
    """CPU seconds the server's processes used per second of a repeat: its threads' sum (the
    stored `threads`), else the sampler's mean CPU share (a store from before)."""
    threads = extra.get("threads")
    counted = threads.get("cores_used") if isinstance(threads, dict) else None
    if isinstance(counted, (int, float)):
        return float(counted)
    return cpu_mean_pct / 100 if cpu_mean_pct is not None else None


def per_cpu_s(rps_ok: float | None, cores: float | None) -> float | None:
    """Valid replies per CPU-second of the server: the figure that compares servers by the CPU
    they used, not by their worker count (None below 1 % of a core: nothing to divide by)."""
    return rps_ok / cores if rps_ok is not None and cores and cores >= 0.01 else None


def start_of(repeat: Repeat) -> int:
    """The server start a repeat was measured in (its extra_json "start", run/cell.py); a repeat
    stored before starts were recorded counts as the cell's one start, 0."""
    start = repeat.more.get("start", 0)
    return int(start) if isinstance(start, int | float) else 0
