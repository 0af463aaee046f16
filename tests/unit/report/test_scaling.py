"""The scaling charts of a scaling study: req/s against server CPUs beside the ideal line from the
1-CPU point, and requests per CPU-second, from the cells' stored layouts."""

from __future__ import annotations

from pathlib import Path

from wsgibench.report.chart_parts import Palette
from wsgibench.report.data import load_report_data
from wsgibench.report.scaling import scaling_charts
from wsgibench.results.store import Store

from ..synthetic import CAPS, ENV, repeat


def _scaling_store(path: Path) -> Store:
    store = Store(path)
    loads = [
        {"name": f"c-{n}cpu", "model": "closed", "levels": [50], "duration_s": 1} for n in (1, 2, 4)
    ]
    study = store.begin_study("scaling", {"name": "scaling", "repeats": 2, "load": loads}, ENV)
    rps = {1: 10_000.0, 2: 18_000.0, 4: 30_000.0}  # 90 % then 75 % of linear
    for position, n in enumerate((1, 2, 4)):
        layout = {
            "server_cpus": list(range(n)),
            "engine_cpus": list(range(n, 2 * n)),
            "policy": "scaling",
            "workers": n,
            "engine_threads": n,
        }
        store.save_cell(
            study,
            {
                "server": "bjoern",
                "load": f"c-{n}cpu",
                "model": "closed",
                "level": 50,
                "position": position,
                "status": "measured",
                "capabilities": CAPS,
                "server_info": {"name": "bjoern", "flavour": "native", "version": "3.2.2"},
                "isolation": {"server_cpus": layout["server_cpus"], "layout": layout},
            },
            [repeat(i, rps[n], cpu=100.0 * n, level=50) for i in range(2)],
        )
    store.finish_study(study)
    return store


def test_scaling_charts_draw_measured_and_ideal_lines(tmp_path: Path):
    data = load_report_data(_scaling_store(tmp_path / "s.sqlite"))
    charts = scaling_charts(data, Palette(data.labels()))
    assert [c.slug for c in charts] == ["scaling", "scaling-efficiency"]
    rows = charts[0].spec["data"]["values"]  # the layers share the chart's data
    measured = {r["cpus"]: r["value"] for r in rows if r["kind"] == "measured"}
    ideal = {r["cpus"]: r["value"] for r in rows if r["kind"] != "measured"}
    assert measured == {1: 10_000.0, 2: 18_000.0, 4: 30_000.0}
    assert ideal == {1: 10_000.0, 2: 20_000.0, 4: 40_000.0}
    per_cpu = {r["cpus"]: r["per_cpu_s"] for r in rows if r["kind"] == "measured"}
    assert per_cpu == {1: 10_000.0, 2: 9_000.0, 4: 7_500.0}  # req/s per server CPU-second


def test_no_scaling_charts_for_an_ordinary_study(tmp_path: Path):
    from ..synthetic import build_store

    data = load_report_data(Store(build_store(tmp_path / "a.sqlite"), create=False))
    assert scaling_charts(data, Palette(data.labels())) == []
