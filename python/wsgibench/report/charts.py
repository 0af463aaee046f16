"""Chart definitions (altair / Vega-Lite): one spec per chart serves both the HTML page and the PNG."""

from __future__ import annotations

from typing import Any

import altair as alt

from wsgibench.baseline import BASELINE
from wsgibench.report import format as fmt
from wsgibench.report.capacity_charts import capacity_charts
from wsgibench.report.chart_parts import (
    BASELINE_COLOUR,
    HEIGHT,
    TIP,
    WIDTH,
    Chart,
    Palette,
    base_row,
    finish,
    metric_rows,
    series,
    x_axis,
)
from wsgibench.report.data import LoadData, ReportData
from wsgibench.report.framework_charts import framework_chart
from wsgibench.report.scaling import scaling_charts
from wsgibench.report.trace_charts import trace_chart


def throughput(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = metric_rows(load, "rps_ok")
    servers = [r for r in rows if r["name"] != BASELINE]
    ceiling = [r for r in rows if r["name"] == BASELINE and not r["missing"]]
    x = x_axis(load)
    layers = [
        series(servers, palette, "valid replies/s", ",.0f", x=x).properties(
            data=alt.Data(values=servers), width=WIDTH, height=HEIGHT
        )
    ]
    if ceiling:
        base = alt.Chart(alt.Data(values=ceiling)).encode(x=x)
        layers.append(
            base.mark_line(strokeDash=[6, 4], color=BASELINE_COLOUR, strokeWidth=2).encode(
                y=alt.Y("value:Q"),
                tooltip=[alt.Tooltip("value:Q", title="nginx ceiling req/s", format=",.0f"), *TIP],
            )
        )
        layers.append(
            base.mark_point(color=BASELINE_COLOUR, shape="diamond", size=60, filled=True).encode(
                y="value:Q",
                tooltip=[alt.Tooltip("value:Q", title="nginx ceiling req/s", format=",.0f"), *TIP],
            )
        )
        last = max(ceiling, key=lambda r: r["level"])
        layers.append(
            alt.Chart(alt.Data(values=[last]))
            .mark_text(align="right", dy=-8, color=BASELINE_COLOUR, fontStyle="italic")
            .encode(x=x, y="value:Q", text=alt.value("nginx: machine ceiling"))
        )
    if load.model in ("rate", "conn_rate"):
        calls = float(load.config.get("calls", 1))
        offered = [{"level": level, "value": level * calls} for level in load.levels]
        layers.append(
            alt.Chart(alt.Data(values=offered))
            .mark_line(strokeDash=[2, 3], color="#999", strokeWidth=1)
            .encode(
                x=x,
                y="value:Q",
                tooltip=[alt.Tooltip("value:Q", title="offered req/s", format=",.0f")],
            )
        )
    extra = (
        f"load {load.name}: {load.describe()}; dashed: {BASELINE}, the machine's ceiling"
        + ("; dotted: the offered request rate" if load.model in ("rate", "conn_rate") else "")
        + "; "
        + READ_POINTS
        + "; higher is better"
    )
    chart = alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)
    return Chart(
        f"throughput-{load.name}",
        f"Throughput against load — {load.name}",
        finish(chart, data, f"Throughput against load ({load.name})", extra),
    )


def _simple(
    slug: str,
    title: str,
    y_title: str,
    fmt_: str,
    rows: list[dict[str, Any]],
    load: LoadData,
    data: ReportData,
    palette: Palette,
    extra: str,
    log_y: bool = False,
) -> Chart:
    chart = series(rows, palette, y_title, fmt_, log_y=log_y, x=x_axis(load)).properties(
        data=alt.Data(values=rows), width=WIDTH, height=HEIGHT
    )
    return Chart(
        f"{slug}-{load.name}",
        f"{title} — {load.name}",
        finish(chart, data, f"{title} ({load.name})", extra),
    )


