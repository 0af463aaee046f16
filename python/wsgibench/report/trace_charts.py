"""A replay's chart: the traffic's rate second by second (the requests the log has due in each,
at the speed) above each server's p99 in the same seconds, so a burst in the log shows as a burst
in the rate and, where a server falls behind, in its p99. One chart per replay load; a capacity
search's shows each server's capacity step (the highest speed that met the budget)."""

from __future__ import annotations

from typing import Any

import altair as alt

from wsgibench.report import format as fmt
from wsgibench.report.chart_parts import WIDTH, Chart, Palette, base_row, finish
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.kind_figures import trace_seconds

RATE = "requests due per second"
P99 = "p99 per second (ms)"
TRAFFIC = "the log's traffic"
TRAFFIC_COLOUR = "#888888"


def _cells(load: LoadData, data: ReportData) -> list[CellData]:
    if not load.is_capacity:
        return load.cells
    proofs = {c.result.proof for c in data.capacities_of(load.name)}
    return [c for c in load.cells if c.cell.id in proofs]


def rows(load: LoadData, data: ReportData) -> list[dict[str, Any]]:
    """Per cell, its median-throughput repeat's seconds: its p99, and once per level the rate."""
    out: list[dict[str, Any]] = []
    rated: set[float] = set()
    for c in _cells(load, data):
        rep = c.representative()
        seconds = trace_seconds(rep.engine) if rep is not None else []
        if rep is None or not seconds:
            continue
        base = {**base_row(c), "repeat_id": rep.id, "level": fmt.level(c.cell.level)}
        for s in seconds:  # a second with nothing ended: null, drawn as a gap (never 0)
            y = None if s.p99_us is None else s.p99_us / 1000
            out.append({**base, "t": s.t_s, "metric": P99, "y": y})
        if c.cell.level not in rated:
            rated.add(c.cell.level)
            traffic = {**base, "server": TRAFFIC, "name": TRAFFIC}
            out += [{**traffic, "t": s.t_s, "metric": RATE, "y": s.arrivals} for s in seconds]
    return out


def trace_chart(load: LoadData, data: ReportData, palette: Palette) -> Chart | None:
    found = rows(load, data)
    if not found:
        return None
    labels = sorted({r["server"] for r in found} - {TRAFFIC})
    colours = alt.Scale(
        domain=[TRAFFIC, *labels], range=[TRAFFIC_COLOUR, *(palette.colours[x] for x in labels)]
    )
    chart = (
        alt.Chart(alt.Data(values=found))
        .mark_line(interpolate="step-after", invalid="break-paths-show-domains")
        .encode(
            x=alt.X("t:Q", title="seconds into the repeat"),
            y=alt.Y("y:Q", title=None),
            color=alt.Color("server:N", scale=colours, title="series"),
            strokeDash=alt.StrokeDash("level:N", title=load.level_field),
            tooltip=[
                alt.Tooltip("t:Q", title="second"),
                alt.Tooltip("y:Q", title="value", format=",.3~f"),
                alt.Tooltip("server:N"),
                alt.Tooltip("level:N", title=load.level_field),
                alt.Tooltip("repeat_id:Q", title="repeat id"),
            ],
        )
        .properties(width=WIDTH, height=150)
        .facet(row=alt.Row("metric:N", title=None, sort=[RATE, P99]))
        .resolve_scale(y="independent")
    )
    which = "each server's capacity step" if load.is_capacity else "each cell"
    extra = (
        f"load {load.name}: the median-throughput repeat of {which}; top: the requests the log "
        "has due in each second at the speed; below: the p99 of the replies completed in that "
        "second (corrected latency)"
    )
    return Chart(
        f"trace-{load.name}",
        f"The log's rate and each server's p99 over time — {load.name}",
        finish(chart, data, f"Traffic and p99 over time ({load.name})", extra),
        load=load.name,
    )
