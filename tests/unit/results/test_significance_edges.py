"""significance.py's edges a mutation run (bench/mutation) found untested: each refusal of too
few values, with its reason; a side whose median is 0 (no change can be given as a share, and no
logs taken); the logs taken for values under 1 too; the smallest samples a t-test, a prediction
and a trend accept, checked against scipy's own functions; and a spread of exactly 1."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from wsgibench.results.significance import (
    Verdict,
    compare_starts,
    method,
    no_test,
    prediction_p,
    t_test_p,
    trend_p,
)


def test_too_few_values_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="^both sides need at least one value$"):
        compare_starts([[1.0], [2.0]], [])
    for a, b in (([], [1.0, 2.0, 3.0]), ([1.0, 2.0, 3.0], []), ([1.0], [2.0])):
        with pytest.raises(
            ValueError, match="^a t-test needs a value on each side and three in all$"
        ):
            t_test_p(a, b)
    with pytest.raises(ValueError, match="^a prediction needs at least two values$"):
        prediction_p([5.0], 5.0)
    with pytest.raises(ValueError, match="^a trend needs at least three values$"):
        trend_p([1.0, 2.0])


def test_the_smallest_samples_are_tested_as_scipy_tests_them():
    assert t_test_p([1.0], [2.0, 3.0]) == pytest.approx(stats.ttest_ind([1.0], [2.0, 3.0]).pvalue)
    t = abs(4.0 - 1.5) / (stats.tstd([1.0, 2.0]) * math.sqrt(1 + 1 / 2))
    assert prediction_p([1.0, 2.0], 4.0) == pytest.approx(2 * stats.t.sf(t, 1))
    # a standard deviation of exactly 1 is a spread like any other
    t = abs(2.5 - 2.0) / math.sqrt(1 + 1 / 3)
    assert prediction_p([1.0, 2.0, 3.0], 2.5) == pytest.approx(2 * stats.t.sf(t, 2))
    assert (prediction_p([3.0, 3.0], 3.0), prediction_p([3.0, 3.0], 4.0)) == (1.0, 0.0)
    fit = stats.linregress(range(4), [0.0, 1.0, 0.0, 1.0])  # the squares about the mean sum to 1
    assert trend_p([0.0, 1.0, 0.0, 1.0]) == pytest.approx((fit.slope, fit.pvalue))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_series_that_cannot_be_fit_shows_no_trend():
    slope, p = trend_p([1.0, 2.0, math.inf])
    assert math.isnan(slope) and p == 1.0


def test_a_side_at_zero_has_no_change_as_a_share_and_no_logs():
    v = compare_starts([[0.0, 0.0], [0.0]], [[1.0], [2.0]])
    assert (v.median_a, v.median_b, v.change) == (0.0, 1.5, None)
    assert v.p_value == pytest.approx(stats.ttest_ind([0.0, 0.0], [1.0, 2.0]).pvalue)
    assert v.change_pct == "-" and not v.beyond_noise


def test_values_under_one_are_tested_on_their_logs_too():
    a, b = [[0.5], [0.6]], [[0.7], [0.9]]
    v = compare_starts(a, b, alpha=0.01)
    logs = stats.ttest_ind([math.log(0.5), math.log(0.6)], [math.log(0.7), math.log(0.9)])
    assert v == Verdict(
        2,
        2,
        0.55,
        0.8,
        pytest.approx(0.8 / 0.55 - 1),
        pytest.approx(logs.pvalue),
        method(2, 2, 0.01),
        logs.pvalue < 0.01,
    )
    assert "alpha 0.01" in v.method


def test_an_untested_verdict_keeps_both_sides_figures():
    v = compare_starts([[10.0, 12.0]], [[11.0], [13.0]])
    assert v == Verdict(1, 2, 11.0, 12.0, pytest.approx(1 / 11), None, no_test(1, 2), False, False)