def latency(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = []
    for pname, column in (
        ("p50", "latency_p50_us"),
        ("p90", "latency_p90_us"),
        ("p99", "latency_p99_us"),
    ):
        for r in metric_rows(load, column, scale=0.001):
            if not r["missing"]:
                rows.append({**r, "percentile": pname})
    kind = (
        "corrected latency: from each request's intended send time on the schedule to the last "
        "byte of its reply (time waiting for a connection or a reconnect included), every kind"
        if load.is_open
        else "latency: from sending a request to the last byte of its reply (closed loop: a "
        "connection sends its next request once the reply is in), every kind"
    )
    layer = series(rows, palette, "ms", ",.3f", log_y=True, x=x_axis(load))
    chart = (
        alt.layer(*layer.layer, data=alt.Data(values=rows))
        .properties(width=WIDTH // 2, height=HEIGHT)
        .facet(column=alt.Column("percentile:N", title=None, sort=["p50", "p90", "p99"]))
    )
    extra = (
        f"load {load.name}: {kind}; median over repeats of each repeat's percentile; "
        + READ_POINTS
        + "; lower is better, log scale"
    )
    title = "Corrected latency" if load.is_open else "Latency"
    return Chart(
        f"latency-{load.name}",
        f"{title} p50/p90/p99 — {load.name}",
        finish(chart, data, f"{title} p50 / p90 / p99 against load ({load.name})", extra),
    )


def errors(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = []
    for c in load.cells:
        classes, attempts = c.error_classes()
        if not c.repeats:
            continue
        nonzero = {k: v for k, v in classes.items() if v}
        for name, count in (nonzero or {"(no errors)": 0}).items():
            rows.append(
                {
                    **base_row(c),
                    "class": name,
                    "count": count,
                    "rate": count / attempts if attempts else 0.0,
                }
            )
    any_errors = any(r["count"] for r in rows)
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X("level:O", title=load.level_title),
            y=alt.Y("rate:Q", title="share of requests", stack=True, axis=alt.Axis(format="%")),
            color=alt.Color("class:N", title="error class"),
            tooltip=[
                alt.Tooltip("class:N"),
                alt.Tooltip("count:Q"),
                alt.Tooltip("rate:Q", format=".3%"),
                *TIP,
            ],
        )
        .properties(width=180, height=140)
        .facet(facet=alt.Facet("server:N", title=None), columns=3)
    )
    extra = (
        f"load {load.name}: errors by class, summed over repeats"
        if any_errors
        else f"load {load.name}: no request failed in any measured cell"
    )
    return Chart(
        f"errors-{load.name}",
        f"Errors by class — {load.name}",
        finish(chart, data, f"Error rate by class against load ({load.name})", extra),
    )


def memory(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = [r for r in metric_rows(load, "rss_peak_bytes", scale=1 / 2**20) if not r["missing"]]
    for r in rows:
        r["level_label"] = fmt.level(r["level"])
    labels = sorted({r["server"] for r in rows})
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X("server:N", title=None, sort=labels, axis=alt.Axis(labelAngle=-30)),
            xOffset=alt.XOffset("level_label:N", sort=[fmt.level(level) for level in load.levels]),
            y=alt.Y("high:Q", title="peak RSS of the process tree (MiB)"),
            color=alt.Color("server:N", scale=palette.scale(labels), legend=None),
            opacity=alt.Opacity(
                "level_label:N",
                title=load.level_field,
                sort=[fmt.level(level) for level in load.levels],
            ),
            tooltip=[
                alt.Tooltip("high:Q", title="peak MiB (max of repeats)", format=",.1f"),
                alt.Tooltip("value:Q", title="median of repeats' peaks", format=",.1f"),
                *TIP,
            ],
        )
        .properties(width=WIDTH, height=HEIGHT)
    )
    extra = (
        f"load {load.name}: peak RSS summed over the server's process tree (shared pages of "
        f"workers counted in each), highest over the repeats, one bar per {load.level_field} level"
    )
    return Chart(
        f"memory-{load.name}",
        f"Peak memory — {load.name}",
        finish(chart, data, f"Peak memory per server ({load.name})", extra),
    )


