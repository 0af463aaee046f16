"""The engine's histogram object (count, percentiles, the encoded HdrHistogram) read off an
HdrHistogram, and the exact sum of several such objects (HdrHistogram addition, never
percentiles averaged)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hdrh.histogram import HdrHistogram


def histogram_doc(h: HdrHistogram) -> dict[str, Any]:
    """The engine's histogram shape, read off a (merged) HdrHistogram."""
    empty = h.get_total_count() == 0
    return {
        "count": h.get_total_count(),
        "min": 0 if empty else h.get_min_value(),
        "mean": 0.0 if empty else h.get_mean_value(),
        "p50": h.get_value_at_percentile(50),
        "p90": h.get_value_at_percentile(90),
        "p99": h.get_value_at_percentile(99),
        "p999": h.get_value_at_percentile(99.9),
        "max": h.get_max_value(),
        "stdev": 0.0 if empty else h.get_stddev(),
        "hdr": h.encode().decode(),
    }


def merge_histograms(parts: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The exact sum of the hosts' histograms of one kind (None when no host has one)."""
    present = [p for p in parts if p and p.get("hdr")]
    if not present:
        return None
    merged = HdrHistogram.decode(present[0]["hdr"])
    for part in present[1:]:
        merged.add(HdrHistogram.decode(part["hdr"]))
    return histogram_doc(merged)
