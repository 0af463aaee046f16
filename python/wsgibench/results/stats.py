"""Summaries over repeats: median, trimmed mean, spread, and when the spread is too wide to trust."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CV_LIMIT = 0.05  # repeats whose req/s spread more than this (CV above 5 %) are flagged noisy


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    trimmed_mean: float
    mean: float
    min: float
    max: float
    stdev: float
    cv: float  # stdev / mean; 0 when the mean is 0
    trim: int

    @property
    def noisy(self) -> bool:
        return self.n > 1 and self.cv > CV_LIMIT


def trimmed(values: list[float], trim: int) -> list[float]:
    """Drop `trim` values at each end (seed 004 dropped the highest and the lowest of 4)."""
    ordered = sorted(values)
    if trim and len(ordered) > 2 * trim:
        return ordered[trim : len(ordered) - trim]
    return ordered


def summarise(values: list[float], trim: int = 0) -> Summary | None:
    clean = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not clean:
        return None
    mean = statistics.fmean(clean)
    stdev = statistics.stdev(clean) if len(clean) > 1 else 0.0
    return Summary(
        n=len(clean),
        median=statistics.median(clean),
        trimmed_mean=statistics.fmean(trimmed(clean, trim)),
        mean=mean,
        min=min(clean),
        max=max(clean),
        stdev=stdev,
        cv=stdev / mean if mean else 0.0,
        trim=trim,
    )
