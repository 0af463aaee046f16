"""A fake engine that returns chosen results, and a fake server handle: the runner's judging and
diagnosis driven exactly, with no server and no engine process (hyperfine's mock executor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.engine_result import ERROR_CLASSES, EngineResult


def _histogram(mean_us: float, p50_us: int, p99_us: int, count: int = 1) -> dict[str, Any]:
    """The percentiles as given, and an HdrHistogram of `count` values that has them: 98 % of
    them at p50, 2 % at p99 (for adding repeats up, as a capacity step does)."""
    h = HdrHistogram(1, 3_600_000_000, 3)
    count = max(count, 1)
    slow = max(1, count // 50)
    h.record_value(p50_us, max(count - slow, 1))
    h.record_value(p99_us, slow)
    return {
        "count": count,
        "min": p50_us // 2,
        "mean": mean_us,
        "p50": p50_us,
        "p90": p99_us,
        "p99": p99_us,
        "p999": p99_us,
        "max": p99_us,
        "stdev": 0.0,
        "hdr": h.encode().decode(),
    }


def _doc(h: HdrHistogram, mean_us: float | None = None) -> dict[str, Any]:
    empty = h.get_total_count() == 0
    return {
        "count": h.get_total_count(),
        "min": 0 if empty else h.get_min_value(),
        "mean": (0.0 if empty else h.get_mean_value()) if mean_us is None else mean_us,
        "p50": h.get_value_at_percentile(50),
        "p90": h.get_value_at_percentile(90),
        "p99": h.get_value_at_percentile(99),
        "p999": h.get_value_at_percentile(99.9),
        "max": h.get_max_value(),
        "stdev": 0.0,
        "hdr": h.encode().decode(),
    }


def with_failures(kind: dict[str, Any], failed: int, fail_us: int) -> dict[str, Any]:
    """A kind of a format-2 result: its replies' latency kept as `reply_latency_us`, `failed`
    failures recorded at `fail_us` in `failed_latency_us`, and `latency_us` holding both."""
    replies = kind["latency_us"]
    failures = HdrHistogram(1, 3_600_000_000, 3)
    if failed:
        failures.record_value(fail_us, failed)
    both = (
        HdrHistogram.decode(replies["hdr"])
        if replies.get("hdr")
        else HdrHistogram(1, 3_600_000_000, 3)
    )
    both.add(failures)
    whole = replies if not failed else _doc(both)
    return {
        **kind,
        "reply_latency_us": replies,
        "failed_latency_us": _doc(failures),
        "latency_us": whole,
        "ok_in_window": kind.get("ok_in_window", kind["ok"]),
    }


def recorded(name: str, ok: int, latency_us: int) -> dict[str, Any]:
    """A kind whose `ok` replies all took `latency_us`, with a real HdrHistogram (for merging)."""
    h = HdrHistogram(1, 3_600_000_000, 3)
    h.record_value(latency_us, ok)
    hist = {
        "count": ok,
        "min": latency_us,
        "mean": float(latency_us),
        "p50": latency_us,
        "p90": latency_us,
        "p99": latency_us,
        "p999": latency_us,
        "max": latency_us,
        "stdev": 0.0,
        "hdr": h.encode().decode(),
    }
    errs = {c: 0 for c in ERROR_CLASSES}
    return {
        "name": name,
        "requests_sent": ok,
        "responses": ok,
        "ok": ok,
        "errors": errs,
        "bad_status_codes": {},
        "service_us": None,
        "latency_us": hist,
        "connect_us": _histogram(50.0, 50, 100),
    }


def _kind(
    ok: int, errs: dict[str, int], mean_us: float, p50_us: int, p99_us: int
) -> dict[str, Any]:
    """The one kind of a result: its `ok` replies at the percentiles given."""
    return {
        "name": "pong",
        "requests_sent": ok + sum(errs.values()),
        "responses": ok,
        "ok": ok,
        "errors": errs,
        "bad_status_codes": {},
        "service_us": None,
        "latency_us": _histogram(mean_us, p50_us, p99_us, ok),
        "connect_us": _histogram(50.0, 50, 100),
    }


# The plan a result echoes unless a test gives other fields of it.
PLAN = {
    "target": {"host": "127.0.0.1", "port": 8080},
    "model": {"kind": "closed", "connections": 10, "duration_s": 1},
}


def result(
    ok: int = 1000,
    errors: dict[str, int] | None = None,
    elapsed_s: float = 1.0,
    mean_us: float | None = None,
    p50_us: int = 1000,
    p99_us: int = 2000,
    saturated: bool = False,
    reasons: tuple[str, ...] = (),
    close_replies: int = 0,
    connections: int = 1,
    plan: dict[str, Any] | None = None,
    kinds: list[dict[str, Any]] | None = None,
    totals: dict[str, Any] | None = None,
    lag_max_us: int = 0,
    fail_us: int | None = None,
    timeline: list[dict[str, Any]] | None = None,
    started_unix_s: float = 1.0,
) -> EngineResult:
    """An engine result as the engine prints it (format 2), parsed; `kinds` (`recorded`) add up
    to totals. The errors that are no reply (all but bad_status and bad_body) are in the latency
    at `fail_us` (default: the p99), as the engine times failures."""
    errs = {c: 0 for c in ERROR_CLASSES} | (errors or {})
    kind = _kind(ok, errs, p50_us if mean_us is None else mean_us, p50_us, p99_us)
    if kinds:
        ok = sum(k["ok"] for k in kinds)
    sent = ok + sum(errs.values())
    limits = ("fd_limit", "ports_exhausted", "bad_status", "bad_body")
    failed = sum(n for c, n in errs.items() if c not in limits)
    timed = fail_us if fail_us is not None else p99_us
    parts = [
        with_failures(k, failed if i == 0 else 0, timed) for i, k in enumerate(kinds or [kind])
    ]
    doc = {
        "format_version": 2,
        "engine": {"name": "wsgibench-engine", "version": "0.1.0", "protocol_version": 1},
        "plan": PLAN | (plan or {}),
        "started_unix_s": started_unix_s,
        "elapsed_s": elapsed_s,
        "totals": {
            "requests_sent": sent,
            "responses": ok,
            "ok": ok,
            "errors": errs,
            "bad_status_codes": {},
            "idle_close": 0,
            "connections_opened": connections,
            "connection_close_replies": close_replies,
            "bytes_received": ok * 100,
            "rps_ok": ok / elapsed_s,
            **(totals or {}),
        },
        "kinds": parts,
        "timeline": timeline or [],
        "cost": {"user_s": 0.1, "sys_s": 0.1, "cpu_fraction": 0.2, "threads": 1},
        "schedule": {"lag_p99_us": lag_max_us // 2, "lag_max_us": lag_max_us},
        "saturated": saturated,
        "saturation_reasons": list(reasons),
    }
    return EngineResult.from_dict(doc)


@dataclass
class FakeEngine:
    """Returns the results it was given, in order (the last one again when they run out)."""

    results: list[EngineResult]
    plans: list[EnginePlan] = field(default_factory=list)

    def run(self, plan: EnginePlan) -> EngineResult:
        self.plans.append(plan)
        index = min(len(self.plans) - 1, len(self.results) - 1)
        return self.results[index]


@dataclass
class FakeCgroup:
    applied: str = "cgroup v2 memory.max=536870912"
    kills: int = 0

    def oom_kills(self) -> int:
        return self.kills


@dataclass
class FakeServer:
    """A server handle whose death, log growth and OOM kills the test decides."""

    host: str = "127.0.0.1"
    port: int = 9  # nothing listens there: the sampler counts no connections
    cgroup: FakeCgroup = field(default_factory=FakeCgroup)
    dies_after: int | None = None  # repeats after which dead() reports an exit
    log_bytes_per_call: int = 0
    calls: int = 0
    _log: int = 0

    limit_change: str | None = None  # what limits_changed() says (a test changes a limit)
    log_text: str = ""  # what the server logs during each repeat

    def processes(self) -> list[Any]:
        return []

    def tree_pids(self) -> list[int]:
        return []

    def cpu_usage_s(self) -> float | None:
        return None

    def limits_changed(self) -> str | None:
        return self.limit_change

    def log_marks(self) -> list[int]:
        return []

    def log_since(self, marks: list[int]) -> str:
        return self.log_text

    def dead(self) -> str | None:
        self.calls += 1
        if self.dies_after is not None and self.calls > self.dies_after:
            return "server process exited with code 3: fault: crashing"
        return None

    def logged_bytes(self) -> int:
        self._log += self.log_bytes_per_call
        return self._log
