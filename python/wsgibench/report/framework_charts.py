"""The frameworks study's headline chart: every framework (and the ceiling beside them) with each
server's valid replies per second, one panel per framework and level, from the loads the study
declares `role = "framework"` and `role = "ceiling"`."""

from __future__ import annotations

import statistics
from typing import Any

import altair as alt

from wsgibench.report.chart_parts import TIP, Chart, Palette, base_row, finish
from wsgibench.report.data import LoadData, ReportData
from wsgibench.results.verdict import CellStatus

SLUG = "frameworks"
PANEL_WIDTH = 240
COLUMNS = 3  # panels a row: three and the legend fit a 1,400 px page


def _panel(load: LoadData, data: ReportData, level: float, several: bool) -> str:
    name = str(load.config.get("app") or data.meta.config.get("app") or load.name)
    name = f"{load.name} (ceiling)" if load.role == "ceiling" else name
    return f"{name}, {load.level_field} {level:g}" if several else name


def _rows(data: ReportData) -> tuple[list[dict[str, Any]], list[str]]:
    loads = [
        load
        for load in data.loads
        if load.role in ("ceiling", "framework") and not load.is_capacity
    ]
    loads.sort(key=lambda load: load.role != "ceiling")  # the ceiling first
    several = len({level for load in loads for level in load.levels}) > 1
    rows, panels = [], []
    for load in loads:
        for level in load.levels:
            panels.append(_panel(load, data, level, several))
            for c in load.cells:
                values = sorted(c.values("rps_ok"))
                if c.cell.level != level or c.cell.status != CellStatus.MEASURED or not values:
                    continue
                row = base_row(c) | {"panel": panels[-1], "value": statistics.median(values)}
                rows.append(row | {"low": values[0], "high": values[-1]})
    return rows, panels


def framework_chart(data: ReportData, palette: Palette) -> Chart | None:
    """One bar per server and framework (clean measurements only; the tables name the rest),
    its min-max over the repeats as a rule; None for a study that declares no framework load."""
    if not any(load.role == "framework" for load in data.loads):
        return None
    rows, panels = _rows(data)
    if not rows:
        return None
    servers = sorted({r["server"] for r in rows})
    x = alt.X("server:N", title=None, sort=servers, axis=alt.Axis(labelAngle=-40))
    y = alt.Y("value:Q", title="valid replies/s (median of repeats)")
    tip = [alt.Tooltip("value:Q", title="req/s", format=",.0f"), *TIP]
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(x=x, y=y, color=alt.Color("server:N", scale=palette.scale(servers)), tooltip=tip)
    )
    spread = alt.Chart().mark_rule(color="#333").encode(x=x, y="low:Q", y2="high:Q")
    chart = (
        alt.layer(bars, spread, data=alt.Data(values=rows))
        .properties(width=PANEL_WIDTH, height=180)
        .facet(facet=alt.Facet("panel:N", title=None, sort=panels), columns=COLUMNS)
        .resolve_scale(y="independent")
    )
    extra = (
        "each framework on each server that ran it, beside the ceiling (the same servers on the "
        "load the study declares the ceiling); bars: median of repeats, rules: min-max; "
        "clean measurements only (the tables give the others with their reasons); each panel "
        "its own scale; higher is better"
    )
    return Chart(SLUG, "Frameworks on servers", finish(chart, data, "Frameworks on servers", extra))
