"""The building blocks every chart shares: the palette, point rows with their record ids, the
median-and-spread series, titles and captions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import altair as alt

from wsgibench.baseline import BASELINE
from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.report.table import disputed
from wsgibench.results.verdict import CellStatus

# A fixed palette so a server keeps its colour in every chart of a report: Vega's tableau10, then
# ten hues none of the first ten is close to (the quick study alone draws twelve servers).
PALETTE = (
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#b279a2",
    "#e45756",
    "#72b7b2",
    "#eeca3b",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
    "#17becf",
    "#bcbd22",
    "#393b79",
    "#e7298a",
    "#00441b",
    "#8c2d04",
    "#6a3d9a",
    "#000080",
    "#808000",
    "#66c2a5",
)
BASELINE_COLOUR = "#555555"
# Points by the cell's status, and "disputed" for a measured cell whose number is marked.
STATUS_SHAPES = {
    CellStatus.MEASURED.value: "circle",
    "disputed": "diamond",
    CellStatus.INVALID.value: "triangle-up",
    CellStatus.CONTENDED.value: "triangle-down",
    CellStatus.DEATHS.value: "square",
    CellStatus.DISQUALIFIED.value: "cross",
}
# The table metric whose disputes (report.table.DISPUTES) a chart of this column shows.
DISPUTED_AS = {
    "rps_ok": "throughput",
    "latency_p50_us": "latency_p50",
    "latency_p90_us": "latency_p50",
    "latency_p99_us": "latency_p99",
    "error_rate": "errors",
}
WIDTH, HEIGHT = 560, 320


@dataclass
class Chart:
    slug: str  # file name stem and HTML id
    title: str
    spec: dict[str, Any]
    load: str = ""  # the load it draws


class Palette:
    def __init__(self, labels: list[str]):
        self.labels = labels
        self.colours = {}
        free = iter(PALETTE * (1 + len(labels) // len(PALETTE)))
        for label in labels:
            self.colours[label] = BASELINE_COLOUR if label.startswith(BASELINE) else next(free)

    def scale(self, labels: list[str]) -> alt.Scale:
        """Colours of `labels`, listed in the legend in the order given."""
        return alt.Scale(domain=labels, range=[self.colours[label] for label in labels])


def top_down(rows: list[dict[str, Any]]) -> list[str]:
    """Servers in the order their lines end, highest first, so the legend reads like the chart."""
    last: dict[str, tuple[float, float]] = {}
    for r in rows:
        if r.get("missing"):
            continue
        key = (r["level"], r["value"])
        last[r["server"]] = max(last.get(r["server"], key), key)
    return sorted({r["server"] for r in rows}, key=lambda s: (-last.get(s, (0, 0))[1], s))


def chart_title(text: str, data: ReportData, extra: str | None = None) -> alt.TitleParams:
    lines = data.meta.caption() + ([part.strip() for part in extra.split(";")] if extra else [])
    return alt.TitleParams(text=text, subtitle=lines, anchor="start", subtitleColor="#555")


def x_axis(load: LoadData, field: str = "level") -> alt.X:
    levels = load.levels
    log = len(levels) > 1 and levels[0] > 0 and levels[-1] / levels[0] >= 10
    domain = [levels[0], levels[-1]] if len(levels) > 1 else alt.Undefined
    scale = (
        alt.Scale(type="log", domain=domain, nice=False)
        if log
        else alt.Scale(zero=False, nice=False, domain=domain)
        if domain
        else alt.Scale(zero=False)
    )
    return alt.X(f"{field}:Q", title=load.level_title, scale=scale, axis=alt.Axis(values=levels))


def base_row(c: CellData) -> dict[str, Any]:
    cell = c.cell
    return {
        "server": c.label,
        "name": cell.server,
        "level": cell.level,
        "status": cell.status,
        "reason": cell.reason or "",
        "notes": " | ".join(c.remarks),
        "cell_id": cell.id,
        "repeat_ids": fmt.ids(c.repeat_ids),
        "n": len(c.repeats),
    }


TIP = [
    alt.Tooltip("server:N"),
    alt.Tooltip("level:Q", title="level"),
    alt.Tooltip("status:N"),
    alt.Tooltip("reason:N"),
    alt.Tooltip("notes:N"),
    alt.Tooltip("cell_id:Q", title="cell id"),
    alt.Tooltip("repeat_ids:N", title="repeat ids"),
]


def metric_rows(
    load: LoadData,
    column: str,
    scale: float = 1.0,
    values: Callable[[CellData], list[float]] | None = None,
) -> list[dict[str, Any]]:
    """One row per cell: median / min / max of a per-repeat metric; cells without numbers at 0."""
    rows = []
    for c in load.cells:
        vals = values(c) if values else c.values(column)
        row = base_row(c)
        why = disputed(c, DISPUTED_AS[column]) if column in DISPUTED_AS else None
        if why and c.cell.status == CellStatus.MEASURED:  # marked as the table marks it (⚠)
            row.update(status="disputed", reason=why)
        if vals:
            vals = sorted(v * scale for v in vals)
            mid = len(vals) // 2
            median = vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2
            row.update(value=median, low=vals[0], high=vals[-1], missing=False)
        elif c.cell.status == CellStatus.DISQUALIFIED:
            row.update(value=0.0, low=0.0, high=0.0, missing=True)  # marked on the axis
        else:
            continue  # unavailable / failed with nothing measured: listed in the table only
        rows.append(row)
    return rows


def series(
    rows: list[dict[str, Any]],
    palette: Palette,
    y_title: str,
    value_format: str,
    x: alt.X,
    log_y: bool = False,
    order: list[str] | None = None,
) -> alt.LayerChart:
    """Median lines with min-max rules per server, status-shaped points, reasons in tooltips;
    the legend in `order` (panels side by side share one), else as the lines end."""
    colour = alt.Color("server:N", scale=palette.scale(order or top_down(rows)), title="server")
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=True)
    tip = [
        alt.Tooltip("value:Q", title=y_title, format=value_format),
        alt.Tooltip("low:Q", title="min of repeats", format=value_format),
        alt.Tooltip("high:Q", title="max of repeats", format=value_format),
        *TIP,
    ]
    base = alt.Chart().encode(x=x, color=colour)
    counted = alt.datum.status != CellStatus.DISQUALIFIED.value
    line = (
        base.mark_line(strokeWidth=2)
        .encode(y=alt.Y("value:Q", title=y_title, scale=y_scale))
        .transform_filter(counted)
    )
    spread = (
        base.mark_rule(strokeWidth=1.5, opacity=0.6)
        .encode(y="low:Q", y2="high:Q")
        .transform_filter(counted)
    )
    points = base.mark_point(size=70, filled=True, opacity=1).encode(
        y="value:Q",
        shape=alt.Shape(
            "status:N",
            title="status",
            scale=alt.Scale(domain=list(STATUS_SHAPES), range=list(STATUS_SHAPES.values())),
        ),
        tooltip=tip,
    )
    return alt.LayerChart(layer=[line, spread, points])


def finish(chart: Any, data: ReportData, title: str, extra: str | None) -> dict[str, Any]:
    chart = (
        chart.properties(title=chart_title(title, data, extra))
        .configure_view(stroke=None)
        .configure_legend(orient="right", symbolOpacity=1)
    )
    spec: dict[str, Any] = chart.to_dict()
    spec.pop("$schema", None)  # no URL in the page, not even one nobody fetches
    return spec
