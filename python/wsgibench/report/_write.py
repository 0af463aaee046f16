"""Write a report directory: report.html, summary.md, charts/<chart>.png, and charts/throughput.png."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._store import Store
from . import _html, _markdown, _vega
from ._charts import charts as make_charts
from ._data import load_report_data
from ._table import load_table

CHART_DIR = "charts"
HEADLINE = "throughput.png"  # the first load's throughput chart, under a name that never changes


@dataclass
class ReportFiles:
    html: Path
    markdown: Path
    pngs: list[Path]
    headline: Path | None


def write_report(store: Store, out: Path, study_id: int | None = None, png: bool = True) -> ReportFiles:
    data = load_report_data(store, study_id)
    tables = [load_table(load) for load in data.loads]
    charts = make_charts(data)
    out = Path(out)
    chart_dir = out / CHART_DIR
    chart_dir.mkdir(parents=True, exist_ok=True)
    pngs: list[Path] = []
    headline = None
    if png:
        for chart in charts:
            path = chart_dir / f"{chart.slug}.png"
            path.write_bytes(_vega.png(chart.spec))
            pngs.append(path)
            if headline is None and chart.slug.startswith("throughput-"):
                headline = chart_dir / HEADLINE
                headline.write_bytes(path.read_bytes())
    html_path = out / "report.html"
    html_path.write_text(_html.render(data, tables, charts), encoding="utf-8")
    md_path = out / "summary.md"
    md_path.write_text(_markdown.render(data, tables, charts, CHART_DIR), encoding="utf-8")
    return ReportFiles(html_path, md_path, pngs, headline)
