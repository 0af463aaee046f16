"""`compare` of capacity loads on synthetic stores: per load and server A's and B's capacity with
their intervals, changed only when their uncertainties (the intervals widened by a search's noise)
do not overlap; the steps themselves are not compared rate by rate."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from wsgibench.report.compare import markdown, print_table
from wsgibench.results.capacity import Budget, CapacityResult
from wsgibench.results.capacity_compare import CapacityChange, overlaps, uncertainty
from wsgibench.results.capacity_read import ServerCapacity
from wsgibench.results.compare import compare_stores
from wsgibench.results.store import Store

from ..synthetic import build_capacity_store


def _compare(tmp_path, knees_a, knees_b, resolution_a=0.05, resolution_b=0.05):
    tmp_path.mkdir(exist_ok=True)
    a = build_capacity_store(tmp_path / "a.sqlite", knees_a, resolution=resolution_a)
    b = build_capacity_store(tmp_path / "b.sqlite", knees_b, resolution=resolution_b)
    return compare_stores(Store(a, create=False), Store(b, create=False))


def test_overlapping_intervals_are_unchanged_whatever_the_values(tmp_path):
    # A's coarse search: 8,000–12,000 req/s; B's fine one: 10,000–10,500, inside it.
    result = _compare(tmp_path, {"a": 1000.0}, {"a": 1050.0}, resolution_a=0.5)
    (change,) = result.capacities
    assert change.a is not None and change.b is not None
    assert change.a.result.capacity == 800 and change.a.result.above == 1200
    assert change.b.result.capacity == 1000 and change.b.result.above == 1050
    assert change.change is not None and round(change.change, 3) == 0.25
    assert not change.changed and change.verdict == "no change detected: the intervals overlap"
    assert result.cells == []  # the steps are not levels to compare one by one


def test_disjoint_intervals_are_a_change_either_way(tmp_path):
    result = _compare(tmp_path, {"a": 1000.0}, {"a": 2000.0})
    (change,) = result.capacities
    assert change.changed and change.verdict == "improved: higher"
    assert change.change is not None and round(change.change, 3) == 1.0
    back = _compare(tmp_path / "back", {"a": 2000.0}, {"a": 1000.0})
    assert back.capacities[0].verdict == "regressed: lower"


def test_the_terminal_table_and_markdown_show_the_capacities(tmp_path):
    result = _compare(tmp_path, {"a": 1000.0, "b": 300.0}, {"a": 2000.0})
    out = io.StringIO()
    print_table(result, Console(file=out, width=200))
    text = out.getvalue()
    assert "p99-10ms · capacity within p99 ≤ 10 ms, errors ≤ 5.0%" in text
    assert "9,750–10,000" in text and "19,500–20,000" in text and "+100.0%" in text
    assert "improved: higher" in text and "only in A" in text
    assert "capacities: 1 improved, 1 only in A" in text
    assert "summary:" not in text  # nothing compared cell by cell
    md = markdown(result)
    a, b = result.capacities
    assert a.a is not None and a.b is not None
    assert (
        "| p99-10ms | p99 ≤ 10 ms, errors ≤ 5.0% | a | 9,750 | 9,750–10,000 | 19,500 | "
        f"19,500–20,000 | +100.0% | improved: higher | {a.a.result.proof} / {a.b.result.proof} |"
    ) in md
    assert "| p99-10ms | p99 ≤ 10 ms, errors ≤ 5.0% | b | 2,880 | 2,880–3,000 | - | - | - |" in md
    assert "do not overlap" in md and "widened by ±10%" in md


BUDGET = Budget(10.0)


def _capacity(capacity, above, budget=BUDGET, calls=1) -> ServerCapacity:
    result = CapacityResult(capacity, above, None, "within 5%")
    return ServerCapacity("cap", "x", budget, calls, result, (), 1)


def test_intervals_are_compared_in_requests_and_a_different_budget_is_no_comparison():
    assert overlaps(_capacity(100.0, 110.0), _capacity(105.0, None))
    # the bisection intervals alone share no rate; widened by the search's noise they do
    assert not overlaps(_capacity(100.0, 110.0), _capacity(110.0, 120.0), noise=0.0)
    assert overlaps(_capacity(100.0, 110.0), _capacity(110.0, 120.0))
    assert overlaps(_capacity(None, 50.0), _capacity(40.0, 45.0))  # nothing met: below 50
    # 100–110 connections/s of 1 request against 100–110 of 2: 200–220 requests/s, apart even
    # with 10 % of noise each (121 < 180).
    assert not overlaps(_capacity(100.0, 110.0), _capacity(100.0, 110.0, calls=2))
    assert uncertainty(_capacity(100.0, 110.0)) == pytest.approx((90.0, 121.0))
    change = CapacityChange(
        "cap", "x", _capacity(100.0, 110.0), _capacity(200.0, 220.0, budget=Budget(20.0))
    )
    assert not change.changed
    assert change.verdict == (
        "not comparable: budgets differ (p99 ≤ 10 ms, errors ≤ 5.0% vs p99 ≤ 20 ms, errors ≤ 5.0%)"
    )


def test_apart_only_within_the_search_noise_is_a_change_within_noise():
    """Identical truth, two searches 5 % apart: the bisection intervals do not overlap, the
    uncertainties do; no "improved", and no capacity found on a side is no test."""
    close = CapacityChange("cap", "x", _capacity(100.0, 105.0), _capacity(105.0, 110.0))
    assert not close.changed and close.verdict.startswith("change within noise")
    far = CapacityChange("cap", "x", _capacity(100.0, 105.0), _capacity(130.0, 136.0))
    assert far.changed and far.verdict == "improved: higher"  # 115.5 < 117 apart
    none = CapacityChange("cap", "x", _capacity(None, 50.0), _capacity(130.0, 136.0))
    assert not none.changed and none.verdict.startswith("not tested")
