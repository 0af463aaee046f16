"""The charts of a capacity load: corrected p50 and p99 against the offered rate (requests/s) per
server, with the budget as a horizontal rule and each server's knee (its capacity, the interval
shaded up to the lowest rate that missed) marked; and CPU per request against the share of the
capacity. Every point is a stored cell: the search's steps and the cells run for CPU cost."""

from __future__ import annotations

from typing import Any

import altair as alt

from wsgibench.report import capacity
from wsgibench.report.chart_parts import (
    HEIGHT,
    WIDTH,
    Chart,
    Palette,
    finish,
    metric_rows,
    series,
    top_down,
)
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.capacity_read import ServerCapacity
from wsgibench.results.verdict import CellStatus

BUDGET_COLOUR = "#b00000"
OFFERED = "offered load (requests/s)"
PERCENTILES = (("p50", "latency_p50_us"), ("p99", "latency_p99_us"))


def _offered(field: str, rows: list[dict[str, Any]]) -> alt.X:
    """The offered rate, on a log scale when the rates span ten times or more."""
    rates = [r["offered"] for r in rows if r["offered"] > 0]
    log = bool(rates) and max(rates) / min(rates) >= 10
    scale = alt.Scale(type="log", nice=False) if log else alt.Scale(zero=False, nice=False)
    return alt.X(f"{field}:Q", title=OFFERED, scale=scale, axis=alt.Axis(format="~s"))


def _ms(field: str, pname: str) -> alt.Y:
    return alt.Y(f"{field}:Q", title=f"corrected {pname} (ms)", scale=alt.Scale(type="log"))


def _latency_rows(load: LoadData, column: str, per_level: float) -> list[dict[str, Any]]:
    """The cells' latencies at their offered rate: the level times its requests (calls; a
    replay's speed times its log's mean rate)."""
    rows = [r for r in metric_rows(load, column, scale=0.001) if not r["missing"]]
    for r in rows:
        r["offered"] = r["level"] * per_level
    return rows


