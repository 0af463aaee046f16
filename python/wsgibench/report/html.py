"""The self-contained HTML report: summary tables, every chart, all scripts inlined; it never touches the network."""

from __future__ import annotations

import html
import json

from wsgibench.baseline import BASELINE
from wsgibench.report import capacity, frameworks, kinds, quoted
from wsgibench.report import format as fmt
from wsgibench.report.chart_parts import Chart
from wsgibench.report.data import ReportData
from wsgibench.report.findings import findings
from wsgibench.report.seed import against_seed, note
from wsgibench.report.table import COLUMNS, LoadTable, ServerRow
from wsgibench.report.vega import javascript, versions
from wsgibench.results.summary import layout_text, load_hosts_text

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1300px; color: #222; padding: 0 1em; }
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


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _caption(data: ReportData, what: str) -> str:
    """A table's caption: what it is (the study, machine and versions are said once, above)."""
    return f"<caption><b>{_e(what)}</b></caption>"


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


def _against_seed(data: ReportData) -> str:
    section = against_seed(data)
    if section is None:
        return ""
    seed = section.seed
    head = "".join(
        f"<th>{h}</th>" for h in ("claim", "the seed says", "the seed", "here", "verdict", "why")
    )
    rows = "".join(
        f"<tr><td class=l>{_e(v.claim.what)}"
        + (f"<br><small>{_e(note(v))}</small>" if note(v) else "")
        + f"</td><td class=l>{_e(v.claim.quoted)}</td>"
        f"<td>{_e(v.theirs)}</td><td class=l>{_e(v.ours)}</td>"
        f"<td class=l><b>{_e(v.verdict)}</b></td><td class=l>{_e(v.sentence)}</td></tr>"
        for v in section.verdicts
    )
    apart = "".join(f"<li>{_e(d)}</li>" for d in section.deviations)
    releases = "".join(f"<li>{_e(line)}</li>" for line in section.releases)
    unjudged = "".join(f"<li>line {n.line}: {_e(n.reason)}</li>" for n in section.not_claimed)
    return (
        f"<h2 id=against-seed>Against the seed</h2><p class=meta>seed {_e(seed.seed)} "
        f"({_e(seed.file)}): {_e(seed.title)}. {_e(section.tally())}; errors counted as "
        f"{_e(seed.counting)} counted them where a claim is about errors; the rules: "
        "docs/seed-verdicts.md</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        + (
            f"<p>What the seed states that no claim here judges, and why:</p><ul>{unjudged}</ul>"
            if unjudged
            else ""
        )
        + (f"<p>The seed's releases beside today's:</p><ul>{releases}</ul>" if releases else "")
        + (
            f"<p>What this study does differently from the seed:</p><ul>{apart}</ul>"
            if apart
            else ""
        )
    )


def _frameworks(data: ReportData) -> str:
    """Per framework: its servers ranked, each one's share of its own pong ceiling."""
    found = frameworks.sections(data)
    if not found:
        return ""
    parts = [
        "<h2>Frameworks on servers</h2><p class=meta>Each framework's servers, best first; "
        "the ceiling is the same server serving pong at the same level, so the share says how "
        "much of each request the framework takes.</p>"
    ]
    for sec in found:
        rows = "".join(
            f"<tr><td>{i}</td><td>{_e(r.server)}</td><td>{_e(r.interface)}</td>"
            f"<td class=num>{fmt.rps(r.rps)}</td>"
            f"<td class=num>{fmt.rps(r.low)}–{fmt.rps(r.high)}</td>"
            f"<td class=num>{fmt.rps(r.ceiling) if r.ceiling else '-'}</td>"
            f"<td class=num>{f'{r.share:.0%}' if r.share is not None else '-'}</td>"
            f"<td class=num>{f'{r.reply_bytes:,.0f}' if r.reply_bytes else '-'}</td></tr>"
            for i, r in enumerate(sec.rows, 1)
        )
        parts.append(
            f"<h3>{_e(sec.framework)} — {_e(sec.level_field)} {sec.level:g}</h3>"
            "<table><tr><th>#</th><th>server</th><th>interface</th><th>req/s</th>"
            "<th>repeats</th><th>pong ceiling</th><th>share</th><th>bytes/reply</th></tr>"
            f"{rows}</table><p>{_e(sec.finding)}</p>"
        )
    return "".join(parts)


