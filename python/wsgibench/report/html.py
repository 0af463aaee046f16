"""The self-contained HTML report: summary tables, every chart, all scripts inlined; it never touches the network."""

from __future__ import annotations

import re

from wsgibench.baseline import BASELINE
from wsgibench.report import capacity, kinds, quoted
from wsgibench.report import format as fmt
from wsgibench.report.chart_parts import Chart
from wsgibench.report.data import ReportData
from wsgibench.report.findings import findings
from wsgibench.report.framework_charts import SLUG as FRAMEWORKS
from wsgibench.report.html_sections import (
    against_the_seed,
    as_json,
    caption,
    e,
    environment,
    framework_sections,
    tuning,
)
from wsgibench.report.table import COLUMNS, LoadTable, ServerRow, untested_notes
from wsgibench.report.vega import javascript

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1300px; color: #222; padding: 0 1em; }
p, li, caption, td, th { overflow-wrap: break-word; } code { overflow-wrap: anywhere; }
.wide { max-width: 100%; overflow-x: auto; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
.meta { color: #555; } .meta code { font-size: .95em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; vertical-align: top; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
caption { caption-side: top; text-align: left; color: #555; padding-bottom: .4em; }
.win { font-weight: bold; background: #eaf6e8; } .bad { color: #b00; } .ids { color: #777; font-size: 11px; }
.chart-box { display: block; margin: 1.2em 0 2em; min-height: 120px; overflow-x: auto; } .chart-error { color: #b00; }
details { margin: .5em 0; }
pre.quoted { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; padding: .5em; }
"""


_e = e


def _caption(data: ReportData, what: str) -> str:
    return caption(what)


def _index(data: ReportData) -> str:
    """The store's other studies, when it holds several, and how to render each."""
    if len(data.studies) < 2:
        return ""
    items = "".join(
        f"<li>#{sid} {_e(name)} ({_e(status)}, {_e(date)})"
        + (
            " — this report"
            if sid == data.meta.id
            else f" — <code>wsgibench report STORE --study {sid} --out DIR</code>"
        )
        + "</li>"
        for sid, name, status, date in data.studies
    )
    return f"<details><summary>Studies in this store ({len(data.studies)})</summary><ul>{items}</ul></details>"


def _findings(data: ReportData) -> str:
    items = "".join(f"<li>{_e(line)}</li>" for line in findings(data))
    return f"<h2 id=findings>Findings</h2><ul class=findings>{items}</ul>" if items else ""


def _entry_cell(table: LoadTable, row: ServerRow, key: str) -> str:
    e = row.entries.get(key)
    metric = next(m for m in COLUMNS if m.key == key)
    if e is None:
        return "<td>-</td>"
    won = (
        any(w.metric.key == key and row.label in w.labels for w in table.winners)
        and row.server != BASELINE
    )
    spread = f"{metric.text(e.low)}–{metric.text(e.high)}"
    where = f"@{fmt.level(e.level)}" if key == "throughput" else ""
    title = (
        (f"median of {len(e.samples)} repeats" if len(e.samples) > 1 else "one repeat")
        + f", min-max {spread}; cell {e.cell_id}, "
        f"repeats {fmt.ids(e.repeat_ids)}" + (f"; not ranked: {e.disputed}" if e.disputed else "")
    )
    mark = " <span class=bad>⚠</span>" if e.disputed else ""
    return (
        f'<td class="{"win" if won else ""}" title="{_e(title)}">{_e(metric.text(e.median))}'
        f"{_e(where)}{mark}<br><span class=ids>{_e(spread)}</span></td>"
    )


def summary_table(data: ReportData, table: LoadTable) -> str:
    load = table.load
    ref = fmt.level(table.reference_level) if table.reference_level is not None else "-"
    head = (
        "<tr><th class=l>server</th><th class=l>interface</th><th class=l>flavour</th>"
        "<th class=l>version</th>"
        + "".join(
            f"<th>{_e(m.title.replace('reference load', f'{load.level_field} {ref}'))}</th>"
            for m in COLUMNS
        )
        + "<th class=l>behaviour</th><th class=l>status</th><th class=l>cell ids</th></tr>"
    )
    body = []
    for row in table.rows:
        status = "ok" if row.status == "ok" else f"<span class=bad>{_e(row.status)}</span>"
        body.append(
            f"<tr><td class=l>{_e(row.server)}</td><td class=l>{_e(row.interface or '-')}</td>"
            f"<td class=l>{_e(row.flavour or '-')}</td>"
            f"<td class=l>{_e(row.version or '-')}</td>"
            + "".join(_entry_cell(table, row, m.key) for m in COLUMNS)
            + f"<td class=l>{_e(fmt.caps(row.capabilities))}</td><td class=l>{status}</td>"
            f"<td class=l><span class=ids>{_e(fmt.ids(row.cell_ids))}</span></td></tr>"
        )
    what = (
        f"Summary — load {load.name} ({load.describe()}); reference load: "
        f"{load.level_field} {ref}; value = median of repeats, below it min–max; "
        "hover a number for its cell and repeat ids; the wrk and httperf columns are the errors "
        "those tools would have counted on the same requests (docs/measurement.md), never ranked"
    )
    notes = untested_notes(table.winners)
    winners = "".join(
        f"<li><b>{_e(w.metric.title.replace('reference load', f'{load.level_field} {ref}'))}</b>: "
        f"{_e(', '.join(w.labels))} ({_e(w.value)})"
        + (f" — {_e(said)}" if (said := w.tie_text(notes.get(w.untested, ""))) else "")
        + _e(w.unranked_text())
        + "</li>"
        for w in table.winners
    )
    winners += "".join(f"<li class=meta>{_e(mark)} {_e(why)}</li>" for why, mark in notes.items())
    return (
        f"<table>{_caption(data, what)}<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
        f"<p>Winners per metric (the nginx baseline competes with none):</p><ul>{winners}</ul>"
    )


def _cell_details(data: ReportData) -> str:
    rows = []
    for load in data.loads:
        for c in sorted(load.cells, key=lambda c: (c.cell.server, c.cell.level)):
            cell = c.cell
            rows.append(
                f"<tr><td>{cell.id}</td><td class=l>{_e(cell.server)}</td><td class=l>{_e(load.name)}</td>"
                f"<td>{_e(fmt.level(cell.level))}</td><td class=l>{_e(cell.status)}</td>"
                f"<td class=l>{_e(fmt.ids(c.repeat_ids))}</td>"
                f"<td>{_e(fmt.rps(c.median('rps_ok')))}</td>"
                f"<td class=l>{_e('; '.join(filter(None, [cell.reason or '', *c.remarks])))}</td></tr>"
            )
    head = (
        "<tr><th>cell id</th><th class=l>server</th><th class=l>load</th><th>level</th>"
        "<th class=l>status</th><th class=l>repeat ids</th><th>req/s (median)</th>"
        "<th class=l>reason / notes</th></tr>"
    )
    return (
        f"<details><summary>Every cell with its raw record ids</summary><table>"
        f"{_caption(data, 'Cells')}{head}{''.join(rows)}</table></details>"
    )


def _framework_chart(charts: list[Chart]) -> str:
    return "".join(_chart_box(c) for c in charts if c.slug == FRAMEWORKS)


def _scrolled(body: str) -> str:
    """Every table in a box of the page's width that scrolls sideways when the table is wider."""
    return re.sub(
        r"</table>", "</table></div>", re.sub(r"<table\b", "<div class=wide><table", body)
    )


def _chart_box(c: Chart) -> str:
    return (
        f'<div class=chart-box><div class=chart id="chart-{_e(c.slug)}" '
        f'data-chart="{_e(c.slug)}" aria-label="{_e(c.title)}"></div></div>'
    )


def _sections(data: ReportData, tables: list[LoadTable], charts: list[Chart]) -> list[str]:
    """Each load's section (its table or capacity, its kinds, its charts), then those across."""
    sections = []
    by_load = {t.load.name: t for t in tables}
    for load in data.loads:
        if load.is_capacity:  # its steps are no levels of a sweep: a section of its own
            sections.append(capacity.html_section(data, load))
        elif load.name in by_load:
            sections.append(
                f"<h2>Load “{_e(load.name)}”</h2>{summary_table(data, by_load[load.name])}"
            )
        else:
            continue
        sections.append(kinds.html_section(load))
        sections += [_chart_box(c) for c in charts if c.load == load.name]
    # charts of several loads (scaling); the frameworks' is in their section
    across = [c for c in charts if not c.load and c.slug != FRAMEWORKS]
    if across:
        sections.append("<h2>Across loads</h2>")
        sections += [_chart_box(c) for c in across]
    return sections


def render(data: ReportData, tables: list[LoadTable], charts: list[Chart]) -> str:
    specs_json = as_json({c.slug: c.spec for c in charts})
    sections = _sections(data, tables, charts)
    body = _scrolled(
        _findings(data)
        + against_the_seed(data)
        + framework_sections(data, _framework_chart(charts))
        + tuning(data)
        + _index(data)
        + environment(data)
        + "".join(sections)
        + quoted.html_section(data)
        + _cell_details(data)
    )
    script = """
(function () {
  var specs = JSON.parse(document.getElementById('wsgibench-specs').textContent);
  var pending = Object.keys(specs).map(function (slug) {
    var el = document.getElementById('chart-' + slug);
    return window.vegaEmbed(el, specs[slug], {actions: false, renderer: 'svg'})
      .then(function () { el.setAttribute('data-rendered', 'true'); })
      .catch(function (err) {
        el.innerHTML = '<p class="chart-error">chart failed: ' + String(err) + '</p>';
        console.error('chart ' + slug + ' failed: ' + err);
      });
  });
  Promise.all(pending).then(function () { document.body.setAttribute('data-charts-done', 'true'); });
})();
"""
    title = f"wsgibench — {data.meta.name} (study #{data.meta.id})"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{_e(title)}</title>
<style>{_CSS}</style>
</head><body>
<h1>{_e(title)}</h1>
<p class=meta>{_e(data.meta.config.get("description", ""))}</p>
<p class="meta as-run">{_e(data.meta.as_run())}</p>
{body}
<p class=meta>Generated by wsgibench from the results store; this file works offline.</p>
<script type="application/json" id="wsgibench-specs">{specs_json}</script>
<script>{javascript()}</script>
<script>{script}</script>
</body></html>
"""
