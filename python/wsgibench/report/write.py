"""Write a report directory: report.html, summary.md, charts/<chart>.png, and charts/throughput.png."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wsgibench.report import html as html_page
from wsgibench.report import markdown as markdown_page
from wsgibench.report import vega
from wsgibench.report.charts import charts as make_charts
from wsgibench.report.data import load_report_data
from wsgibench.report.framework_charts import SLUG
from wsgibench.report.table import load_table
from wsgibench.results.store import Store

CHART_DIR = "charts"
# The first load's throughput chart (a frameworks study's: every framework on one chart), under a
# name that never changes.
HEADLINE = "throughput.png"


@dataclass
class ReportFiles:
    html: Path
    markdown: Path
    pngs: list[Path]
    headline: Path | None


def write_report(
    store: Store, out: Path, study_id: int | None = None, png: bool = True
) -> ReportFiles:
    data = load_report_data(store, study_id)
    tables = [load_table(load) for load in data.loads if not load.is_capacity]
    charts = make_charts(data)
    out = Path(out)
    chart_dir = out / CHART_DIR
    chart_dir.mkdir(parents=True, exist_ok=True)
    pngs: list[Path] = []
    headline = None
    if png:
        for chart in charts:
            path = chart_dir / f"{chart.slug}.png"
            path.write_bytes(vega.png(chart.spec))
            pngs.append(path)
            if headline is None and chart.slug.startswith(("throughput-", SLUG)):
                headline = chart_dir / HEADLINE
                headline.write_bytes(path.read_bytes())
    html_path = out / "report.html"
    html_path.write_text(html_page.render(data, tables, charts), encoding="utf-8")
    md_path = out / "summary.md"
    md_path.write_text(markdown_page.render(data, tables, charts, CHART_DIR), encoding="utf-8")
    return ReportFiles(html_path, md_path, pngs, headline)
