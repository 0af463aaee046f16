"""Chart definitions (altair / Vega-Lite): one spec per chart serves both the HTML page and the PNG."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import altair as alt

from wsgibench.report import format as fmt
from wsgibench.report.data import BASELINE, CellData, LoadData, ReportData

# A fixed palette so a server keeps its colour in every chart of a report: Vega's tableau10, then
# ten hues none of the first ten is close to (the quick study alone draws twelve servers).
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b",
           "#ff9da6", "#9d755d", "#bab0ac", "#17becf", "#bcbd22", "#393b79", "#e7298a",
           "#00441b", "#8c2d04", "#6a3d9a", "#000080", "#808000", "#66c2a5")
BASELINE_COLOUR = "#555555"
STATUS_SHAPES = {"measured": "circle", "invalid": "triangle-up", "disqualified": "cross"}
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
        return alt.Scale(domain=labels, range=[self.colours[l] for l in labels])


def _top_down(rows: list[dict]) -> list[str]:
    """Servers in the order their lines end, highest first, so the legend reads like the chart."""
    last: dict[str, tuple[float, float]] = {}
    for r in rows:
        if r.get("missing"):
            continue
        key = (r["level"], r["value"])
        last[r["server"]] = max(last.get(r["server"], key), key)
    return sorted({r["server"] for r in rows}, key=lambda s: (-last.get(s, (0, 0))[1], s))


def _title(text: str, data: ReportData, extra: str | None = None) -> alt.TitleParams:
    lines = data.meta.caption() + ([part.strip() for part in extra.split(";")] if extra else [])
    return alt.TitleParams(text=text, subtitle=lines, anchor="start", subtitleColor="#555")


def _x(load: LoadData, field: str = "level") -> alt.X:
    levels = load.levels
    log = len(levels) > 1 and levels[0] > 0 and levels[-1] / levels[0] >= 10
    domain = [levels[0], levels[-1]] if len(levels) > 1 else None
    scale = (alt.Scale(type="log", domain=domain, nice=False) if log
             else alt.Scale(zero=False, nice=False, domain=domain) if domain else alt.Scale(zero=False))
    return alt.X(f"{field}:Q", title=load.level_title, scale=scale, axis=alt.Axis(values=levels))


def _base_row(c: CellData) -> dict[str, Any]:
    cell = c.cell
    return {
        "server": c.label, "name": cell.server, "level": cell.level, "status": cell.status,
        "reason": cell.reason or "", "notes": " | ".join(c.remarks),
        "cell_id": cell.id, "repeat_ids": fmt.ids(c.repeat_ids), "n": len(c.repeats),
    }


_TIP = [alt.Tooltip("server:N"), alt.Tooltip("level:Q", title="level"),
        alt.Tooltip("status:N"), alt.Tooltip("reason:N"), alt.Tooltip("notes:N"),
        alt.Tooltip("cell_id:Q", title="cell id"), alt.Tooltip("repeat_ids:N", title="repeat ids")]


def _metric_rows(load: LoadData, column: str, scale: float = 1.0, values=None) -> list[dict]:
    """One row per cell: median / min / max of a per-repeat metric; cells without numbers at 0."""
    rows = []
    for c in load.cells:
        vals = values(c) if values else c.values(column)
        row = _base_row(c)
        if vals:
            vals = sorted(v * scale for v in vals)
            mid = len(vals) // 2
            median = vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2
            row.update(value=median, low=vals[0], high=vals[-1], missing=False)
        elif c.cell.status == "disqualified":
            row.update(value=0.0, low=0.0, high=0.0, missing=True)  # marked on the axis
        else:
            continue  # unavailable / failed with nothing measured: listed in the table only
        rows.append(row)
    return rows


def _series(rows: list[dict], palette: Palette, y_title: str, value_format: str,
            log_y: bool = False, x: alt.X | None = None) -> alt.LayerChart:
    """Median lines with min-max rules per server, status-shaped points, reasons in tooltips."""
    colour = alt.Color("server:N", scale=palette.scale(_top_down(rows)), title="server")
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=True)
    tip = [alt.Tooltip("value:Q", title=y_title, format=value_format),
           alt.Tooltip("low:Q", title="min of repeats", format=value_format),
           alt.Tooltip("high:Q", title="max of repeats", format=value_format), *_TIP]
    base = alt.Chart().encode(x=x, color=colour)
    counted = alt.datum.status != "disqualified"
    line = base.mark_line(strokeWidth=2).encode(y=alt.Y("value:Q", title=y_title, scale=y_scale)) \
        .transform_filter(counted)
    spread = base.mark_rule(strokeWidth=1.5, opacity=0.6).encode(y="low:Q", y2="high:Q") \
        .transform_filter(counted)
    points = base.mark_point(size=70, filled=True, opacity=1).encode(
        y="value:Q",
        shape=alt.Shape("status:N", title="status",
                        scale=alt.Scale(domain=list(STATUS_SHAPES), range=list(STATUS_SHAPES.values()))),
        tooltip=tip)
    return alt.layer(line, spread, points)


def _finish(chart, data: ReportData, title: str, extra: str | None) -> dict:
    chart = chart.properties(title=_title(title, data, extra)) \
        .configure_view(stroke=None) \
        .configure_legend(orient="right", symbolOpacity=1)
    spec = chart.to_dict()
    spec.pop("$schema", None)  # no URL in the page, not even one nobody fetches
    return spec


def throughput(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = _metric_rows(load, "rps_ok")
    servers = [r for r in rows if r["name"] != BASELINE]
    ceiling = [r for r in rows if r["name"] == BASELINE and not r["missing"]]
    x = _x(load)
    layers = [_series(servers, palette, "valid replies/s", ",.0f", x=x).properties(
        data=alt.Data(values=servers), width=WIDTH, height=HEIGHT)]
    if ceiling:
        base = alt.Chart(alt.Data(values=ceiling)).encode(x=x)
        layers.append(base.mark_line(strokeDash=[6, 4], color=BASELINE_COLOUR, strokeWidth=2).encode(
            y=alt.Y("value:Q"),
            tooltip=[alt.Tooltip("value:Q", title="nginx ceiling req/s", format=",.0f"), *_TIP]))
        layers.append(base.mark_point(color=BASELINE_COLOUR, shape="diamond", size=60, filled=True)
                      .encode(y="value:Q",
                              tooltip=[alt.Tooltip("value:Q", title="nginx ceiling req/s",
                                                   format=",.0f"), *_TIP]))
        last = max(ceiling, key=lambda r: r["level"])
        layers.append(alt.Chart(alt.Data(values=[last])).mark_text(
            align="right", dy=-8, color=BASELINE_COLOUR, fontStyle="italic").encode(
            x=x, y="value:Q", text=alt.value("nginx: machine ceiling")))
    if load.model in ("rate", "conn_rate"):
        calls = float(load.config.get("calls", 1))
        offered = [{"level": l, "value": l * calls} for l in load.levels]
        layers.append(alt.Chart(alt.Data(values=offered)).mark_line(
            strokeDash=[2, 3], color="#999", strokeWidth=1).encode(
            x=x, y="value:Q", tooltip=[alt.Tooltip("value:Q", title="offered req/s", format=",.0f")]))
    extra = (f"load {load.name}: {load.describe()}; dashed: {BASELINE}, the machine's ceiling"
             + ("; dotted: the offered request rate" if load.model in ("rate", "conn_rate") else "")
             + "; "
             "rules: min-max of repeats, cross: disqualified (reason in the tooltip), "
             "triangle: load generator saturated")
    chart = alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)
    return Chart(f"throughput-{load.name}", f"Throughput against load — {load.name}",
                 _finish(chart, data, f"Throughput against load ({load.name})", extra))


def _simple(slug: str, title: str, y_title: str, fmt_: str, rows: list[dict], load: LoadData,
            data: ReportData, palette: Palette, extra: str, log_y: bool = False) -> Chart:
    chart = _series(rows, palette, y_title, fmt_, log_y=log_y, x=_x(load)).properties(
        data=alt.Data(values=rows), width=WIDTH, height=HEIGHT)
    return Chart(f"{slug}-{load.name}", f"{title} — {load.name}",
                 _finish(chart, data, f"{title} ({load.name})", extra))


def latency(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = []
    for pname, column in (("p50", "latency_p50_us"), ("p90", "latency_p90_us"),
                          ("p99", "latency_p99_us")):
        for r in _metric_rows(load, column, scale=0.001):
            if not r["missing"]:
                rows.append({**r, "percentile": pname})
    kind = ("corrected latency (from each request's intended send time)" if load.is_open
            else "latency (send to last byte)")
    layer = _series(rows, palette, "ms", ",.3f", log_y=True, x=_x(load))
    chart = alt.layer(*layer.layer, data=alt.Data(values=rows)).properties(
        width=WIDTH // 2, height=HEIGHT).facet(column=alt.Column("percentile:N", title=None,
                                                                 sort=["p50", "p90", "p99"]))
    extra = f"load {load.name}: {kind}; median over repeats of each repeat's percentile"
    title = "Corrected latency" if load.is_open else "Latency"
    return Chart(f"latency-{load.name}", f"{title} p50/p90/p99 — {load.name}",
                 _finish(chart, data, f"{title} p50 / p90 / p99 against load ({load.name})", extra))


def errors(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = []
    for c in load.cells:
        classes, attempts = c.error_classes()
        if not c.repeats:
            continue
        nonzero = {k: v for k, v in classes.items() if v}
        for name, count in (nonzero or {"(no errors)": 0}).items():
            rows.append({**_base_row(c), "class": name, "count": count,
                         "rate": count / attempts if attempts else 0.0})
    any_errors = any(r["count"] for r in rows)
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("level:O", title=load.level_title),
        y=alt.Y("rate:Q", title="share of requests", stack=True, axis=alt.Axis(format="%")),
        color=alt.Color("class:N", title="error class"),
        tooltip=[alt.Tooltip("class:N"), alt.Tooltip("count:Q"),
                 alt.Tooltip("rate:Q", format=".3%"), *_TIP],
    ).properties(width=180, height=140).facet(
        facet=alt.Facet("server:N", title=None), columns=3)
    extra = (f"load {load.name}: errors by class, summed over repeats"
             if any_errors else f"load {load.name}: no request failed in any measured cell")
    return Chart(f"errors-{load.name}", f"Errors by class — {load.name}",
                 _finish(chart, data, f"Error rate by class against load ({load.name})", extra))


def memory(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = [r for r in _metric_rows(load, "rss_peak_bytes", scale=1 / 2**20) if not r["missing"]]
    for r in rows:
        r["level_label"] = fmt.level(r["level"])
    labels = sorted({r["server"] for r in rows})
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("server:N", title=None, sort=labels, axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset("level_label:N", sort=[fmt.level(l) for l in load.levels]),
        y=alt.Y("high:Q", title="peak RSS of the process tree (MiB)"),
        color=alt.Color("server:N", scale=palette.scale(labels), legend=None),
        opacity=alt.Opacity("level_label:N", title=load.level_field,
                            sort=[fmt.level(l) for l in load.levels]),
        tooltip=[alt.Tooltip("high:Q", title="peak MiB (max of repeats)", format=",.1f"),
                 alt.Tooltip("value:Q", title="median of repeats' peaks", format=",.1f"), *_TIP],
    ).properties(width=WIDTH, height=HEIGHT)
    extra = f"load {load.name}: highest peak over the repeats, one bar per {load.level_field} level"
    return Chart(f"memory-{load.name}", f"Peak memory — {load.name}",
                 _finish(chart, data, f"Peak memory per server ({load.name})", extra))


def cpu(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = _metric_rows(load, "cpu_mean_pct")
    return _simple("cpu", "CPU against load", "CPU % of one core", ",.0f", rows, load, data,
                   palette, f"load {load.name}: mean CPU of the server's whole process tree")


def efficiency(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = _metric_rows(load, "", values=lambda c: c.efficiency())
    return _simple("efficiency", "Requests per CPU-second", "valid replies per CPU-second", ",.0f",
                   rows, load, data, palette,
                   f"load {load.name}: throughput / (mean CPU % / 100) of the server process tree")


def _timeline_rows(load: LoadData, data: ReportData) -> list[dict]:
    rows = []
    for c in load.cells:
        rep = c.representative()
        if rep is None:
            continue
        base = {**_base_row(c), "repeat_id": rep["id"]}
        for point in rep["engine"].timeline:
            for metric, value in (("open connections", point.open_connections),
                                  ("latency p50 (ms)", _ms(point.p50_us)),
                                  ("latency p99 (ms)", _ms(point.p99_us))):
                if value is not None:
                    rows.append({**base, "t": point.t_s, "metric": metric, "y": value})
        for s in data.sample_rows.get(rep["id"], []):
            for metric, value in (("CPU % of one core", s.get("cpu_pct")),
                                  ("RSS (MiB)", None if s.get("rss_bytes") is None
                                   else s["rss_bytes"] / 2**20)):
                if value is not None:
                    rows.append({**base, "t": s.get("t_s"), "metric": metric, "y": value})
    return rows


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000


def timeline(load: LoadData, data: ReportData, palette: Palette) -> Chart:
    rows = _timeline_rows(load, data)
    labels = sorted({r["server"] for r in rows})
    metrics = ["open connections", "latency p50 (ms)", "latency p99 (ms)", "CPU % of one core",
               "RSS (MiB)"]
    chart = alt.Chart(alt.Data(values=rows)).mark_line().encode(
        x=alt.X("t:Q", title="seconds into the repeat"),
        y=alt.Y("y:Q", title=None),
        color=alt.Color("server:N", scale=palette.scale(labels), title="server"),
        strokeDash=alt.StrokeDash("level:N", title=load.level_field),
        tooltip=[alt.Tooltip("t:Q", title="s"), alt.Tooltip("y:Q", title="value"),
                 alt.Tooltip("repeat_id:Q", title="repeat id"), *_TIP],
    ).properties(width=WIDTH, height=110).facet(
        row=alt.Row("metric:N", title=None, sort=metrics)).resolve_scale(y="independent")
    extra = (f"load {load.name}: the median-throughput repeat of each cell; engine timeline "
             "(latency is corrected) and 10 Hz samples of the server process tree")
    return Chart(f"timeline-{load.name}", f"Sessions over time — {load.name}",
                 _finish(chart, data, f"Open connections, latency, CPU and memory over time ({load.name})",
                         extra))


def charts(data: ReportData) -> list[Chart]:
    palette = Palette(data.labels())
    out: list[Chart] = []
    for load in data.loads:
        makers = [throughput, latency, errors, memory, cpu, efficiency]
        if load.model == "sessions":
            makers.append(timeline)
        for make in makers:
            chart = make(load, data, palette)
            chart.load = load.name
            out.append(chart)
    return out