def cpu(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = metric_rows(load, "cpu_mean_pct")
    return _simple(
        "cpu",
        "CPU against load",
        "CPU % of one core",
        ",.0f",
        rows,
        load,
        data,
        palette,
        f"load {load.name}: mean CPU of the server's whole process tree, % of one core; "
        "100 per server CPU is all it had",
    )


def efficiency(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = metric_rows(load, "", values=lambda c: c.efficiency())
    return _simple(
        "efficiency",
        "Requests per CPU-second",
        "valid replies per CPU-second",
        ",.0f",
        rows,
        load,
        data,
        palette,
        f"load {load.name}: throughput / (mean CPU % / 100) of the server process tree; "
        "higher: the server does more with each CPU-second",
    )


def _timeline_rows(load: LoadData, data: ReportData) -> list[dict[str, Any]]:
    rows = []
    for c in load.cells:
        rep = c.representative()
        if rep is None:
            continue
        base = {**base_row(c), "repeat_id": rep.id}
        for point in rep.engine.timeline:
            rows.append(
                {**base, "t": point.t_s, "metric": "open connections", "y": point.open_connections}
            )
            # A second in which no request ended has no latency: null, drawn as a gap (never 0).
            for metric, value in (
                ("latency p50 (ms)", fmt.ms_of(point.p50_us)),
                ("latency p99 (ms)", fmt.ms_of(point.p99_us)),
            ):
                rows.append({**base, "t": point.t_s, "metric": metric, "y": value})
        for s in data.sample_rows.get(rep.id, []):
            for metric, value in (
                ("CPU % of one core", s.get("cpu_pct")),
                ("RSS (MiB)", None if s.get("rss_bytes") is None else s["rss_bytes"] / 2**20),
            ):
                if value is not None:
                    rows.append({**base, "t": s.get("t_s"), "metric": metric, "y": value})
    return rows


def timeline(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = _timeline_rows(load, data)
    labels = sorted({r["server"] for r in rows})
    metrics = [
        "open connections",
        "latency p50 (ms)",
        "latency p99 (ms)",
        "CPU % of one core",
        "RSS (MiB)",
    ]
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(invalid="break-paths-show-domains")  # a null second breaks the line
        .encode(
            x=alt.X("t:Q", title="seconds into the repeat"),
            y=alt.Y("y:Q", title=None),
            color=alt.Color("server:N", scale=palette.scale(labels), title="server"),
            strokeDash=alt.StrokeDash("level:N", title=load.level_field),
            tooltip=[
                alt.Tooltip("t:Q", title="s"),
                alt.Tooltip("y:Q", title="value"),
                alt.Tooltip("repeat_id:Q", title="repeat id"),
                *TIP,
            ],
        )
        .properties(width=WIDTH, height=110)
        .facet(row=alt.Row("metric:N", title=None, sort=metrics))
        .resolve_scale(y="independent")
    )
    extra = (
        f"load {load.name}: the median-throughput repeat of each cell; engine timeline "
        "(latency is corrected) and 10 Hz samples of the server process tree"
    )
    return Chart(
        f"timeline-{load.name}",
        f"Sessions over time — {load.name}",
        finish(
            chart, data, f"Open connections, latency, CPU and memory over time ({load.name})", extra
        ),
    )


# How to read a point of the series charts, the same marks as the tables' (⚠ is a diamond).
READ_POINTS = (
    "rules: min-max of repeats; circle: measured, diamond: disputed by a diagnosis (never "
    "ranked), triangle: load generator saturated, triangle down: contended (other work on the "
    "CPUs), square: worker deaths, cross: disqualified (never ranked; reasons in the tooltips)"
)


def charts(data: ReportData) -> list[Chart]:
    palette = Palette(data.labels())
    headline = framework_chart(data, palette)  # a frameworks study's: every framework at once
    out: list[Chart] = [headline] if headline is not None else []
    for load in data.loads:
        if load.model == "trace" and (traced := trace_chart(load, data, palette)) is not None:
            out.append(traced)
        if load.is_capacity:  # its own two charts: latency and knees, CPU per request
            continue
        makers = [throughput, latency, errors, memory, cpu, efficiency]
        if load.model == "sessions":
            makers.append(timeline)
        for make in makers:
            chart = make(load, data, palette)
            chart.load = load.name
            out.append(chart)
    return out + capacity_charts(data, palette) + scaling_charts(data, palette)
