"""The scaling charts (seed 002): req/s against the server's CPUs beside the ideal line from each
server's 1-CPU point, and req/s per CPU-second of the server, from the loads of a scaling study."""

from __future__ import annotations

import statistics
from typing import Any

import altair as alt

from wsgibench.report.chart_parts import HEIGHT, TIP, WIDTH, Chart, Palette, base_row, finish
from wsgibench.report.data import CellData, ReportData
from wsgibench.results.verdict import CellStatus


def _server_cpus(c: CellData) -> int | None:
    """The server's CPU count of a scaling cell (None for a cell of an ordinary load)."""
    layout = (c.cell.isolation or {}).get("layout") or {}
    return len(layout["server_cpus"]) if layout.get("policy") == "scaling" else None


def _rows(data: ReportData) -> list[dict[str, Any]]:
    rows = []
    for load in data.loads:
        for c in load.cells:
            cpus, rps = _server_cpus(c), c.median("rps_ok")
            if cpus is None or rps is None or c.cell.status == CellStatus.DISQUALIFIED:
                continue
            per_cpu = c.efficiency()
            rows.append(
                {
                    **base_row(c),
                    "cpus": cpus,
                    "value": rps,
                    "kind": "measured",
                    "per_cpu_s": statistics.median(per_cpu) if per_cpu else None,
                }
            )
    # the ideal line from a clean 1-CPU number only (a contended or invalid one is no base)
    ones = {
        r["server"]: r["value"]
        for r in rows
        if r["cpus"] == 1 and r.get("status") == CellStatus.MEASURED.value
    }
    ideal = [
        {**r, "value": ones[r["server"]] * r["cpus"], "kind": "ideal (1-CPU point x N)"}
        for r in rows
        if r["server"] in ones
    ]
    return rows + ideal


def scaling_charts(data: ReportData, palette: Palette) -> list[Chart]:
    rows = _rows(data)
    if not rows:
        return []
    colour = alt.Color("server:N", scale=palette.scale(sorted({r["server"] for r in rows})))
    x = alt.X("cpus:Q", title="server CPUs", scale=alt.Scale(zero=False, nice=False))
    base = alt.Chart(alt.Data(values=rows)).encode(x=x, color=colour)
    measured = base.transform_filter(alt.datum.kind == "measured")
    lines = measured.mark_line(point=True).encode(
        y=alt.Y("value:Q", title="valid replies/s"), tooltip=[*TIP, "value:Q"]
    )
    ideal = (
        base.transform_filter(alt.datum.kind != "measured")
        .mark_line(strokeDash=[4, 4], opacity=0.6)
        .encode(y="value:Q")
    )
    caption = (
        "solid: the median req/s at each server CPU count; dashed: the ideal, each "
        "server's 1-CPU req/s times the CPUs; the gap is what adding CPUs did not give"
    )
    throughput = alt.layer(lines, ideal).properties(width=WIDTH, height=HEIGHT)
    per_cpu = (
        measured.mark_line(point=True)
        .encode(
            y=alt.Y("per_cpu_s:Q", title="valid replies per server CPU-second"),
            tooltip=[*TIP, "per_cpu_s:Q"],
        )
        .properties(width=WIDTH, height=HEIGHT)
    )
    return [
        Chart(
            "scaling",
            "Scaling with server CPUs",
            finish(throughput, data, "Throughput against server CPUs", caption),
        ),
        Chart(
            "scaling-efficiency",
            "Requests per CPU-second against server CPUs",
            finish(
                per_cpu,
                data,
                "Requests per server CPU-second against server CPUs",
                "flat: each CPU adds as much as the first; falling: each CPU adds less",
            ),
        ),
    ]
