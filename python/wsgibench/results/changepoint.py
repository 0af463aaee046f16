"""Where a series of runs changed level: binary segmentation, each segment split where two levels
leave the least squared error around the runs' medians, the split kept when Student's t-test on
the runs' medians (a run is the unit: repeats within a run vary less than runs do), times the
number of splits tried (Bonferroni), is at most `alpha`, and the step is at least `min_step` of
the level before it (asv's rule: significant and large enough). A change that a straight line
explains as well as a step is a drift, not a step. And the regression gate: is the newest run
below the stable level before it (its median against the prediction interval of the level's run
medians). Pure: series in, changes out.

A series is one cell key's runs in order, each run its repeats' values (req/s, or p99)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from wsgibench.results.significance import prediction_p, t_test_p, trend_p

ALPHA = 0.01  # after the correction for the splits tried (asv compare uses 0.002 for one test)
MIN_STEP = 0.05  # a change smaller than this share of the level before is not reported

Series = Sequence[Sequence[float]]


@dataclass(frozen=True)
class Change:
    index: int  # the first run of the new level
    before: float  # the median of the repeats of the runs before it (back to the previous change)
    after: float  # the median of those from it (up to the next change)
    p_value: float  # Mann–Whitney, two-sided, times the number of splits tried
    kind: str = "step"  # or "drift": a straight line explains the segment as well as a step

    @property
    def size(self) -> float:
        """The relative change of level (−0.10: 10 % lower)."""
        return self.after / self.before - 1 if self.before else 0.0

    def describe(self, unit: str = "") -> str:
        where = f"step at run {self.index + 1}" if self.kind == "step" else "drift over the runs"
        return (
            f"{where}: {self.before:,.0f} → {self.after:,.0f}{unit} "
            f"({self.size:+.1%}, p = {self.p_value:.2g})"
        )


def changes(
    series: Series, alpha: float = ALPHA, min_step: float = MIN_STEP, min_runs: int = 2
) -> list[Change]:
    """The changes of level in the series, in order: the best split of a segment (the lowest p)
    is kept when its p times the splits tried is at most `alpha` and the step is at least
    `min_step`; then each side is searched the same way. Each side of a split has at least
    `min_runs` runs."""
    found: list[Change] = []
    # alpha shared by the two families of tests (steps, a drift): the series' level is alpha.
    _segment(series, 0, len(series), alpha / 2, min_step, min_runs, found)
    if not found and len(series) >= 4:
        found += _trend(series, alpha / 2, min_step)
    return sorted(found, key=lambda c: c.index)


def _trend(series: Series, alpha: float, min_step: float) -> list[Change]:
    """No step, but a slope through the runs' medians that is significant and, over the
    series, at least `min_step`: a drift, dated at its first run."""
    medians = [statistics.median(run) for run in series]
    slope, p = trend_p(medians)
    first = statistics.fmean(medians) - slope * (len(medians) - 1) / 2
    last = first + slope * (len(medians) - 1)
    if p > alpha or not first or abs(last / first - 1) < min_step:
        return []
    return [Change(0, first, last, p, "drift")]


def _segment(
    series: Series,
    lo: int,
    hi: int,
    alpha: float,
    min_step: float,
    min_runs: int,
    out: list[Change],
) -> None:
    splits = range(lo + min_runs, hi - min_runs + 1)
    if not splits:
        return
    # Where: the split that leaves the least squared error around the two levels; whether:
    # the t-test on the runs' medians there, times the splits tried.
    medians = [statistics.median(run) for run in series[lo:hi]]
    cut = min((k - lo for k in splits), key=lambda c: _sse(medians[:c]) + _sse(medians[c:]))
    before, after = medians[:cut], medians[cut:]
    p = min(1.0, t_test_p(before, after) * len(splits))
    best = Change(lo + cut, statistics.median(before), statistics.median(after), p)
    if best.p_value > alpha or abs(best.size) < min_step:
        return
    if _drift(series, lo, hi, best.index):
        out.append(Change(best.index, best.before, best.after, best.p_value, "drift"))
        return
    out.append(best)
    _segment(series, lo, best.index, alpha, min_step, min_runs, out)
    _segment(series, best.index, hi, alpha, min_step, min_runs, out)


def _sse(values: Sequence[float]) -> float:
    if not values:
        return 0.0
    mean = statistics.fmean(values)
    return sum((v - mean) ** 2 for v in values)


def _drift(series: Series, lo: int, hi: int, k: int) -> bool:
    """A straight line through the runs' medians fits the segment at least as well as the step
    at k: a slow drift, not a step."""
    ys = [statistics.median(run) for run in series[lo:hi]]
    if len(ys) < 4:
        return False
    xs = list(range(len(ys)))
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    line = sum((y - (my + slope * (x - mx))) ** 2 for x, y in zip(xs, ys, strict=True))
    cut = k - lo
    left, right = ys[:cut], ys[cut:]
    step = sum((y - statistics.fmean(left)) ** 2 for y in left) + sum(
        (y - statistics.fmean(right)) ** 2 for y in right
    )
    return line <= step


@dataclass(frozen=True)
class Gate:
    """The newest run against the stable level before it."""

    newest: float  # its median
    level: float  # the stable level's median
    p_value: float | None  # None: nothing to test against
    baseline_runs: int

    @property
    def size(self) -> float:
        return self.newest / self.level - 1 if self.level else 0.0

    def regressed(self, threshold: float, alpha: float = 0.01, lower_is_worse: bool = True) -> bool:
        worse = -self.size if lower_is_worse else self.size
        return self.p_value is not None and self.p_value <= alpha and worse > threshold


def gate(series: Series, found: Sequence[Change] = ()) -> Gate:
    """The newest run against the previous stable level: the runs since the last change before
    it, or, when a change has just begun (the newest run is at most one run past it), the runs
    of the level before that change. The test: the newest run's median against the prediction
    interval of those runs' medians (two-sided p; none with fewer than two runs)."""
    newest = statistics.median(series[-1]) if series and series[-1] else 0.0
    last = len(series) - 1
    starts = [c.index for c in found if c.index <= last]
    start = max(starts, default=0)
    if starts and last - start <= 1:  # a new level that has only just begun: the one before it
        earlier = [s for s in starts if s < start]
        base = series[max(earlier, default=0) : start]
    else:
        base = series[start:last]
    medians = [statistics.median(run) for run in base if run]
    if len(medians) < 2:
        return Gate(newest, statistics.median(medians) if medians else 0.0, None, len(medians))
    return Gate(newest, statistics.median(medians), prediction_p(medians, newest), len(medians))
