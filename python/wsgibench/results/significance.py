"""Is a difference between two sets of repeats real? Exact Mann–Whitney U, with a range check for tiny n."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

ALPHA = 0.05


def _midranks(values: list[float]) -> list[float]:
    """Ranks 1..N of `values`, tied values sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U of `a`, exact two-sided p) by enumerating the rank-sum distribution (ties handled exactly).

    The null distribution is counted with a subset-sum table over doubled midranks, so it is
    exact conditional on the ties and fast for the repeat counts a benchmark has (tens).
    """
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        raise ValueError("both samples need at least one value")
    ranks2 = [int(round(2 * r)) for r in _midranks([*a, *b])]  # doubled: integers
    observed = sum(ranks2[:n1])
    u = observed / 2 - n1 * (n1 + 1) / 2
    expected = n1 * sum(ranks2) / (n1 + n2)  # doubled expected rank sum of `a`
    # counts[k][s]: subsets of size k with doubled rank sum s
    total = sum(ranks2)
    counts = [[0] * (total + 1) for _ in range(n1 + 1)]
    counts[0][0] = 1
    for r in ranks2:
        for k in range(n1, 0, -1):
            row, prev = counts[k], counts[k - 1]
            for s in range(total, r - 1, -1):
                if prev[s - r]:
                    row[s] += prev[s - r]
    dist = counts[n1]
    far = abs(observed - expected) - 1e-9
    extreme = sum(c for s, c in enumerate(dist) if c and abs(s - expected) >= far)
    return u, min(1.0, extreme / math.comb(n1 + n2, n1))


def min_p(n1: int, n2: int) -> float:
    """The smallest two-sided p an exact Mann–Whitney test can reach with these sizes."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def repeats_for_test(alpha: float = ALPHA) -> int:
    """The fewest repeats on each side with which an exact Mann–Whitney test can reach alpha."""
    n = 1
    while min_p(n, n) > alpha:
        n += 1
    return n


def no_test(n_a: int, n_b: int, alpha: float = ALPHA) -> str:
    """Why two samples were not tested, and how many repeats a test needs."""
    return (
        f"{n_a} vs {n_b} repeat{'s' if max(n_a, n_b) > 1 else ''}: no test possible "
        f"(a test needs at least 2 repeats on each side for the range rule, "
        f"{repeats_for_test(alpha)} for Mann-Whitney at {alpha:g})"
    )


@dataclass(frozen=True)
class Verdict:
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    change: float | None  # (median_b - median_a) / median_a; None when median_a is 0
    p_value: float | None
    method: str
    significant: bool
    # False when a side has a single value: nothing was tested, so no "tie" and no "no change"
    # may be said, only which is higher by value.
    testable: bool = True

    @property
    def change_pct(self) -> str:
        return "-" if self.change is None else f"{self.change * 100:+.1f}%"


def compare_samples(a: list[float], b: list[float], alpha: float = ALPHA) -> Verdict:
    """Mann–Whitney U (exact) when the sizes can reach `alpha`; otherwise (e.g. 3 vs 3, where the
    smallest two-sided p is 0.1) a difference counts only if the min–max ranges do not overlap."""
    a = [float(v) for v in a if v is not None and not math.isnan(v)]
    b = [float(v) for v in b if v is not None and not math.isnan(v)]
    if not a or not b:
        raise ValueError("both samples need at least one value")
    ma, mb = statistics.median(a), statistics.median(b)
    change = (mb - ma) / ma if ma else None
    if len(a) == 1 or len(b) == 1:
        return Verdict(len(a), len(b), ma, mb, change, None, no_test(len(a), len(b)), False, False)
    _, p = mann_whitney_u(a, b)
    if min_p(len(a), len(b)) <= alpha:
        return Verdict(len(a), len(b), ma, mb, change, p, "Mann-Whitney U, exact", p < alpha)
    disjoint = max(a) < min(b) or max(b) < min(a)
    return Verdict(
        len(a),
        len(b),
        ma,
        mb,
        change,
        p,
        f"min-max ranges: too few repeats for Mann-Whitney at {alpha:g}",
        disjoint,
    )


def t_test_p(a: list[float], b: list[float]) -> float:
    """Two-sided p of Student's two-sample t-test with pooled variance (each side at least one
    value, at least three in all): for run-level values, where a run is the unit."""
    n1, n2 = len(a), len(b)
    df = n1 + n2 - 2
    if n1 < 1 or n2 < 1 or df < 1:
        raise ValueError("a t-test needs a value on each side and three in all")
    m1, m2 = statistics.fmean(a), statistics.fmean(b)
    ss = sum((v - m1) ** 2 for v in a) + sum((v - m2) ** 2 for v in b)
    if ss == 0:
        return 1.0 if m1 == m2 else 0.0
    t = abs(m1 - m2) / math.sqrt(ss / df * (1 / n1 + 1 / n2))
    return _incomplete_beta(df / (df + t * t), df / 2, 0.5)


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
    Lentz), on the side where it converges fast."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(1 - x, b, a)
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-12:
            break
    return front * f / a


def prediction_p(values: list[float], new: float) -> float:
    """Two-sided p that one new value comes from the population `values` came from (Student's t
    with the prediction interval's error, s·sqrt(1 + 1/n)); at least two values."""
    n = len(values)
    if n < 2:
        raise ValueError("a prediction needs at least two values")
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    if sd == 0:
        return 1.0 if new == mean else 0.0
    t = abs(new - mean) / (sd * math.sqrt(1 + 1 / n))
    return _incomplete_beta((n - 1) / (n - 1 + t * t), (n - 1) / 2, 0.5)


def trend_p(values: list[float]) -> tuple[float, float]:
    """The least-squares slope of values against their index, and the two-sided p that it is 0
    (Student's t on n - 2 degrees of freedom); at least three values."""
    n = len(values)
    if n < 3:
        raise ValueError("a trend needs at least three values")
    mx, my = (n - 1) / 2, statistics.fmean(values)
    sxx = sum((x - mx) ** 2 for x in range(n))
    slope = sum((x - mx) * (y - my) for x, y in enumerate(values)) / sxx
    residual = sum((y - my - slope * (x - mx)) ** 2 for x, y in enumerate(values))
    if residual == 0:
        return slope, 1.0 if slope == 0 else 0.0
    t = abs(slope) / math.sqrt(residual / (n - 2) / sxx)
    return slope, _incomplete_beta((n - 2) / (n - 2 + t * t), (n - 2) / 2, 0.5)
