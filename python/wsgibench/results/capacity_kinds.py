"""A capacity step judged per request kind (a replay's `slo_per_kind`): each kind's requests over
the step's repeats together (their HdrHistograms added), their share over the budget's latency,
so that a rare slow kind cannot hide in the p99 of all requests."""

from __future__ import annotations

from collections.abc import Sequence

from hdrh.histogram import HdrHistogram

from wsgibench.results.capacity_pool import RepeatFigures, count_at_most


def kind_histograms(repeats: Sequence[RepeatFigures]) -> dict[str, HdrHistogram]:
    """Each kind's latency over the repeats, added (kinds with no reply, or no histogram, are
    not there)."""
    added: dict[str, HdrHistogram] = {}
    for r in repeats:
        engine = getattr(r, "engine", None)  # a measured or stored repeat has its engine result
        for kind in engine.kinds if engine is not None else ():
            if kind.latency is None or not kind.latency.count or not kind.latency.hdr:
                continue
            decoded = HdrHistogram.decode(kind.latency.hdr)
            if kind.name in added:
                added[kind.name].add(decoded)
            else:
                added[kind.name] = decoded
    return added


def kind_miss(
    repeats: Sequence[RepeatFigures], pct: float, limit_ms: float | None, scale: float = 1.0
) -> str:
    """Why a kind's requests miss the percentile `pct` within `limit_ms` (their share over it
    above 1 − pct/100, times `scale`: the share of the planned repeats measured), or ""."""
    if limit_ms is None:
        return ""
    for name, h in sorted(kind_histograms(repeats).items()):
        count = int(h.get_total_count())
        share = (count - count_at_most(h, limit_ms * 1000)) / count * scale
        if share > 1 - pct / 100:
            value = h.get_value_at_percentile(pct) / 1000
            return (
                f"{name}: p{pct:g} {value:.3g} ms > {limit_ms:g} ms ({share:.1%} of its "
                f"{count:,} requests over {limit_ms:g} ms)"
            )
    return ""
