"""What the servers' CPU bought, on a synthetic study: a one-worker server that leads by req/s on
1.25 cores is said to lead with more CPU than its worker count suggests, and the ranking per
CPU-second names the other server, with the sentence on which ranking a fixed CPU budget needs."""

from __future__ import annotations

from pathlib import Path

from unit.synthetic import build_store
from wsgibench.report.cpu_use import BUDGET, fair_ranking, more_cores
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.results.store import Store

SPEEDS = {"nginx-baseline": 150000.0, "granian-asgi": 55500.0, "uvicorn": 52600.0}


def _data(tmp: Path, cpu: dict[str, float]):
    path = build_store(tmp / "s.sqlite", SPEEDS, levels=(64, 256), cpu=cpu)
    return load_report_data(Store(path, create=False, read_only=True))


def test_a_lead_bought_with_more_cores_is_said_and_the_fair_ranking_differs(tmp_path: Path):
    data = _data(tmp_path, {"granian-asgi": 125.0, "uvicorn": 99.0})
    load = data.loads[0]
    said = more_cores(load, 256)
    assert said and "granian-asgi's lead over uvicorn comes with 1.2" in said, said
    assert "by 1 worker(s)" in said
    fair = fair_ranking(load, 256)
    assert fair and "granian-asgi leads by req/s" in fair and "uvicorn leads per CPU-second" in fair
    assert "ahead of granian-asgi" in fair  # tested on the starts, not by the medians alone
    assert fair.endswith(BUDGET)
    lines = findings(data)
    assert said in lines and fair in lines


def test_equal_cores_make_no_claim_and_one_leader_for_both(tmp_path: Path):
    data = _data(tmp_path, {"granian-asgi": 99.0, "uvicorn": 99.0})
    load = data.loads[0]
    assert more_cores(load, 256) is None
    fair = fair_ranking(load, 256)
    assert fair and "granian-asgi leads by req/s and leads per CPU-second" in fair
    assert "ahead of uvicorn (" in fair and "3 vs 3 server starts" in fair
    assert BUDGET not in fair


def test_a_lead_per_cpu_second_on_one_start_is_untested(tmp_path: Path):
    path = build_store(
        tmp_path / "one.sqlite", SPEEDS, levels=(256,), cpu={"uvicorn": 99.0}, starts=1
    )
    load = load_report_data(Store(path, create=False, read_only=True)).loads[0]
    fair = fair_ranking(load, 256) or ""
    assert "by value; 1 vs 1 server start: untested" in fair and "ahead" not in fair, fair


def test_a_lead_per_cpu_second_within_noise_is_a_tie(tmp_path: Path):
    speeds = {"granian-asgi": 50000.0, "uvicorn": 50100.0}
    path = build_store(tmp_path / "tie.sqlite", speeds, levels=(256,), jitter=0.05, seed=3)
    load = load_report_data(Store(path, create=False, read_only=True)).loads[0]
    fair = fair_ranking(load, 256) or ""
    assert "tied within noise with" in fair and "ahead" not in fair, fair
