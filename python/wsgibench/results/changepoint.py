"""Where a series of runs changed level, with the false discovery rate kept over every series read
together. Each series is first screened: its best split (the largest Student's t between two
levels of the runs' medians: a run is the unit, repeats within a run vary less than runs do), its
p that of the largest t among all splits of a series with no change (drawn by Monte Carlo once per
length), and a straight-line trend through the medians, the two sharing the series' level; the
screens' p-values are adjusted by Benjamini–Hochberg (statsmodels) over all the series, and only
the series found changed are searched by binary segmentation, at the level the selection leaves
(q·R/m, Benjamini and Bogomolov's rule for families selected by BH). A split is kept when its p
is within that level and the step is at least `min_step` of the level before it (asv's rule:
significant and large enough); a change a straight line explains as well as a step is a drift.
And the regression gate: the newest run's median against the prediction interval of the stable
level before it, its p-values adjusted over the series the same way. Pure: series in, changes
out; the tests are scipy.stats' (results/significance.py) and numpy's.

A series is one cell key's runs in order, each run its repeats' values (req/s, or p99)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import numpy.typing as npt

from wsgibench.results.significance import adjusted, prediction_p, trend_p

# The false discovery rate kept over the series read together (and the gate's, over theirs).
ALPHA = 0.05
MIN_STEP = 0.05  # a change smaller than this share of the level before is not reported
MIN_SERIES = 4  # the fewest measured runs a series is searched with

Series = Sequence[Sequence[float]]


@dataclass(frozen=True)
class Change:
    index: int  # the first run of the new level
    before: float  # the median of the repeats of the runs before it (back to the previous change)
    after: float  # the median of those from it (up to the next change)
    p_value: float  # the largest Student's t among the segment's splits (`max_t_p`)
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


def screen(series: Series, min_runs: int = 2) -> float | None:
    """The p that the series changed level anywhere: the best split's (`max_t_p`) and the
    trend's, the smaller twice (the two families share the level); None with fewer than
    MIN_SERIES runs."""
    if len(series) < MIN_SERIES:
        return None
    best = _best_split(series, 0, len(series), min_runs)
    trend = trend_p([statistics.median(run) for run in series])[1]
    return min(1.0, 2 * min(best[1] if best else 1.0, trend))


def study_changes(
    every: Sequence[Series], alpha: float = ALPHA, min_step: float = MIN_STEP
) -> list[list[Change]]:
    """Each series' changes, the false discovery rate kept at `alpha` over all of them: each
    series screened (`screen`), the screens adjusted by Benjamini–Hochberg, and each series
    found changed searched (`changes`) at alpha × found / screened."""
    screened = [(i, p) for i, s in enumerate(every) if (p := screen(s)) is not None]
    found = [
        i
        for (i, _), q in zip(screened, adjusted([p for _, p in screened], alpha), strict=True)
        if q <= alpha
    ]
    level = alpha * len(found) / len(screened) if screened else 0.0
    out: list[list[Change]] = [[] for _ in every]
    for i in found:
        out[i] = changes(every[i], level, min_step)
    return out


def changes(
    series: Series, alpha: float = ALPHA, min_step: float = MIN_STEP, min_runs: int = 2
) -> list[Change]:
    """The changes of level in one series, in order: the best split of a segment is kept when
    its p (`max_t_p`) is at most `alpha` (halved: steps and a drift share it) and the
    step is at least `min_step`; then each side is searched the same way. Each side of a split
    has at least `min_runs` runs. For many series at once, `study_changes`."""
    found: list[Change] = []
    _segment(series, 0, len(series), alpha / 2, min_step, min_runs, found)
    if not found and len(series) >= MIN_SERIES:
        found += _trend(series, alpha / 2, min_step)
    return sorted(found, key=lambda c: c.index)


def _best_split(series: Series, lo: int, hi: int, min_runs: int) -> tuple[int, float] | None:
    """Where the segment [lo, hi) is best split in two levels of the runs' medians (the largest
    Student's t between the two sides), and the p of that largest t among every split
    (`max_t_p`)."""
    if hi - lo < 2 * min_runs:
        return None
    medians = np.array([statistics.median(run) for run in series[lo:hi]], dtype=float)
    cut, t = _split_t(medians[None, :], min_runs)
    return lo + int(cut[0]), max_t_p(float(t[0]), hi - lo, min_runs)


def _split_t(
    x: npt.NDArray[np.float64], min_runs: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Per row of `x`, the split (each side at least `min_runs`) with the largest |t| of
    Student's two-sample test between its sides (pooled variance), and that |t|."""
    n = x.shape[1]
    x = x - x.mean(axis=1, keepdims=True)  # centred: the sums of squares below lose nothing
    k = np.arange(min_runs, n - min_runs + 1)
    s1 = np.cumsum(x, axis=1)[:, k - 1]
    s, q = x.sum(axis=1, keepdims=True), (x * x).sum(axis=1, keepdims=True)
    m1, m2 = s1 / k, (s - s1) / (n - k)
    within = np.clip(q - s1 * s1 / k - (s - s1) ** 2 / (n - k), 0.0, None) / (n - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(m1 - m2) / np.sqrt(within * (1 / k + 1 / (n - k)))
    t = np.where(np.abs(m1 - m2) <= 1e-12 * (np.sqrt(q / n) + 1e-300), 0.0, t)  # no difference
    best = np.argmax(t, axis=1)
    return k[best], t[np.arange(len(t)), best]


# Draws of the null distribution of the largest t among a series' splits (`max_t_p`).
NULL_DRAWS = 40_000


@cache
def _max_t_null(n: int, min_runs: int) -> npt.NDArray[np.float64]:
    """The largest |t| among the splits of `n` runs whose medians are independent and normal with
    one level (no change), `NULL_DRAWS` times, sorted: its distribution depends on `n` alone,
    so it is drawn once per length, from a fixed seed (the same series always gets the same p)."""
    rng = np.random.default_rng(1_000 * n + min_runs)
    chunks = [
        _split_t(rng.standard_normal((10_000, n)), min_runs)[1] for _ in range(NULL_DRAWS // 10_000)
    ]
    return np.sort(np.concatenate(chunks))


def max_t_p(t: float, n: int, min_runs: int = 2) -> float:
    """The p of `t`, the largest |t| among the splits of `n` runs: the share of draws of the
    no-change distribution (`_max_t_null`) at least as large (Monte Carlo, one added to each side
    of the ratio). A sharper correction for the splits tried than Bonferroni's, which counts
    the splits as if independent, though neighbouring splits share all but one run."""
    null = _max_t_null(n, min_runs)
    above = len(null) - int(np.searchsorted(null, t, side="left"))
    return (above + 1) / (len(null) + 1)


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
    split = _best_split(series, lo, hi, min_runs)
    if split is None:
        return
    k, p = split
    before = [statistics.median(run) for run in series[lo:k]]
    after = [statistics.median(run) for run in series[k:hi]]
    best = Change(k, statistics.median(before), statistics.median(after), p)
    if best.p_value > alpha or abs(best.size) < min_step:
        return
    if _drift(series, lo, hi, best.index):
        out.append(Change(best.index, best.before, best.after, best.p_value, "drift"))
        return
    out.append(best)
    _segment(series, lo, best.index, alpha, min_step, min_runs, out)
    _segment(series, best.index, hi, alpha, min_step, min_runs, out)


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


def study_gates(
    every: Sequence[Series], found: Sequence[Sequence[Change]], alpha: float = ALPHA
) -> list[Gate]:
    """Each series' gate (`gate`), its p adjusted by Benjamini–Hochberg over every series that
    could be tested, so that the gate's false discovery rate is `alpha` however many cells."""
    gates = [gate(series, changes) for series, changes in zip(every, found, strict=True)]
    tested = [(i, g.p_value) for i, g in enumerate(gates) if g.p_value is not None]
    for (i, _), q in zip(
        tested, adjusted([p for _, p in tested if p is not None], alpha), strict=True
    ):
        gates[i] = replace(gates[i], p_value=q)
    return gates
