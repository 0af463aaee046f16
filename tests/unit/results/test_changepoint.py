"""The change-point method on made-up series of runs (3 repeats each): a step of known size and
position is found there and nowhere else; pure noise gives no step, over many series less often
than the stated level; a slow drift is called a drift, not a step; and the regression gate."""

from __future__ import annotations

import random
import statistics

import pytest

from wsgibench.results.changepoint import (
    ALPHA,
    changes,
    gate,
    max_t_p,
    screen,
    study_changes,
    study_gates,
)
from wsgibench.results.significance import prediction_p, t_test_p

LEVEL = 10_000.0


def _runs(levels: list[float], rng: random.Random, noise: float = 0.02, run_noise: float = 0.01):
    """Each run's 3 repeats around its level: a per-run offset (a machine differs from run to
    run) and per-repeat noise, both normal with these relative sizes."""
    out = []
    for level in levels:
        offset = level * rng.gauss(0, run_noise)
        out.append([level + offset + level * rng.gauss(0, noise) for _ in range(3)])
    return out


@pytest.mark.parametrize("at", [2, 4, 6])
@pytest.mark.parametrize("seed", range(10))
def test_a_ten_percent_step_is_found_at_its_run_and_nowhere_else(at: int, seed: int):
    # runs as steady as a sleep-bound app's: 1 % per repeat, 0.5 % from run to run
    rng = random.Random(seed)
    series = _runs([LEVEL] * at + [LEVEL * 0.9] * (8 - at), rng, noise=0.01, run_noise=0.005)
    (found,) = changes(series)
    assert found.index == at and found.kind == "step"
    assert found.size == pytest.approx(-0.10, abs=0.03)
    assert found.p_value <= ALPHA


def test_the_step_is_found_mostly_and_misplaced_rarely_in_noisier_runs():
    # 2 % per repeat and 1 % per run: the power falls, the wrong answers stay rare
    rng = random.Random(1)
    right = wrong = 0
    for at in (2, 4, 6):
        for _ in range(50):
            found = changes(_runs([LEVEL] * at + [LEVEL * 0.9] * (8 - at), rng))
            right += [(c.index, c.kind) for c in found] == [(at, "step")]
            wrong += bool(found) and [(c.index, c.kind) for c in found] != [(at, "step")]
    assert right >= 0.75 * 150 and wrong <= 0.05 * 150, (right, wrong)


def test_pure_noise_gives_no_step_and_rarely_over_many_series():
    rng = random.Random(7)
    flagged = sum(bool(changes(_runs([LEVEL] * 8, rng))) for _ in range(1000))
    assert flagged / 1000 <= ALPHA, flagged
    # noisier runs (5 % per repeat, 2 % per run): still under the level
    flagged = sum(bool(changes(_runs([LEVEL] * 8, rng, 0.05, 0.02))) for _ in range(1000))
    assert flagged / 1000 <= ALPHA, flagged


def test_a_slow_drift_is_said_as_a_drift_not_a_step():
    rng = random.Random(3)
    drifts = 0
    for _ in range(20):
        series = _runs([LEVEL * (1 - 0.02 * i) for i in range(8)], rng, noise=0.005, run_noise=0)
        found = changes(series)
        assert all(c.kind == "drift" for c in found), found
        drifts += bool(found)
    assert drifts >= 15  # 14 % over 8 runs is seen, as what it is


def test_a_small_step_is_not_reported_even_when_significant():
    rng = random.Random(5)
    series = _runs([LEVEL] * 4 + [LEVEL * 0.97] * 4, rng, noise=0.002, run_noise=0)
    assert changes(series) == []
    (found,) = changes(series, min_step=0.02)
    assert found.index == 4


