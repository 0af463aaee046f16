"""Is a difference between two servers real? The server start is the unit: Student's t on the logs of
each start's median (scipy.stats), untested with fewer than two starts a side; the false discovery
rate over many such tests (statsmodels' Benjamini–Hochberg); and the t-tests history uses."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scipy import stats
from statsmodels.stats.multitest import multipletests

ALPHA = 0.05
# A change found significant but smaller than this share is "within noise" (criterion.rs's
# noise threshold): a claim reports a difference a reader can act on, not a statistical speck.
NOISE = 0.02
# The fewest server starts on each side a test needs: one start gives no between-start variation.
MIN_STARTS = 2

Starts = Sequence[Sequence[float]]  # per server start, its repeats' values


def grouped(pairs: Iterable[tuple[int, float | None]]) -> list[list[float]]:
    """(start index, value) pairs as one list of values per start, in start order; None and NaN
    values are left out, and so are starts left with none."""
    found: dict[int, list[float]] = {}
    for start, value in pairs:
        if value is not None and not math.isnan(value):
            found.setdefault(start, []).append(float(value))
    return [found[k] for k in sorted(found)]


def start_medians(starts: Starts) -> list[float]:
    """Each start's median (starts with no value left out)."""
    return [statistics.median(s) for s in starts if s]


def no_test(n_a: int, n_b: int) -> str:
    """Why two sides were not tested, and what a test needs."""
    return (
        f"{n_a} vs {n_b} server start{'s' if max(n_a, n_b) != 1 else ''}: untested (a test "
        f"needs at least {MIN_STARTS} starts of each server)"
    )


def method(n_a: int, n_b: int, alpha: float = ALPHA) -> str:
    return (
        f"Student's t on the logs of {n_a} vs {n_b} server starts' medians, two-sided, "
        f"alpha {alpha:g}"
    )


@dataclass(frozen=True)
class Verdict:
    n_a: int  # server starts with a value
    n_b: int
    median_a: float  # over every repeat of the side
    median_b: float
    change: float | None  # (median_b - median_a) / median_a; None when median_a is 0
    p_value: float | None  # None: untested
    method: str
    significant: bool
    # False when a side has a single start: nothing was tested, so no "ahead", no "tie" and no
    # "no change" may be said, only which is higher by value.
    testable: bool = True

    @property
    def change_pct(self) -> str:
        return "-" if self.change is None else f"{self.change * 100:+.1f}%"

    @property
    def beyond_noise(self) -> bool:
        """Significant, and at least `NOISE` in size."""
        return self.significant and self.change is not None and abs(self.change) >= NOISE


def compare_starts(a: Starts, b: Starts, alpha: float = ALPHA) -> Verdict:
    """Two servers' values, each a list per server start: Student's t-test (pooled variance,
    two-sided) on the logs of the starts' medians, so a change is judged against how much a
    server's level moves from one start to the next, not against the repeats of one start. The
    medians shown are over every repeat. Raw values when one is not positive."""
    flat_a, flat_b = [v for s in a for v in s], [v for s in b for v in s]
    if not flat_a or not flat_b:
        raise ValueError("both sides need at least one value")
    ma, mb = statistics.median(flat_a), statistics.median(flat_b)
    change = (mb - ma) / ma if ma else None
    sa, sb = start_medians(a), start_medians(b)
    if len(sa) < MIN_STARTS or len(sb) < MIN_STARTS:
        return Verdict(
            len(sa), len(sb), ma, mb, change, None, no_test(len(sa), len(sb)), False, False
        )
    if min(sa + sb) > 0:
        sa, sb = [math.log(v) for v in sa], [math.log(v) for v in sb]
    p = t_test_p(sa, sb)
    return Verdict(len(sa), len(sb), ma, mb, change, p, method(len(sa), len(sb), alpha), p < alpha)


def word(v: Verdict, p_adjusted: float | None, higher_is_better: bool) -> str:
    """One metric's verdict by the rule, never by the point estimate alone: not tested, no change
    detected, change within noise, improved or regressed."""
    if not v.testable or p_adjusted is None:
        return "not tested"
    if p_adjusted >= ALPHA or v.change is None:
        return "no change detected"
    if abs(v.change) < NOISE:
        return "change within noise"
    return "improved" if (v.change > 0) == higher_is_better else "regressed"


def adjusted(p_values: Sequence[float], alpha: float = ALPHA) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (statsmodels): a test whose adjusted p is below
    `alpha` is a discovery with the false discovery rate of the family kept at `alpha`."""
    if not p_values:
        return []
    return [float(p) for p in multipletests(list(p_values), alpha, method="fdr_bh")[1]]


def t_test_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of Student's two-sample t-test with pooled variance (scipy.stats.ttest_ind; a
    value on each side, three in all). No spread on either side: 1 when the means agree, else 0."""
    if not a or not b or len(a) + len(b) < 3:
        raise ValueError("a t-test needs a value on each side and three in all")
    if _spread(a) + _spread(b) == 0:
        return 1.0 if statistics.fmean(a) == statistics.fmean(b) else 0.0
    test = stats.ttest_ind_from_stats(  # ttest_ind's test, from the two sides' moments
        statistics.fmean(a), _sd(a), len(a), statistics.fmean(b), _sd(b), len(b), equal_var=True
    )
    return float(test.pvalue)


def prediction_p(values: Sequence[float], new: float) -> float:
    """Two-sided p that one new value comes from the population `values` came from (Student's t
    with the prediction interval's error, s·sqrt(1 + 1/n), scipy.stats.t); at least two values."""
    n = len(values)
    if n < 2:
        raise ValueError("a prediction needs at least two values")
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    if sd == 0:
        return 1.0 if new == mean else 0.0
    t = abs(new - mean) / (sd * math.sqrt(1 + 1 / n))
    return float(2 * stats.t.sf(t, n - 1))


def trend_p(values: Sequence[float]) -> tuple[float, float]:
    """The least-squares slope of values against their index, and the two-sided p that it is 0
    (scipy.stats.linregress: Student's t on n - 2 degrees of freedom); at least three values."""
    n = len(values)
    if n < 3:
        raise ValueError("a trend needs at least three values")
    if _spread(values) == 0:
        return 0.0, 1.0
    fit = stats.linregress(range(n), values)
    if math.isnan(fit.pvalue):
        return float(fit.slope), 1.0
    return float(fit.slope), float(fit.pvalue)


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _spread(values: Sequence[float]) -> float:
    mean = statistics.fmean(values)
    return sum((v - mean) ** 2 for v in values)
