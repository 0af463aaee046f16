"""The engine's result document (docs/engine-result.schema.json) parsed once into typed objects,
which everything above the engine driver reads; `raw` keeps the document as printed, for the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from wsgibench.results import json_fields as jf
from wsgibench.results.engine_parts import Cost, Second
from wsgibench.results.engine_plan import EnginePlan, MalformedPlan
from wsgibench.results.http2_result import Http2Result
from wsgibench.results.result_fields import (
    MalformedResult,
    optional_float,
    optional_int,
    read_float,
    read_int,
    read_turnaround,
)
from wsgibench.results.tls_result import TlsResult
from wsgibench.results.websocket_result import WebSocketResult
from wsgibench.results.wrong_replies import WrongReply, bounded_doc
from wsgibench.results.wrong_replies import read as read_wrong

# 2: a kind's latency covers every request that ended, failures at the time they failed; 1: the
# complete replies only (stores written before read back with a note that says so).
RESULT_FORMAT_VERSION = 2
READ_FORMAT_VERSIONS = (1, 2)
# Error classes that are the engine's own limits (descriptors, ephemeral ports), not the server's.
ENGINE_LIMIT_CLASSES = ("fd_limit", "ports_exhausted")
# Every error class of a result, in the engine's order (docs/engine-result.schema.json).
ERROR_CLASSES = (
    "connect_refused",
    "connect_timeout",
    "connect_error",
    "reset",
    "closed_before_response",
    "timeout",
    "bad_status",
    "bad_body",
    "protocol_error",
    *ENGINE_LIMIT_CLASSES,
    # WebSocket loads: an upgrade that failed (its messages never sent), an echo that never came.
    "handshake_failed",
    "message_lost",
    # HTTP/2 loads: a stream the server reset (RST_STREAM).
    "stream_reset",
    # TLS loads: a handshake that failed (the requests of its connection never sent).
    "tls_failed",
)


@dataclass(frozen=True)
class Histogram:
    """Latency percentiles in microseconds, and the HdrHistogram they came from (base64)."""

    count: int
    min: int
    mean: float
    p50: int
    p90: int
    p99: int
    p999: int
    max: int
    stdev: float
    hdr: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Histogram:
        return cls(
            read_int(d, "count"),
            read_int(d, "min"),
            read_float(d, "mean"),
            read_int(d, "p50"),
            read_int(d, "p90"),
            read_int(d, "p99"),
            read_int(d, "p999", 0),
            read_int(d, "max"),
            read_float(d, "stdev", 0.0),
            str(d.get("hdr", "")),
        )


def _histogram(value: Any) -> Histogram | None:
    return Histogram.from_dict(value) if isinstance(value, Mapping) else None


@dataclass(frozen=True)
class KindResult:
    """One request kind's counts and histograms. `latency`: every request that ended, complete
    replies and failures (at the time they failed) alike — in a format-1 result, the complete
    replies only; `reply_latency`: the complete replies (ok or not); `failed_latency`: the
    failures alone (None in format 1)."""

    name: str
    requests_sent: int
    responses: int
    ok: int
    errors: dict[str, int]
    bad_status_codes: dict[str, int]
    latency: Histogram | None
    service: Histogram | None  # open models only: from the actual send, not the intended one
    connect: Histogram | None
    reply_latency: Histogram | None = None
    failed_latency: Histogram | None = None
    ok_in_window: int | None = None  # valid replies within the measured window (None: before)
    resent: int = 0
    # the first wrong reply of each error class, quoted (results/wrong_replies.py)
    wrong_replies: tuple[WrongReply, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> KindResult:
        latency = _histogram(d.get("latency_us"))
        replies = _histogram(d.get("reply_latency_us")) if "reply_latency_us" in d else latency
        return cls(
            str(d.get("name", "")),
            read_int(d, "requests_sent", 0),
            read_int(d, "responses", 0),
            read_int(d, "ok", 0),
            jf.counts(d.get("errors")),
            jf.counts(d.get("bad_status_codes")),
            latency,
            _histogram(d.get("service_us")),
            _histogram(d.get("connect_us")),
            replies,
            _histogram(d.get("failed_latency_us")),
            optional_int(d, "ok_in_window"),
            read_int(d, "resent", 0),
            read_wrong(str(d.get("name", "")), d.get("wrong_replies")),
        )


@dataclass(frozen=True)
class Totals:
    requests_sent: int
    responses: int
    ok: int
    errors: dict[str, int]  # by error class
    bad_status_codes: dict[str, int]
    idle_close: int  # keep-alive connections the server closed with nothing outstanding
    connections_opened: int
    connection_close_replies: int
    bytes_received: int
    rps_ok: float
    unsolicited_bytes: int = 0
    abandoned: int = 0
    # Rate with a pool: requests timed out waiting for a free connection (never sent).
    queue_timeouts: int = 0
    peak_open_connections: int = 0
    # Keep-alive connections the server closed after a complete reply without saying so, and
    # the idempotent requests re-sent on a new connection because of it (not errors).
    unannounced_closes: int = 0
    resent: int = 0
    # The measured window (closed: duration_s; open: the schedule) and what completed in it; a
    # closed run's elapsed time also holds the drain of requests still in flight at its end.
    window_s: float | None = None
    ok_in_window: int | None = None
    completed_after_window: int | None = None
    # Closed loops: the engine's own time from a reply to the next request on its connection
    # ({count, mean, p50, p99} in µs); None for open models.
    turnaround_us: dict[str, float] | None = None
    responses_in_window: int | None = None  # replies (ok or not) within the window

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def engine_limit_errors(self) -> int:
        """Requests that failed because the engine ran out of descriptors or ports."""
        return sum(self.errors.get(c, 0) for c in ENGINE_LIMIT_CLASSES)

    @property
    def server_errors(self) -> int:
        """Errors the server caused: timeouts, resets, refusals, bad replies (not the engine's)."""
        return self.error_count - self.engine_limit_errors

    def top_errors(self, n: int = 3, server_only: bool = False) -> str:
        """The commonest error classes, e.g. "timeout 13, reset 2" ("no errors" when none)."""
        found = sorted(
            (
                (k, v)
                for k, v in self.errors.items()
                if v and not (server_only and k in ENGINE_LIMIT_CLASSES)
            ),
            key=lambda kv: -kv[1],
        )
        return ", ".join(f"{k} {v}" for k, v in found[:n]) or "no errors"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Totals:
        return cls(
            read_int(d, "requests_sent"),
            read_int(d, "responses", 0),
            read_int(d, "ok"),
            jf.counts(d.get("errors")),
            jf.counts(d.get("bad_status_codes")),
            read_int(d, "idle_close", 0),
            read_int(d, "connections_opened", 0),
            read_int(d, "connection_close_replies", 0),
            read_int(d, "bytes_received", 0),
            read_float(d, "rps_ok", 0.0),
            read_int(d, "unsolicited_bytes", 0),
            read_int(d, "abandoned", 0),
            read_int(d, "queue_timeouts", 0),
            read_int(d, "peak_open_connections", 0),
            read_int(d, "unannounced_closes", 0),
            read_int(d, "resent", 0),
            optional_float(d, "window_s"),
            optional_int(d, "ok_in_window"),
            optional_int(d, "completed_after_window"),
            read_turnaround(d.get("turnaround_us")),
            optional_int(d, "responses_in_window"),
        )


@dataclass(frozen=True)
class LoadHostRun:
    """One load host's share of a result merged from several hosts, as that host printed it."""

    address: str
    hostname: str
    started_unix_s: float  # its real start, in the controller's clock
    start_after_first_s: float
    clock_offset_s: float
    clock_uncertainty_s: float
    runqueue_wait_s: float | None
    result: EngineResult
    start_margin_s: float | None = None  # how far ahead of its instant the start reached it
    began_late_s: float | None = None  # its engine's start after that instant (its own clock)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LoadHostRun:
        return cls(
            str(d["address"]),
            str(d.get("hostname", "")),
            read_float(d, "started_unix_s"),
            read_float(d, "start_after_first_s", 0.0),
            read_float(d, "clock_offset_s", 0.0),
            read_float(d, "clock_uncertainty_s", 0.0),
            optional_float(d, "runqueue_wait_s"),
            EngineResult.from_dict(d["result"]),
            optional_float(d, "start_margin_s"),
            optional_float(d, "began_late_s"),
        )


@dataclass(frozen=True)
class EngineResult:
    """One run of the engine: totals, the request kinds by name, the timeline, cost, saturation."""

    engine_version: str
    plan: EnginePlan  # the plan as run, echoed back
    started_unix_s: float
    elapsed_s: float
    totals: Totals
    kinds: tuple[KindResult, ...]
    timeline: tuple[Second, ...]
    cost: Cost
    lag_p99_us: int
    lag_max_us: int
    saturated: bool
    saturation_reasons: tuple[str, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)
    # Seen by the driver from outside: its most-delayed thread's runnable wait (None: not measured).
    runqueue_wait_s: float | None = None
    # Load from several hosts: each host's own result, and how far apart their starts were.
    load_hosts: tuple[LoadHostRun, ...] = ()
    start_skew_s: float | None = None
    start_skew_bound_s: float | None = None
    # how far the skew may be off: the hosts' clock offsets are estimates (twice the largest
    # uncertainty, half a best round trip each)
    start_skew_uncertainty_s: float = 0.0
    websocket: WebSocketResult | None = None  # WebSocket loads: upgrades and why they failed
    http2: Http2Result | None = None  # HTTP/2 loads: settings, GOAWAYs, resets
    tls: TlsResult | None = None  # TLS loads: handshakes, resumptions, ALPN, failures
    format_version: int = RESULT_FORMAT_VERSION

    @property
    def latency_covers_failures(self) -> bool:
        """Whether `latency` holds the failed requests too (format 2), or only complete replies
        (a result of format 1, written before: its percentiles leave failures out)."""
        return self.format_version >= 2

    def with_runqueue_wait(self, waited_s: float | None) -> EngineResult:
        return replace(self, runqueue_wait_s=waited_s)

    @property
    def skew_exceeded(self) -> bool:
        """The load hosts started further apart than the cell allows, the clock offsets'
        uncertainty added to the skew measured (it may be that much more)."""
        return (
            self.start_skew_s is not None
            and self.start_skew_bound_s is not None
            and self.start_skew_s + self.start_skew_uncertainty_s > self.start_skew_bound_s
        )

    @property
    def runqueue_wait_fraction(self) -> float | None:
        """The share of the run its most-delayed thread spent waiting for a CPU."""
        if self.runqueue_wait_s is None or self.elapsed_s <= 0:
            return None
        return self.runqueue_wait_s / self.elapsed_s

    @property
    def first_kind(self) -> KindResult | None:
        return self.kinds[0] if self.kinds else None

    @property
    def wrong_replies(self) -> tuple[WrongReply, ...]:
        """Every kind's quoted wrong replies, kind by kind."""
        return tuple(w for k in self.kinds for w in k.wrong_replies)

    def kind(self, name: str) -> KindResult:
        for k in self.kinds:
            if k.name == name:
                return k
        raise KeyError(name)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EngineResult:
        """Parse a result document; MalformedResult says what is wrong with it."""
        if not isinstance(d, Mapping):
            raise MalformedResult("the result is not a JSON object")
        if d.get("format_version") not in READ_FORMAT_VERSIONS:
            raise MalformedResult(
                f"engine result format {d.get('format_version')} is not one of "
                f"{', '.join(map(str, READ_FORMAT_VERSIONS))}"
            )
        try:
            schedule = d.get("schedule") or {}
            return cls(
                engine_version=str((d.get("engine") or {}).get("version", "")),
                plan=EnginePlan.from_dict(d.get("plan") or {}),
                started_unix_s=read_float(d, "started_unix_s", 0.0),
                elapsed_s=read_float(d, "elapsed_s"),
                totals=Totals.from_dict(d["totals"]),
                kinds=tuple(KindResult.from_dict(k) for k in d.get("kinds") or ()),
                timeline=tuple(Second.from_dict(s) for s in d.get("timeline") or ()),
                cost=Cost.from_dict(d["cost"]),
                lag_p99_us=read_int(schedule, "lag_p99_us", 0),
                lag_max_us=read_int(schedule, "lag_max_us", 0),
                saturated=bool(d.get("saturated")),
                saturation_reasons=tuple(str(r) for r in d.get("saturation_reasons") or ()),
                raw=bounded_doc(d),  # a wrong reply's quoted bytes bounded for the store
                load_hosts=tuple(LoadHostRun.from_dict(h) for h in d.get("load_hosts") or ()),
                start_skew_s=optional_float(d, "start_skew_s"),
                start_skew_bound_s=optional_float(d, "start_skew_bound_s"),
                start_skew_uncertainty_s=read_float(d, "start_skew_uncertainty_s", 0.0),
                websocket=WebSocketResult.read(d.get("websocket")),
                http2=Http2Result.read(d.get("http2")),
                tls=TlsResult.read(d.get("tls")),
                format_version=int(d["format_version"]),
            )
        except MalformedPlan as exc:
            raise MalformedResult(str(exc)) from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedResult(f"engine result lacks or misstates {exc}") from None