def test_the_gate_fails_a_slower_newest_run_and_passes_a_steady_one():
    rng = random.Random(11)
    steady = _runs([LEVEL] * 8, rng)
    assert not gate(steady, changes(steady)).regressed(0.05)
    slower = _runs([LEVEL] * 7 + [LEVEL * 0.85], rng)
    verdict = gate(slower, changes(slower))
    assert verdict.regressed(0.05) and verdict.baseline_runs == 7
    assert verdict.size == pytest.approx(-0.15, abs=0.05)
    assert not verdict.regressed(0.20)  # within a looser threshold
    # a slowdown two runs old: the newest is judged against the level before it began
    two = _runs([LEVEL] * 6 + [LEVEL * 0.85] * 2, rng)
    verdict = gate(two, changes(two))
    assert verdict.regressed(0.05) and verdict.baseline_runs == 6
    # an old regression, long accepted: the newest run is at the new level, no failure
    old = _runs([LEVEL] * 3 + [LEVEL * 0.85] * 5, rng)
    assert not gate(old, changes(old)).regressed(0.05)


def test_the_t_test_and_the_prediction_p_match_the_tables():
    # Student's t two-sided critical values: df 6 at 0.05 is 2.447, at 0.01 3.707
    a, b = [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]  # t = 1.414 on 6 df: p = 0.207
    assert t_test_p(a, b) == pytest.approx(0.2070, abs=1e-3)
    assert t_test_p([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(1.0)
    # one new value 3 sd from the mean of 4 values: t = 3 / sqrt(1.25) = 2.683 on 3 df
    values = [9.0, 10.0, 10.0, 11.0]
    sd = statistics.stdev(values)
    assert prediction_p(values, 10 - 3 * sd) == pytest.approx(0.0748, abs=1e-3)


def test_the_screen_is_calibrated_on_series_with_no_change():
    """Its p is uniform when nothing changed: about 5 % of screens below 0.05, 1 % below 0.01."""
    rng = random.Random(21)
    ps = [screen(_runs([LEVEL] * 10, rng)) or 1.0 for _ in range(1500)]
    assert 0.025 <= sum(p < 0.05 for p in ps) / 1500 <= 0.075
    assert sum(p < 0.01 for p in ps) / 1500 <= 0.02
    assert screen(_runs([LEVEL] * 3, rng)) is None  # too few runs to search


def test_the_largest_t_is_judged_against_its_own_null_not_one_split():
    # one t of 3 between 5 and 5 runs: p 0.017 alone; the largest of 7 splits is less rare
    assert t_test_p([0.0] * 4 + [1.0], [1.0] * 4 + [2.0]) < max_t_p(3.0, 10)
    assert max_t_p(3.0, 10) < min(1.0, 7 * 0.017)  # sharper than Bonferroni
    assert max_t_p(100.0, 10) == pytest.approx(1 / 40_001)
    assert max_t_p(0.0, 10) == 1.0


def test_over_a_study_of_many_series_the_discoveries_are_kept_few_and_the_step_found():
    """26 cells x 2 metrics: unchanged, few studies report anything (the FDR over all series);
    one series stepped 10 % at run 6 is found there, the others stay quiet."""
    rng = random.Random(5)
    quiet = 0
    for _ in range(40):
        every = [_runs([LEVEL] * 10, rng, 0.01, 0.01) for _ in range(52)]
        quiet += not any(study_changes(every))
    assert quiet >= 36, quiet
    found = 0
    for _ in range(20):
        every = [_runs([LEVEL] * 10, rng, 0.01, 0.01) for _ in range(51)]
        every.insert(0, _runs([LEVEL] * 6 + [LEVEL * 0.9] * 4, rng, 0.01, 0.01))
        result = study_changes(every)
        found += [(c.index, c.kind) for c in result[0]] == [(6, "step")]
    assert found >= 18, found


def test_the_gate_over_many_cells_is_adjusted():
    """The newest run 15 % slower in one of 20 cells fails it; 19 steady cells do not, and the
    same p alone would be smaller than it is adjusted over the 20."""
    rng = random.Random(9)
    every = [_runs([LEVEL] * 8, rng) for _ in range(19)]
    every.insert(0, _runs([LEVEL] * 7 + [LEVEL * 0.85], rng))
    found = [changes(s) for s in every]
    gates = study_gates(every, found)
    assert gates[0].regressed(0.05) and not any(g.regressed(0.05) for g in gates[1:])
    alone = gate(every[0], found[0])
    assert alone.p_value is not None and gates[0].p_value is not None
    assert gates[0].p_value > alone.p_value
