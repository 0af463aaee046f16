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
    # The share of the offered requests that a server keeping up could have answered within the
    # measured window (`reach`); None when its fastest requests took the whole window or more,
    # and then the window cannot tell a server falling behind from one that is slow.
    reach: float | None = 1.0

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
    def answerable_rps(self) -> float | None:
        """The requests offered per second that a server keeping up could have answered within
        the window (None: no offered rate known, or no such share: `reach`)."""
        if not self.offered_rps or not self.reach:
            return None
        return self.offered_rps * self.reach

    @property
    def served_share(self) -> float | None:
        """Valid replies over `answerable_rps` (None: not known)."""
        answerable = self.answerable_rps
        if not answerable:
            return None
        return 1 - (1 - self.served_rps / answerable) * self._scale

    def share_over(self, latency_us: float) -> float | None:
        """The share of the requests slower than `latency_us` (None: no histogram)."""
        if self.histogram is None:
            return None
        count = int(self.histogram.get_total_count())
        if not count:
            return 1.0  # no request answered at all: none within any latency
        over = count - count_at_most(self.histogram, latency_us)
        return float(over / count * self._scale)

    def percentile_us(self, percentile: float) -> float | None:
        """A percentile of the measured repeats' requests together."""
        if self.histogram is None or not self.histogram.get_total_count():
            return None
        return float(self.histogram.get_value_at_percentile(percentile))


def pool(repeats: Sequence[RepeatFigures], offered_rps: float | None, calls: int = 1) -> Pooled:
    """The measured repeats together (at least one), each connection carrying `calls` requests."""
    n = len(repeats)
    requests = [max(r.requests or 0, 0) for r in repeats]
    total = sum(requests)
    if total:
        errors = sum((r.error_rate or 0.0) * q for r, q in zip(repeats, requests, strict=True))
        error_rate = errors / total
    else:
        error_rate = sum(r.error_rate or 0.0 for r in repeats) / n
    served_rps = sum(r.rps_ok or 0.0 for r in repeats) / n
    histogram = _added(repeats)
    reach = _reach(histogram, _window_s(repeats), calls)
    return Pooled(n, histogram, error_rate, served_rps, offered_rps, reach=reach)


# The latency percentile taken as what every request of a step takes at least: the fastest 1 %
# (robust to a lone fast reply), answered before any queue could form.
FASTEST_PCT = 1.0


def _reach(histogram: HdrHistogram | None, window_s: float | None, calls: int) -> float | None:
    """The share of the requests offered in a window of `window_s` that a server keeping up could
    answer within it, when no request is answered faster than the step's fastest (`FASTEST_PCT`):
    one due in the window's last `fastest` seconds is answered after it (the engine's drain),
    and a connection's k-th request no sooner than k × `fastest` after it arrived. Arrivals
    spread evenly over the window, a connection arriving at t answers min(calls, ⌊(W − t) /
    fastest⌋) of its `calls` within it: summed, K·W − fastest·K(K+1)/2 of calls·W, K = min(calls,
    ⌊W / fastest⌋). A server falling behind is then short of this, never of the bias the drain
    makes (a 50 ms reply in a 1 s window: 5 % of the requests offered, the keep-up margin). The
    fastest, not the typical, so that a queue growing in the window is never taken for replies
    in flight. 1.0 when not known (no histogram or window); None when none could be answered
    within the window."""
    if histogram is None or not window_s or not histogram.get_total_count():
        return 1.0
    fastest_s = histogram.get_value_at_percentile(FASTEST_PCT) / 1e6
    calls = max(calls, 1)
    k = min(calls, int(window_s // fastest_s)) if fastest_s > 0 else calls
    if k < 1:
        return None
    return float((k * window_s - fastest_s * k * (k + 1) / 2) / (calls * window_s))


def _window_s(repeats: Sequence[RepeatFigures]) -> float | None:
    """The repeats' shortest measured window (None: one of them has none recorded)."""
    windows: list[float] = []
    for r in repeats:
        engine = getattr(r, "engine", None)  # a measured or stored repeat has its engine result
        window_s = engine.totals.window_s if engine is not None else None
        if not window_s:
            return None
        windows.append(float(window_s))
    return min(windows, default=None)


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


def count_at_most(h: HdrHistogram, value_us: float) -> int:
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
