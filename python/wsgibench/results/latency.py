"""Latency over every request kind: the kinds' HdrHistograms added exactly (never percentiles
averaged), and each kind's own figures beside it."""

from __future__ import annotations

from typing import Any

from hdrh.histogram import HdrHistogram

from wsgibench.results.engine_result import EngineResult, Histogram
from wsgibench.results.hdr_docs import histogram_doc


def _decoded(h: Histogram) -> HdrHistogram:
    return HdrHistogram.decode(h.hdr)


def overall(result: EngineResult) -> Histogram | None:
    """The latency of every complete reply of every kind. One kind: its own histogram as is."""
    parts = _recorded(result)
    if not parts:
        return result.first_kind.latency if result.first_kind else None
    if len(parts) == 1:
        return parts[0]
    merged = _merged(parts)
    return None if merged is None else Histogram.from_dict(histogram_doc(merged))


def added(result: EngineResult) -> HdrHistogram | None:
    """The HdrHistogram of every complete reply of every kind, decoded (a new object, free to add
    more into); None when a kind with replies has no encoded histogram, or none has replies."""
    return _merged(_recorded(result))


def _merged(parts: list[Histogram]) -> HdrHistogram | None:
    if not parts or any(not part.hdr for part in parts):
        return None
    merged = _decoded(parts[0])
    for part in parts[1:]:
        merged.add(_decoded(part))
    return merged


def _recorded(result: EngineResult) -> list[Histogram]:
    return [k.latency for k in result.kinds if k.latency is not None and k.latency.count]


def by_kind(result: EngineResult) -> dict[str, dict[str, Any]]:
    """Each kind's valid replies per second and latency (µs), for loads with several kinds."""
    elapsed = result.elapsed_s or 1.0
    found = {}
    for k in result.kinds:
        lat = k.latency
        found[k.name] = {
            "ok": k.ok,
            "rps_ok": k.ok / elapsed,
            "mean_us": lat.mean if lat else None,
            "p50_us": lat.p50 if lat else None,
            "p90_us": lat.p90 if lat else None,
            "p99_us": lat.p99 if lat else None,
            "max_us": lat.max if lat else None,
        }
    return found
