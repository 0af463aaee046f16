"""`wsgibench history --html FILE`: the timelines as one offline HTML page, one chart per server
(req/s of each of its cell keys run by run, the repeats' spread as a band, each change of level
marked), with the nginx ceiling of each run at the same load and level as a dashed line."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import altair as alt

from wsgibench.baseline import BASELINE
from wsgibench.report.vega import javascript
from wsgibench.results.history import Group, Timeline


def _rows(timeline: Timeline, by_version: bool) -> list[dict[str, Any]]:
    changed = {c.index for c in timeline.rps_changes}
    rows = []
    for i, point in enumerate(timeline.measured()):
        rows.append(
            {
                "run": i + 1,
                "label": (point.version or "?") if by_version else point.run.when,
                "key": timeline.series,
                "rps": point.rps_median,
                "low": min(point.rps),
                "high": max(point.rps),
                "change": i in changed and i > 0,
            }
        )
    return rows


def server_chart(
    server: str, timelines: list[Timeline], ceilings: list[Timeline], by_version: bool
) -> dict[str, Any]:
    """One server's timelines (and the nginx ceiling of the same loads and levels, dashed)."""
    rows = [r for t in timelines for r in _rows(t, by_version)]
    keys = {t.series for t in timelines}
    ceiling = [
        {**r, "key": f"nginx ceiling, {r['key']}"}
        for t in ceilings
        for r in _rows(t, by_version=False)
        if r["key"] in keys
    ]
    x = alt.X("run:O", title="run, by version" if by_version else "run, by time")
    base = alt.Chart(alt.Data(values=rows)).encode(x=x, color=alt.Color("key:N", title="load"))
    layers = [
        base.mark_area(opacity=0.2).encode(y="low:Q", y2="high:Q"),
        base.mark_line(point=True).encode(
            y=alt.Y("rps:Q", title="req/s (median of the repeats)"),
            tooltip=["label:N", "key:N", alt.Tooltip("rps:Q", format=",.0f")],
        ),
        base.transform_filter("datum.change")
        .mark_point(shape="diamond", size=160, filled=True)
        .encode(y="rps:Q"),  # fmt: skip
    ]
    if ceiling:
        layers.append(
            alt.Chart(alt.Data(values=ceiling))
            .mark_line(strokeDash=[6, 4], color="gray")
            .encode(x=x, y="rps:Q", detail="key:N", tooltip=["key:N", "rps:Q"])
        )
    chart = alt.layer(*layers).properties(
        title=f"{server}: req/s run by run", width=640, height=280
    )
    return chart.to_dict()


def history_html(groups: list[Group], by_version: bool) -> str:
    """The page: per group of comparable runs, one chart per server."""
    specs: dict[str, dict[str, Any]] = {}
    parts = []
    for g, group in enumerate(groups):
        parts.append(f"<h2>{html.escape(group.label)}: {len(group.runs)} run(s)</h2>")
        ceilings = [t for t in group.timelines if t.server == BASELINE]
        servers = sorted({t.server for t in group.timelines if t.server != BASELINE})
        for server in servers:
            mine = [t for t in group.timelines if t.server == server and t.measured()]
            if not mine:
                continue
            slug = f"g{g}-{len(specs)}"
            specs[slug] = server_chart(server, mine, ceilings, by_version)
            parts.append(f'<div class=chart id="chart-{slug}"></div>')
    specs_json = json.dumps(specs).replace("<", "\\u003c")
    script = (
        "var s=JSON.parse(document.getElementById('specs').textContent);"
        "Promise.all(Object.keys(s).map(function(k){return window.vegaEmbed("
        "document.getElementById('chart-'+k),s[k],{actions:false,renderer:'svg'});}))"
        ".then(function(){document.body.setAttribute('data-charts-done','true');});"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>wsgibench history</title></head><body><h1>wsgibench history</h1>"
        f"{''.join(parts)}"
        f'<script type="application/json" id="specs">{specs_json}</script>'
        f"<script>{javascript()}</script><script>{script}</script></body></html>"
    )


def write_history_html(groups: list[Group], by_version: bool, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(history_html(groups, by_version))
    return path