def _knees(
    found: list[ServerCapacity], labels: dict[str, str], rows: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Per server with a capacity: where its knee is, and its capacity step's p50 and p99."""
    knees = []
    for c in found:
        r = c.result
        if r.capacity is None:
            continue
        knee: dict[str, Any] = {
            "server": labels.get(c.server, c.server),
            "capacity": c.requests(r.capacity),
            "above": c.requests(r.above),
            "interval": capacity.interval(c),
            "stopped": capacity.stopped(c),
            "cell_id": r.proof,
        }
        for pname, points in rows.items():
            knee[pname] = next((p["value"] for p in points if p["cell_id"] == r.proof), None)
        knees.append(knee)
    return knees


def _knee_layers(knees: list[dict[str, Any]], pname: str, colour: alt.Color) -> list[Any]:
    tip = [
        alt.Tooltip("server:N"),
        alt.Tooltip("capacity:Q", title="capacity req/s", format=",.0f"),
        alt.Tooltip("interval:N", title="interval req/s"),
        alt.Tooltip("stopped:N", title="the search stopped"),
        alt.Tooltip("cell_id:Q", title="cell id"),
    ]
    x = alt.X("capacity:Q", title=OFFERED)
    band = (
        alt.Chart(alt.Data(values=[k for k in knees if k["above"]]), name=f"interval-{pname}")
        .mark_rect(opacity=0.12)
        .encode(x=x, x2="above:Q", color=colour, tooltip=tip)
    )
    rule = (
        alt.Chart(alt.Data(values=knees), name=f"knee-{pname}")
        .mark_rule(strokeDash=[4, 3], strokeWidth=1.5)
        .encode(x=x, color=colour, tooltip=tip)
    )
    ring = (
        alt.Chart(alt.Data(values=[k for k in knees if k[pname] is not None]), name=f"ring-{pname}")
        .mark_point(shape="circle", size=320, filled=False, strokeWidth=2.5, opacity=1)
        .encode(x=x, y=_ms(pname, pname), color=colour, tooltip=tip)
    )
    return [band, rule, ring]


def _budget_layers(ms: float, pname: str) -> list[Any]:
    label = f"budget: {pname} ≤ {ms:g} ms"
    values = alt.Data(values=[{"budget": ms, "label": label}])
    rule = (
        alt.Chart(values, name=f"budget-{pname}")
        .mark_rule(color=BUDGET_COLOUR, strokeDash=[8, 4], strokeWidth=2)
        .encode(y=_ms("budget", pname), tooltip=[alt.Tooltip("label:N", title="budget")])
    )
    text = (
        alt.Chart(values, name=f"budget-label-{pname}")
        .mark_text(align="left", dx=4, dy=-7, color=BUDGET_COLOUR)
        .encode(y=_ms("budget", pname), x=alt.value(0), text="label:N")
    )
    return [rule, text]


def latency_knees(
    load: LoadData, found: list[ServerCapacity], data: ReportData, palette: Palette
) -> Chart:
    calls = found[0].calls if found else int(load.config.get("calls", 1))
    per_level = (found[0].unit_rps if found else None) or calls
    rows = {pname: _latency_rows(load, column, per_level) for pname, column in PERCENTILES}
    order = top_down(rows["p99"])
    colour = alt.Color("server:N", scale=palette.scale(order), title="server")
    knees = _knees(found, {c.cell.server: c.label for c in load.cells}, rows)
    budget = found[0].budget if found else None
    limits = {"p50": budget.p50_ms if budget else None, "p99": budget.p99_ms if budget else None}
    x = _offered("offered", rows["p50"] + rows["p99"])
    panels = []
    for pname, points in rows.items():
        layers = [
            series(
                points, palette, f"corrected {pname} (ms)", ",.3f", x=x, log_y=True, order=order
            ).properties(data=alt.Data(values=points)),
            *_knee_layers(knees, pname, colour),
        ]
        if (ms := limits[pname]) is not None:
            layers += _budget_layers(ms, pname)
        panels.append(alt.layer(*layers).properties(width=WIDTH // 2, height=HEIGHT, title=pname))
    chart = alt.hconcat(*panels).resolve_scale(x="shared", y="shared", color="shared")
    extra = (
        f"load {load.name}: corrected latency, from each request's intended send time to the "
        "last byte of its reply, median over repeats, at each rate the search tried and the "
        f"CPU cost cells; red dashed: the budget ({budget.describe() if budget else '-'}); "
        "dashed rule and ring: each server's knee, its capacity, shaded up to the lowest rate "
        "that missed; points: the cells' status as in the other charts; log scales"
    )
    return Chart(
        f"capacity-latency-{load.name}",
        f"Latency against offered rate, knees — {load.name}",
        finish(chart, data, f"Corrected p50 / p99 against offered rate ({load.name})", extra),
    )


def _cpu_per_request(c: CellData) -> list[float]:
    """Per repeat: CPU µs of the server's process tree per valid reply."""
    return [r.cpu_mean_pct / 100 * 1e6 / r.rps_ok for r in c.repeats if r.rps_ok and r.cpu_mean_pct]


def cpu_per_request(
    load: LoadData, found: list[ServerCapacity], data: ReportData, palette: Palette
) -> Chart:
    capacities = {c.server: c.result.capacity for c in found if c.result.capacity}
    rows = []
    for r in metric_rows(load, "", values=_cpu_per_request):
        top = capacities.get(r["name"])
        if r["missing"] or top is None or r["level"] > top or r["status"] != CellStatus.MEASURED:
            continue
        rows.append({**r, "share": r["level"] / top})
    x = alt.X(
        "share:Q",
        title="share of the server's capacity",
        scale=alt.Scale(domain=[0, 1], nice=False),
        axis=alt.Axis(format="%"),
    )
    chart = series(rows, palette, "CPU µs per request", ",.1f", x=x).properties(
        data=alt.Data(values=rows), width=WIDTH, height=HEIGHT
    )
    extra = (
        f"load {load.name}: CPU of the server's process tree per valid reply, median over "
        "repeats, at each rate up to its capacity (100 %): the cells at 25/50/75 % and the "
        "search's steps below it; lower is better"
    )
    return Chart(
        f"capacity-cpu-{load.name}",
        f"CPU per request against share of capacity — {load.name}",
        finish(chart, data, f"CPU per request against share of capacity ({load.name})", extra),
    )


def capacity_charts(data: ReportData, palette: Palette) -> list[Chart]:
    """Two charts per capacity load, each tagged with its load."""
    out = []
    for load in data.loads:
        if not load.is_capacity:
            continue
        found = data.capacities_of(load.name)
        for make in (latency_knees, cpu_per_request):
            chart = make(load, found, data, palette)
            chart.load = load.name
            out.append(chart)
    return out
