"""A capacity step's repeats taken together, as one stretch of load at the step's rate: the share
of their requests over a latency (their HdrHistograms added, never percentiles averaged), their
errors over their requests, and their valid replies over the requests offered; optionally as if
the repeats the step has still to run were flawless, which says when its verdict is known early."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from hdrh.histogram import HdrHistogram

from wsgibench.results import latency


class RepeatFigures(Protocol):
    """What judging a step reads of each repeat (a Repeat, or one read back from the store)."""

    @property
    def latency_p99_us(self) -> float | None: ...

    @property
    def latency_p50_us(self) -> float | None: ...

    @property
    def error_rate(self) -> float | None: ...

    @property
    def rps_ok(self) -> float | None: ...

    @property
    def requests(self) -> int: ...


@dataclass(frozen=True)
class Pooled:
    """The repeats measured (`repeats`) of a step that runs `planned` at most; every share is of
    all the planned repeats, those not run yet counted as flawless (none over any latency, no
    error, every offered request answered): `as_planned` gives the same figures so.
    `histogram`: the measured repeats' latency added; None when one of them has no histogram,
    and then only each repeat's own percentiles are known."""

    repeats: int
    histogram: HdrHistogram | None
    measured_error_rate: float  # errors over the measured repeats' requests
    served_rps: float  # the measured repeats' mean valid replies per second
    offered_rps: float | None  # requests offered per second (None: not known)
    planned: int = 0  # 0: as many as measured

    def as_planned(self, planned: int) -> Pooled:
        return replace(self, planned=planned)

    @property
    def _scale(self) -> float:
        """The measured repeats' share of the planned ones."""
        return self.repeats / max(self.planned, self.repeats)

    @property
    def error_rate(self) -> float:
        return self.measured_error_rate * self._scale

    @property
    def served_share(self) -> float | None:
        """Valid replies over the requests offered (None: no offered rate known)."""
        if not self.offered_rps:
            return None
        return 1 - (1 - self.served_rps / self.offered_rps) * self._scale

    def share_over(self, latency_us: float) -> float | None:
        """The share of the requests slower than `latency_us` (None: no histogram)."""
        if self.histogram is None:
            return None
        count = int(self.histogram.get_total_count())
        if not count:
            return 1.0  # no request answered at all: none within any latency
        over = count - _count_at_most(self.histogram, latency_us)
        return float(over / count * self._scale)

    def percentile_us(self, percentile: float) -> float | None:
        """A percentile of the measured repeats' requests together."""
        if self.histogram is None or not self.histogram.get_total_count():
            return None
        return float(self.histogram.get_value_at_percentile(percentile))


def pool(repeats: Sequence[RepeatFigures], offered_rps: float | None) -> Pooled:
    """The measured repeats together (at least one)."""
    n = len(repeats)
    requests = [max(r.requests or 0, 0) for r in repeats]
    total = sum(requests)
    if total:
        errors = sum((r.error_rate or 0.0) * q for r, q in zip(repeats, requests, strict=True))
        error_rate = errors / total
    else:
        error_rate = sum(r.error_rate or 0.0 for r in repeats) / n
    served_rps = sum(r.rps_ok or 0.0 for r in repeats) / n
    return Pooled(n, _added(repeats), error_rate, served_rps, offered_rps)


def _added(repeats: Sequence[RepeatFigures]) -> HdrHistogram | None:
    """The repeats' latency histograms added (every request kind), or None if one has none."""
    added: HdrHistogram | None = None
    for r in repeats:
        engine = getattr(r, "engine", None)  # a measured or stored repeat has its engine result
        own = latency.added(engine) if engine is not None else None
        if own is None:
            return None
        if added is None:
            added = own
        else:
            added.add(own)
    return added


def _count_at_most(h: HdrHistogram, value_us: float) -> int:
    """How many recorded values are at most `value_us`: those of the histogram's buckets below
    it, and of its own bucket if no value in it can be above it (as a percentile read off the
    histogram is its bucket's highest value)."""
    value = int(value_us)
    index = h.get_counts_array_index(value)
    if index >= h.counts_len:
        return int(h.get_total_count())
    within = sum(h.counts[:index])
    if h.get_highest_equivalent_value(value) <= value_us:
        within += h.counts[index]
    return int(within)
