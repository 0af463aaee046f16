"""How a cell is judged when its load came from several hosts: started too far apart is invalid
with the reason; within the bound it is measured, and the cell says how far apart they started."""

from __future__ import annotations

from dataclasses import replace

from wsgibench.results.engine_result import LoadHostRun

from .fakes import result
from .test_judging import _measure


def _from_hosts(
    skew_s: float, hosts: int = 3, margin_s: float | None = None, late_s: float | None = None
):
    one = result(ok=10_000, mean_us=1000)
    runs = tuple(
        LoadHostRun(f"tcp://10.0.0.{11 + i}:4000", f"h{i}", 1.0 + i * skew_s / 2, i * skew_s / 2,
                    0.0, 0.0, 0.001, one, margin_s, late_s if i == hosts - 1 else 0.0)
        for i in range(hosts)
    )  # fmt: skip
    return replace(one, load_hosts=runs, start_skew_s=skew_s, start_skew_bound_s=0.010)


def test_hosts_started_further_apart_than_the_bound_make_the_cell_invalid(tmp_path):
    fine, apart = _from_hosts(0.004), _from_hosts(0.012)
    outcome, _ = _measure(tmp_path, [fine, fine, apart, fine])  # the warm-up, then 3 repeats
    assert outcome.status == "invalid"
    assert (
        outcome.reason == "load hosts started 12.0 ms apart in repeat 2, more than the 10 ms bound"
    )
    assert len(outcome.repeats) == 3  # invalid, every repeat kept
    assert "load from 3 hosts, started ≤ 12.0 ms apart" in outcome.notes


def test_hosts_within_the_bound_are_measured_and_said(tmp_path):
    outcome, _ = _measure(tmp_path, [_from_hosts(0.0031)])
    assert outcome.status == "measured", outcome.reason
    assert "load from 3 hosts, started ≤ 3.1 ms apart" in outcome.notes


def test_the_local_engine_says_nothing_of_hosts(tmp_path):
    outcome, _ = _measure(tmp_path, [result(ok=10_000, mean_us=1000)])
    assert not [n for n in outcome.notes if "hosts" in n]


def test_a_start_that_reached_the_last_host_late_is_named_in_the_reason(tmp_path):
    apart = _from_hosts(0.028, margin_s=-0.0215)
    outcome, _ = _measure(tmp_path, [apart, apart])
    assert outcome.status == "invalid"
    assert outcome.reason == (
        "load hosts started 28.0 ms apart in repeat 1, more than the 10 ms bound: the start "
        "reached tcp://10.0.0.13:4000 21.5 ms after its instant"
    )


def test_an_engine_that_began_late_on_a_busy_host_is_named_in_the_reason(tmp_path):
    apart = _from_hosts(0.028, margin_s=0.25, late_s=0.027)
    outcome, _ = _measure(tmp_path, [apart, apart])
    assert outcome.reason == (
        "load hosts started 28.0 ms apart in repeat 1, more than the 10 ms bound: "
        "tcp://10.0.0.13:4000 had the start 250 ms ahead, and its engine began 27.0 ms after the "
        "instant (its CPUs were busy)"
    )


def test_the_clocks_uncertainty_counts_against_the_bound(tmp_path):
    # 8 ms apart as measured, but the offsets are known only to ± 3 ms: they may have started
    # 11 ms apart, over the 10 ms bound; with exact clocks the same skew is within it.
    unsure = replace(_from_hosts(0.008), start_skew_uncertainty_s=0.003)
    outcome, _ = _measure(tmp_path, [unsure])
    assert outcome.status == "invalid"
    assert outcome.reason.startswith(
        "load hosts started 8.0 ms apart (± 3.0 ms: the clocks' offsets) in repeat 1"
    )
    sure, _ = _measure(tmp_path / "sure", [_from_hosts(0.008)])
    assert sure.status == "measured"
