"""The rule behind every claim between servers, on synthetic data with known truth: the server start
is the unit (Student's t on the logs of the starts' medians), one start is untested, identical
servers are called apart at about the nominal rate, a 10 % difference is found, and the
Benjamini–Hochberg adjustment and the t-tests agree with tables and a hand computation."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from wsgibench.results.significance import (
    ALPHA,
    MIN_STARTS,
    NOISE,
    Verdict,
    adjusted,
    compare_starts,
    grouped,
    no_test,
    prediction_p,
    t_test_p,
    trend_p,
    word,
)


def _server(rng: random.Random, level: float, starts: int, repeats: int, between: float):
    """A server measured over `starts` starts: each start's level drawn around `level` (relative
    sd `between`), its repeats 0.5 % around that."""
    out = []
    for _ in range(starts):
        at = level * (1 + rng.gauss(0, between))
        out.append([at * (1 + rng.gauss(0, 0.005)) for _ in range(repeats)])
    return out


def test_one_start_a_side_is_untested_never_ahead():
    v = compare_starts([[1000.0, 1001.0, 999.0]], [[500.0, 501.0], [499.0]])
    assert not v.testable and not v.significant and v.p_value is None
    assert "1 vs 2 server starts: untested" in v.method
    assert v.change == pytest.approx(-0.5, abs=0.01)  # the change is still given, by value


def test_identical_starts_are_no_change_and_distinct_ones_are():
    same = [[1000.0], [1010.0], [990.0]]
    v = compare_starts(same, same)
    assert v.testable and not v.significant and v.p_value == pytest.approx(1.0)
    apart = compare_starts(same, [[900.0], [905.0], [895.0]])
    assert apart.significant and apart.beyond_noise and apart.change == pytest.approx(-0.1, 0.01)
    assert "Student's t on the logs of 3 vs 3 server starts' medians" in apart.method


def test_the_unit_is_the_start_not_the_repeat():
    """Many tight repeats in each of two starts whose levels differ: the repeats alone would call
    the servers apart, the starts' medians (2 a side, the same spread) do not."""
    a = [[1000.0 + i * 0.1 for i in range(10)], [1040.0 + i * 0.1 for i in range(10)]]
    b = [[1010.0 + i * 0.1 for i in range(10)], [1050.0 + i * 0.1 for i in range(10)]]
    assert not compare_starts(a, b).significant


def test_no_spread_at_all_is_a_difference_when_the_levels_differ():
    assert compare_starts([[100.0], [100.0]], [[110.0], [110.0]]).p_value == 0.0
    assert compare_starts([[100.0], [100.0]], [[100.0], [100.0]]).p_value == 1.0


def test_grouped_keeps_start_order_and_leaves_out_missing_values():
    assert grouped([(1, 5.0), (0, 1.0), (1, None), (0, 2.0), (2, math.nan)]) == [[1.0, 2.0], [5.0]]


def test_identical_servers_are_called_apart_at_about_the_nominal_rate():
    """A/A on simulated starts (3 a side, 3 % between-start sd): the rate is the test's alpha."""
    rng = random.Random(7)
    n = 4000
    apart = sum(
        compare_starts(_server(rng, 1e4, 3, 2, 0.03), _server(rng, 1e4, 3, 2, 0.03)).significant
        for _ in range(n)
    )
    assert abs(apart / n - ALPHA) < 0.012, apart / n


def test_a_ten_percent_difference_is_found_at_the_default_starts():
    """3 starts a side (the default), 2 % between-start sd: a 10 % slower server is called
    apart in at least 90 % of pairs."""
    rng = random.Random(11)
    n = 2000
    found = sum(
        compare_starts(_server(rng, 1e4, 3, 1, 0.02), _server(rng, 0.9e4, 3, 1, 0.02)).beyond_noise
        for _ in range(n)
    )
    assert found / n >= 0.9, found / n


def test_a_significant_change_below_the_noise_threshold_is_not_beyond_it():
    a = [[1000.0], [1000.5], [999.5]]
    b = [[1010.0], [1010.5], [1009.5]]  # +1 %, tight: significant, under NOISE
    v = compare_starts(a, b)
    assert v.significant and abs(v.change or 0) < NOISE and not v.beyond_noise


def test_benjamini_hochberg_by_hand():
    p = [0.01, 0.04, 0.03, 0.5]
    # sorted 0.01, 0.03, 0.04, 0.5 -> p * m / rank: 0.04, 0.06, 0.0533, 0.5; then the running
    # minimum from the largest rank down.
    assert adjusted(p) == pytest.approx([0.04, 0.0533333, 0.0533333, 0.5])
    assert adjusted([]) == []


def test_the_t_tests_match_the_tables():
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.5]
    assert t_test_p(a, b) == pytest.approx(0.2978, abs=1e-3)  # t = -1.14 on 6 df
    assert t_test_p(a, b) == pytest.approx(stats.ttest_ind(a, b).pvalue)
    assert t_test_p([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(1.0)
    values = [10.0, 11.0, 9.0, 10.5, 9.5]
    sd = 0.7905694150420949
    # t = 3 / sqrt(1 + 1/5) = 2.739 on 4 df
    assert prediction_p(values, 10 - 3 * sd) == pytest.approx(0.0520, abs=1e-3)
    slope, p = trend_p([1.0, 2.0, 3.1, 3.9, 5.0])
    assert slope == pytest.approx(0.99) and p == pytest.approx(3.614e-5, rel=1e-3)
    assert trend_p([3.0, 3.0, 3.0]) == (0.0, 1.0)
    with pytest.raises(ValueError):
        t_test_p([1.0], [2.0])


def _verdict(change: float | None, testable: bool = True) -> Verdict:
    return Verdict(3, 3, 100.0, 100.0, change, 0.01 if testable else None, "t", True, testable)


def test_the_words_at_their_edges():
    # a p exactly at alpha is no detection; a change exactly at the noise threshold is beyond it
    assert word(_verdict(0.10), ALPHA, True) == "no change detected"
    assert word(_verdict(0.10), ALPHA / 2, True) == "improved"
    assert word(_verdict(-0.10), ALPHA / 2, True) == "regressed"
    assert word(_verdict(-0.10), ALPHA / 2, False) == "improved"  # lower is better (latency)
    assert word(_verdict(NOISE), ALPHA / 2, True) == "improved"
    assert word(_verdict(NOISE * 0.99), ALPHA / 2, True) == "change within noise"
    assert word(_verdict(None), ALPHA / 2, True) == "no change detected"
    # untested: one start a side, or no adjusted p, whatever the other says
    assert word(_verdict(0.10, testable=False), ALPHA / 2, True) == "not tested"
    assert word(_verdict(0.10), None, True) == "not tested"


def test_why_a_pair_is_not_tested_is_said_with_its_starts():
    assert no_test(1, 1) == (
        f"1 vs 1 server start: untested (a test needs at least {MIN_STARTS} starts of each server)"
    )
    assert no_test(1, 3).startswith("1 vs 3 server starts: untested")
