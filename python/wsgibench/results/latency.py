"""Latency over every request kind: the kinds' HdrHistograms added exactly (never percentiles
averaged), each kind's own figures beside it, and which percentiles are lower bounds because they
fall on failed requests (recorded at the time they failed, never answered)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hdrh.histogram import HdrHistogram

from wsgibench.results.engine_result import EngineResult, Histogram, KindResult
from wsgibench.results.hdr_docs import histogram_doc


def _decoded(h: Histogram) -> HdrHistogram:
    return HdrHistogram.decode(h.hdr)


def overall(result: EngineResult) -> Histogram | None:
    """The latency of every request of every kind that ended: complete replies and, in a
    format-2 result, failures at the time they failed. One kind: its own histogram as is."""
    return _overall(result, lambda k: k.latency)


def replies(result: EngineResult) -> Histogram | None:
    """The latency of the complete replies alone (ok or not), every kind."""
    return _overall(result, lambda k: k.reply_latency)


def _overall(result: EngineResult, pick: Any) -> Histogram | None:
    parts = _recorded([pick(k) for k in result.kinds])
    if not parts:
        return pick(result.first_kind) if result.first_kind else None
    if len(parts) == 1:
        return parts[0]
    merged = _merged(parts)
    return None if merged is None else Histogram.from_dict(histogram_doc(merged))


def added(result: EngineResult) -> HdrHistogram | None:
    """The HdrHistogram of every request of every kind that ended, decoded (a new object, free to
    add more into); None when a kind with values has no encoded histogram, or none has values."""
    return _merged(_recorded([k.latency for k in result.kinds]))


def added_failures(result: EngineResult) -> HdrHistogram | None:
    """The failures' HdrHistogram over every kind (None: none failed, or a format-1 result)."""
    return _merged(_recorded([k.failed_latency for k in result.kinds]))


def _merged(parts: list[Histogram]) -> HdrHistogram | None:
    if not parts or any(not part.hdr for part in parts):
        return None
    merged = _decoded(parts[0])
    for part in parts[1:]:
        merged.add(_decoded(part))
    return merged


def _recorded(parts: list[Histogram | None]) -> list[Histogram]:
    return [h for h in parts if h is not None and h.count]


def on_failures(failures: HdrHistogram | None, value: int) -> bool:
    """Whether `value` (a percentile or the max read off the latency of every request) falls in a
    bucket that holds a failed request: then the true figure is only known to be at least
    `value` (a failure is recorded at the time it failed, and its reply never came)."""
    return failures is not None and value > 0 and failures.get_count_at_value(value) > 0


@dataclass(frozen=True)
class Bounds:
    """Which of a latency's figures are lower bounds ("≥"), as names: p50, p90, p99, max."""

    names: frozenset[str] = frozenset()

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def as_list(self) -> list[str]:
        return sorted(self.names)


def bounds(result: EngineResult) -> Bounds:
    """Which figures of `overall(result)` fall on failed requests (none for format 1, whose
    latency held no failures)."""
    return _bounds_of(overall(result), added_failures(result))


def _bounds_of(whole: Histogram | None, failures: HdrHistogram | None) -> Bounds:
    if whole is None or failures is None or not failures.get_total_count():
        return Bounds()
    names = ("p50", "p90", "p99", "max")
    return Bounds(frozenset(n for n in names if on_failures(failures, int(getattr(whole, n)))))


def by_kind(result: EngineResult) -> dict[str, dict[str, Any]]:
    """Each kind's valid replies per second of the measured window, errors by class, latency (µs,
    every request that ended, bounds said) and its complete replies' latency alone."""
    window = result.totals.window_s
    elapsed = result.elapsed_s or 1.0
    found = {}
    for k in result.kinds:
        lat, rep = k.latency, k.reply_latency
        rate = k.ok_in_window / window if window and k.ok_in_window is not None else k.ok / elapsed
        found[k.name] = {
            "ok": k.ok,
            "requests_sent": k.requests_sent,
            "errors": {c: n for c, n in k.errors.items() if n},
            "rps_ok": rate,
            "mean_us": lat.mean if lat else None,
            "p50_us": lat.p50 if lat else None,
            "p90_us": lat.p90 if lat else None,
            "p99_us": lat.p99 if lat else None,
            "max_us": lat.max if lat else None,
            "bounds": _kind_bounds(k).as_list(),
            "reply_p50_us": rep.p50 if rep else None,
            "reply_p99_us": rep.p99 if rep else None,
        }
    return found


def _kind_bounds(k: KindResult) -> Bounds:
    if k.failed_latency is None or not k.failed_latency.count:
        return Bounds()
    return _bounds_of(k.latency, _decoded(k.failed_latency))
