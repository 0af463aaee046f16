"""The significance test behind `compare` and report ties: exact Mann-Whitney U against brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from wsgibench.results.significance import compare_samples, mann_whitney_u, min_p


def _brute_force_p(a: list[float], b: list[float]) -> float:
    """Two-sided permutation p of the rank-sum statistic, by enumerating every relabelling."""
    pooled = [*a, *b]
    ranks = {}
    for v in set(pooled):  # midranks, computed independently of the implementation
        below = sum(1 for x in pooled if x < v)
        equal = sum(1 for x in pooled if x == v)
        ranks[v] = below + (equal + 1) / 2
    r = [ranks[v] for v in pooled]
    expected = len(a) * (len(pooled) + 1) / 2
    observed = abs(sum(r[: len(a)]) - expected)
    hits = total = 0
    for combo in itertools.combinations(range(len(pooled)), len(a)):
        total += 1
        hits += abs(sum(r[i] for i in combo) - expected) >= observed - 1e-9
    return hits / total


def test_known_exact_values():
    assert mann_whitney_u([1, 2, 3], [4, 5, 6]) == (0.0, pytest.approx(0.1))
    assert mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])[1] == pytest.approx(2 / 252)
    assert mann_whitney_u([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])[0] == 25.0
    assert mann_whitney_u([1, 2, 3], [1, 2, 3])[1] == 1.0
    assert mann_whitney_u([5, 5, 5], [5, 5, 5])[1] == 1.0


@pytest.mark.parametrize("seed", range(12))
def test_matches_brute_force_with_and_without_ties(seed):
    rng = random.Random(seed)
    n1, n2 = rng.randint(1, 6), rng.randint(1, 6)
    pool = [rng.randint(0, 4) for _ in range(3)] if seed % 2 else None  # even seeds: no ties
    draw = (lambda: rng.choice(pool)) if pool else (lambda: rng.random())
    a = [draw() + (0.5 if seed % 3 == 0 else 0) for _ in range(n1)]
    b = [draw() for _ in range(n2)]
    assert mann_whitney_u(a, b)[1] == pytest.approx(_brute_force_p(a, b))


def test_min_p():
    assert min_p(3, 3) == pytest.approx(0.1)
    assert min_p(5, 5) == pytest.approx(2 / math.comb(10, 5))


def test_identical_repeats_are_no_change():
    v = compare_samples([1000, 1010, 990, 1005, 995], [1000, 1010, 990, 1005, 995])
    assert not v.significant and v.p_value == 1.0 and v.change == 0


def test_halving_is_significant_with_five_repeats():
    v = compare_samples([1000, 1010, 990, 1005, 995], [500, 505, 495, 502, 498])
    assert v.significant and v.p_value < 0.01 and v.method.startswith("Mann-Whitney")
    assert v.change == pytest.approx(-0.5, abs=0.01) and v.change_pct == "-50.0%"


def test_overlapping_noise_is_not_significant():
    v = compare_samples([1000, 1100, 900, 1050, 950], [1020, 1080, 920, 990, 1010])
    assert not v.significant


def test_three_repeats_fall_back_to_ranges():
    disjoint = compare_samples([100, 101, 102], [50, 51, 52])
    assert disjoint.significant and "ranges" in disjoint.method
    overlapping = compare_samples([100, 101, 102], [101.5, 103, 104])
    assert not overlapping.significant


def test_single_values_never_significant_and_empty_rejected():
    assert not compare_samples([1], [1000]).significant
    with pytest.raises(ValueError):
        compare_samples([], [1])