def _tuning(data: ReportData) -> str:
    """A tuning's trials ranked (the last round first) and the winner's command line."""
    record = data.tuning
    if record is None:
        return ""
    rows = "".join(
        f"<tr><td>{i}</td><td>{_e(t.setting)}</td><td>{t.round}</td>"
        f"<td class=num>{_e(t.shown_capacity)}</td>"
        f"<td class=num>{f'{t.above:,.0f}' if t.above else '?'}</td>"
        f"<td class=num>{f'{t.cpu_us:,.0f}' if t.cpu_us else '-'}</td><td>{_e(t.note)}</td></tr>"
        for i, t in enumerate(record.ranked(), 1)
    )
    best = (
        f"<p>Best: {_e(record.winner)}: <code>{_e(record.command)}</code></p>"
        if record.winner
        else "<p>No setting met the budget.</p>"
    )
    trends = "".join(f"<p>{_e(line)}</p>" for line in record.trends)
    return (
        f"<h2>Tuning {_e(record.label)} within {_e(record.budget)}</h2>"
        "<table><tr><th>#</th><th>setting</th><th>round</th><th>capacity req/s</th>"
        f"<th>missed at</th><th>CPU µs/req</th><th>note</th></tr>{rows}</table>{trends}{best}"
        f"<p class=meta>Stopped: {_e(record.stopped)}; studies "
        f"{', '.join(map(str, record.studies))} hold the trials.</p>"
    )


def _findings(data: ReportData) -> str:
    items = "".join(f"<li>{_e(line)}</li>" for line in findings(data))
    return f"<h2 id=findings>Findings</h2><ul class=findings>{items}</ul>" if items else ""


def _environment(data: ReportData) -> str:
    env = data.meta.environment
    rows = [
        (
            "study",
            f"#{data.meta.id} {data.meta.name} ({data.meta.status}), started {data.meta.date}",
        ),
        (
            "CPU",
            f"{env.get('cpu_model')} × {env.get('cpu_count')} (usable {env.get('cpus_usable', '?')})",
        ),
        ("memory", fmt.mib(env.get("memory_bytes")) + " MiB" if env.get("memory_bytes") else "?"),
        ("kernel / OS", f"{env.get('kernel')} / {env.get('os')}"),
        ("CPU layout", layout_text(env)),
        ("load hosts", load_hosts_text(env) or "this machine's engine"),
        ("engine", json.dumps(env.get("engine", {}))),
        ("wsgibench", f"{env.get('wsgibench_version')} (git {env.get('git_commit') or '?'})"),
        ("python", env.get("python")),
        ("nginx", env.get("nginx_version")),
        ("sysctls", ", ".join(f"{k}={v}" for k, v in (env.get("sysctls") or {}).items())),
        ("charts", ", ".join(f"{k} {v}" for k, v in versions().items())),
    ]
    body = "".join(
        f"<tr><th class=l>{_e(k)}</th><td class=l>{_e(v if v is not None else '?')}</td></tr>"
        for k, v in rows
    )
    return f"<table>{_caption(data, 'Environment')}{body}</table>"


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
    winners = "".join(
        f"<li><b>{_e(w.metric.title.replace('reference load', f'{load.level_field} {ref}'))}</b>: "
        f"{_e(', '.join(w.labels))} ({_e(w.value)})"
        + (f" — {_e(w.tie_text())}" if w.tie_text() else "")
        + _e(w.unranked_text())
        + "</li>"
        for w in table.winners
    )
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
    across = [c for c in charts if not c.load]  # charts of several loads (scaling)
    if across:
        sections.append("<h2>Across loads</h2>")
        sections += [_chart_box(c) for c in across]
    return sections


def render(data: ReportData, tables: list[LoadTable], charts: list[Chart]) -> str:
    specs = {c.slug: c.spec for c in charts}
    # "<" escaped so no string inside the JSON can close the script element.
    specs_json = json.dumps(specs).replace("<", "\\u003c")
    sections = _sections(data, tables, charts)
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
{_findings(data)}
{_against_seed(data)}
{_frameworks(data)}
{_tuning(data)}
{_index(data)}
{_environment(data)}
{"".join(sections)}
{quoted.html_section(data)}
{_cell_details(data)}
<p class=meta>Generated by wsgibench from the results store; this file works offline.</p>
<script type="application/json" id="wsgibench-specs">{specs_json}</script>
<script>{javascript()}</script>
<script>{script}</script>
</body></html>
"""
