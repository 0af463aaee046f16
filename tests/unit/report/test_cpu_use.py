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
    assert fair.endswith(BUDGET)
    lines = findings(data)
    assert said in lines and fair in lines


def test_equal_cores_make_no_claim_and_one_leader_for_both(tmp_path: Path):
    data = _data(tmp_path, {"granian-asgi": 99.0, "uvicorn": 99.0})
    load = data.loads[0]
    assert more_cores(load, 256) is None
    fair = fair_ranking(load, 256)
    assert fair and "granian-asgi leads by req/s and by CPU-second" in fair
    assert BUDGET not in fair
