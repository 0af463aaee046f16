"""A/A calibration judged on synthetic stores with known truth: two identical entries measured over
3 starts are rarely called apart and a 10 % slower twin always is; a pair measured on one start
each is untested, never ahead; the calibration kept in the store is found for the same machine
only and cited in the report's leader sentence."""

from __future__ import annotations

from pathlib import Path

from unit.synthetic import ENV, build_store
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.results.calibration import (
    Calibration,
    calibrations,
    cited,
    judge_pair,
    save_calibration,
)
from wsgibench.results.compare import comparable_metadata
from wsgibench.results.store import Store


def _pair(tmp: Path, name: str, twin_speed: float, seed: int, starts: int | None = None) -> Store:
    speeds = {"bjoern": 10_000.0, "bjoern#b": twin_speed}
    path = build_store(tmp / f"{name}.sqlite", speeds, levels=(50,), seed=seed, starts=starts)
    return Store(path, create=False)


def test_identical_entries_are_rarely_apart_and_a_slower_twin_always(tmp_path: Path):
    same = [judge_pair(s, 1, "bjoern", "bjoern#b") for s in (
        _pair(tmp_path, f"aa{i}", 10_000.0, seed=i) for i in range(20)
    )]  # fmt: skip
    assert all(p.tested for p in same) and sum(p.ahead for p in same) <= 3
    assert all(p.above is None for p in same)  # no capacity load
    slower = [judge_pair(s, 1, "bjoern", "bjoern#b") for s in (
        _pair(tmp_path, f"ab{i}", 9_000.0, seed=i) for i in range(10)
    )]  # fmt: skip
    assert all(p.ahead and p.changed for p in slower)


def test_one_start_a_side_is_untested(tmp_path: Path):
    pair = judge_pair(_pair(tmp_path, "one", 5_000.0, seed=1, starts=1), 1, "bjoern", "bjoern#b")
    assert not pair.tested and not pair.ahead and not pair.changed


def test_the_calibration_is_kept_per_machine_and_cited_beside_an_ahead(tmp_path: Path):
    store = _pair(tmp_path, "run", 8_000.0, seed=3)
    pairs = tuple(judge_pair(store, 1, "bjoern", "bjoern#b") for _ in range(2))
    machine = comparable_metadata(ENV)
    calibration = Calibration("bjoern", "closed at 50", machine, pairs, 0.0, 42.0, studies=(1,))
    save_calibration(store, calibration)
    assert calibrations(store, ENV) == [calibration]
    assert calibrations(store, {**ENV, "cpu_count": 64}) == []
    assert cited([calibration]).startswith("identical servers were called apart in 2 of 2 pairs")
    lead = next(line for line in findings(load_report_data(store)) if "leads with" in line)
    assert "ahead of bjoern#b" in lead and "called apart in 2 of 2 pairs here" in lead, lead
    assert "2 pair(s) of closed at 50: ahead in 2 of 2 tested, changed in 2 of 2" in (
        calibration.summary()
    )


def test_an_untested_pair_counts_in_no_rate(tmp_path: Path):
    """A pair whose cells were not both measured judged nothing: "changed" and "above" are out
    of the pairs that were judged, never out of every pair run."""
    untested = judge_pair(
        _pair(tmp_path, "one", 5_000.0, seed=1, starts=1), 1, "bjoern", "bjoern#b"
    )
    tested = judge_pair(_pair(tmp_path, "two", 10_000.0, seed=2), 1, "bjoern", "bjoern#b")
    calibration = Calibration("bjoern", "closed at 50", {}, (untested, tested), 0.0, 1.0)
    assert (calibration.tested, calibration.capacity_pairs) == (1, 0)
    assert f"ahead in {int(tested.ahead)} of 1 tested, changed in {int(tested.changed)} of 1" in (
        calibration.summary()
    )
